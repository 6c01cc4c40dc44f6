"""LLM serving: a fast trace-driven simulator of disaggregated (Splitwise-style) inference with
a scaling manager (numpy only; the domain layer, beside :mod:`rlsched.core.vm` and
:mod:`rlsched.core.offloading`).

- :mod:`rlsched.core.llm.trace`: :class:`LLMRequests` (the data layer's ``azure-llm:`` loader
  builds it; :func:`rlsched.data.azure_llm.load_requests` loads a name or a file);
- :mod:`rlsched.core.llm.perf_model`: iteration latency from Splitwise's measured profile;
- :mod:`rlsched.core.llm.cluster`: server SKUs, models and KV sizes, instances;
- :mod:`rlsched.core.llm.scaling`: :class:`StartState` (YAML), :class:`ScalingManager` and the
  :class:`ClusterControl` interface it drives the simulator through;
- :mod:`rlsched.core.llm.slo`: slowdown SLOs against an unloaded run;
- :mod:`rlsched.core.llm.sizing`: the sizing rule, cluster cost and busy fractions;
- :mod:`rlsched.core.llm.simulator`: :class:`LLMSimulator`.

The env adapter is :mod:`rlsched.envs.llm_autoscaling` (with :mod:`rlsched.envs.llm_rl`), the
baselines :mod:`rlsched.policies.llm`, the runner :mod:`rlsched.llm_runner` and the figure
:mod:`rlsched.report.llm_figures`. See ``docs/llm_autoscaling.md``.
"""

from rlsched.core.llm.cluster import (
    SKU,
    SKUS,
    Instance,
    InstanceConfig,
    InstanceState,
    ModelSpec,
    Server,
)
from rlsched.core.llm.perf_model import PerfModel
from rlsched.core.llm.scaling import ClusterControl, ScalingManager, StartState
from rlsched.core.llm.simulator import LLMSimulator
from rlsched.core.llm.slo import SLOConfig
from rlsched.core.llm.trace import LLMRequests

__all__ = [
    "SKU",
    "SKUS",
    "ClusterControl",
    "Instance",
    "InstanceConfig",
    "InstanceState",
    "LLMRequests",
    "LLMSimulator",
    "ModelSpec",
    "PerfModel",
    "SLOConfig",
    "ScalingManager",
    "Server",
    "StartState",
]
