"""Gymnasium envs, registered as ``rlsched/<Name>-v0`` when :mod:`rlsched` is imported.

Every env subclasses :class:`~rlsched.envs.base.RlschedEnv` (the env contract: metrics spec,
masks, invalid actions, argument names; see :mod:`rlsched.envs.base`).
``rlsched/ServerlessPlacement-v0`` also has a batched implementation, registered as its
``vector_entry_point``: ``gym.make_vec("rlsched/ServerlessPlacement-v0", num_envs=8)`` builds
:class:`~rlsched.vector.serverless_placement.ServerlessPlacementVectorEnv`.
"""

from gymnasium.envs.registration import register, registry

from rlsched.envs.base import Metric, RlschedEnv
from rlsched.envs.kube_scheduling import KubeSchedulingEnv
from rlsched.envs.llm_autoscaling import LLMAutoscalingEnv
from rlsched.envs.pod_rebalancing import PodRebalancingEnv
from rlsched.envs.serverless_placement import ServerlessPlacementEnv
from rlsched.envs.vm_placement import VMPlacementEnv
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

#: Env id -> its batched vector env (Gymnasium's ``vector_entry_point``); a string, so that
#: importing the envs does not import :mod:`rlsched.vector` (the layer above).
VECTOR_ENTRY_POINTS: dict[str, str] = {
    "rlsched/ServerlessPlacement-v0": (
        "rlsched.vector.serverless_placement:ServerlessPlacementVectorEnv"
    ),
}

for _id, _entry in ENV_IDS.items():
    if _id not in registry:
        register(id=_id, entry_point=_entry, vector_entry_point=VECTOR_ENTRY_POINTS.get(_id))

__all__ = [
    "ENV_IDS",
    "VECTOR_ENTRY_POINTS",
    "KubeSchedulingEnv",
    "LLMAutoscalingEnv",
    "Metric",
    "PodRebalancingEnv",
    "RlschedEnv",
    "ServerlessPlacementEnv",
    "VMPlacementEnv",
    "WorkflowOffloadingEnv",
]
