"""The object every loader returns: workflows plus where they came from."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rlsched.core.workload import FunctionInstances, Workflow, type_table, workflow_instances


@dataclass
class Dataset:
    """A named collection of workflows (a function trace is many one-task workflows)."""

    name: str
    """Canonical registry name, e.g. ``wfinstances:montage-58``."""
    workflows: list[Workflow]
    description: str = ""
    source: str = ""
    """File path(s) or generator the data came from."""
    license: str = ""
    real_fields: dict[str, str] = field(default_factory=dict)
    """Instance field -> the trace column it is read from."""
    derived_fields: dict[str, str] = field(default_factory=dict)
    """Instance field -> the rule that derives it (see :mod:`rlsched.core.workload`)."""
    trace: Any = None
    """A non-workflow trace, typed by kind (e.g. :class:`rlsched.core.vm.VMRequests` for
    ``huawei-vm:`` / ``synthetic:vm``); ``workflows`` is then empty."""

    @property
    def kind(self) -> str:
        """``workflows`` or the trace's ``kind`` attribute (``vm-requests``, ...)."""
        return "workflows" if self.trace is None else str(getattr(self.trace, "kind", "trace"))

    @property
    def type_names(self) -> tuple[str, ...]:
        return type_table(self.workflows)

    def instances(self, submit_times: np.ndarray | None = None) -> FunctionInstances:
        """All instances, each workflow submitted at its trace time (or ``submit_times``).

        Workflows without a trace submit time are submitted back to back at time 0.
        """
        index = {n: i for i, n in enumerate(self.type_names)}
        parts = []
        for k, wf in enumerate(self.workflows):
            t0 = submit_times[k] if submit_times is not None else (wf.submit_time or 0.0)
            parts.append(workflow_instances(wf, t0, index, workflow_id=k))
        if not parts:
            return FunctionInstances.empty(self.type_names)
        return FunctionInstances.concat(parts).sorted_by_arrival()

    def summary(self) -> dict[str, object]:
        """Facts for ``rlsched datasets show``."""
        inst = self.instances() if self.workflows else None
        n_tasks = sum(len(w) for w in self.workflows)
        out: dict[str, object] = {
            "name": self.name,
            "description": self.description,
            "source": self.source,
            "license": self.license,
            "workflows": len(self.workflows),
            "tasks": n_tasks,
            "instances": len(inst) if inst is not None else 0,
            "function_types": len(self.type_names),
            "real_fields": self.real_fields,
            "derived_fields": self.derived_fields,
        }
        if inst is not None and len(inst):
            for col in ("exec_time", "cpu_request", "mem_request", "io_network", "io_disk"):
                v = getattr(inst, col)
                out[f"{col}_mean"] = float(np.mean(v))
                out[f"{col}_max"] = float(np.max(v))
            out["span_s"] = float(inst.arrival_time.max() - inst.arrival_time.min())
        if self.trace is not None and hasattr(self.trace, "summary"):
            out["kind"] = self.kind
            out.update(self.trace.summary())
        return out
