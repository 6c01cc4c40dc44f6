"""LLM serving: a fast trace-driven simulator of disaggregated (Splitwise-style) inference with
a scaling manager.

- :mod:`rlsched.llm.trace`: :class:`LLMRequests`, :func:`load_requests` (numpy only; the data
  layer's ``azure-llm:`` loader builds it);
- :mod:`rlsched.llm.perf_model`: iteration latency from Splitwise's measured profile;
- :mod:`rlsched.llm.cluster`: server SKUs, models and KV sizes, instances;
- :mod:`rlsched.llm.scaling`: :class:`StartState` (YAML) and :class:`ScalingManager`;
- :mod:`rlsched.llm.slo`: slowdown SLOs against an unloaded run;
- :mod:`rlsched.llm.simulator`: :class:`LLMSimulator`.

See ``docs/llm_autoscaling.md``. Names are imported lazily, so the data layer can import
:mod:`rlsched.llm.trace` without loading the simulator.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "LLMRequests": "rlsched.llm.trace",
    "load_requests": "rlsched.llm.trace",
    "PerfModel": "rlsched.llm.perf_model",
    "SKU": "rlsched.llm.cluster",
    "SKUS": "rlsched.llm.cluster",
    "InstanceConfig": "rlsched.llm.cluster",
    "Instance": "rlsched.llm.cluster",
    "InstanceState": "rlsched.llm.cluster",
    "Server": "rlsched.llm.cluster",
    "ModelSpec": "rlsched.llm.cluster",
    "ScalingManager": "rlsched.llm.scaling",
    "StartState": "rlsched.llm.scaling",
    "SLOConfig": "rlsched.llm.slo",
    "LLMSimulator": "rlsched.llm.simulator",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'rlsched.llm' has no attribute {name!r}")
