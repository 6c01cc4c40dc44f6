"""Gymnasium envs, registered as ``rlsched/<Name>-v0`` when :mod:`rlsched` is imported."""

from gymnasium.envs.registration import register, registry

from rlsched.envs.kube_scheduling import KubeSchedulingEnv
from rlsched.envs.serverless_placement import ServerlessPlacementEnv
from rlsched.envs.workflow_offloading import WorkflowOffloadingEnv

#: Every env this package registers: id -> entry point. Tests parametrise over this.
ENV_IDS: dict[str, str] = {
    "rlsched/ServerlessPlacement-v0": "rlsched.envs.serverless_placement:ServerlessPlacementEnv",
    "rlsched/KubeScheduling-v0": "rlsched.envs.kube_scheduling:KubeSchedulingEnv",
    "rlsched/WorkflowOffloading-v0": "rlsched.envs.workflow_offloading:WorkflowOffloadingEnv",
    "rlsched/VMPlacement-v0": "rlsched.envs.vm_placement:VMPlacementEnv",
    "rlsched/PodRebalancing-v0": "rlsched.envs.pod_rebalancing:PodRebalancingEnv",
    "rlsched/LLMAutoscaling-v0": "rlsched.envs.llm_autoscaling:LLMAutoscalingEnv",
}

for _id, _entry in ENV_IDS.items():
    if _id not in registry:
        register(id=_id, entry_point=_entry)

__all__ = ["ENV_IDS", "KubeSchedulingEnv", "ServerlessPlacementEnv", "WorkflowOffloadingEnv"]
