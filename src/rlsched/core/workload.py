"""Workloads: workflows (DAGs of tasks) and the function instances they become.

A *task* is one node of a workflow DAG as a trace records it (runtime, cores, memory, bytes moved).
A *function instance* is what a scheduler places: ``(type, cpu_request, mem_request, io_network,
io_disk, requests, exec_time, arrival_time)`` plus ``cpu_usage``. Traces rarely record every field,
so :func:`workflow_instances` derives the missing ones by the rules below and each
:class:`Workflow` says which of its task fields are real and which derived.

Units: cpu in cores, memory in GB (1e9 bytes), io in MB/s (1e6 bytes/s), time in seconds.

Derivation rules (applied per task, only where the trace lacks the field):

============== ============================================================================
field          rule
============== ============================================================================
exec_time      the task's measured runtime (always real; a task without one is an error)
cpu_usage      ``avgCPU / 100`` cores when the trace has it; else ``cpu_request``
cpu_request    ``coreCount`` when the trace has it; else ``cpu_usage`` rounded up to a quarter
               core (Kubernetes-style request granularity); else 1 core
mem_request    ``memoryInBytes`` when the trace has it, at least 128 MB; else
               ``clip(bytes read + bytes written, 128 MB, 8 GB)``: the task's working set is
               taken to be at least the data it touches
io_network     bytes read / runtime (inputs are pulled over the network)
io_disk        bytes written / runtime (outputs are written to local disk)
requests       1 per task (one invocation); function traces give their invocation counts
arrival_time   workflow submit time + the task's earliest start, i.e. the longest chain of
               predecessor runtimes (the time its inputs exist when run standalone)
============== ============================================================================
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from rlsched.core.dag import children_of, topological_order

#: The columns of :class:`FunctionInstances`, in order.
INSTANCE_FIELDS: tuple[str, ...] = (
    "type",
    "cpu_request",
    "mem_request",
    "io_network",
    "io_disk",
    "requests",
    "exec_time",
    "arrival_time",
    "cpu_usage",
)

MIN_MEMORY_GB = 0.128
MAX_DERIVED_MEMORY_GB = 8.0
CPU_REQUEST_STEP = 0.25


@dataclass(frozen=True)
class Task:
    """One task of a workflow as a trace records it; ``None`` means the trace lacks the field."""

    name: str
    """Unique name within the workflow."""
    type: str
    """Function type (the program or task category); instances of one type share an image."""
    runtime: float
    """Measured standalone execution time in seconds (> 0 unless a no-op)."""
    parents: tuple[int, ...] = ()
    """Indices of the direct predecessors in the workflow's task list."""
    cores: float | None = None
    """Requested cores (WfFormat ``coreCount``)."""
    cpu_usage: float | None = None
    """Cores actually used on average (WfFormat ``avgCPU / 100``)."""
    memory_gb: float | None = None
    """Memory in GB (WfFormat ``memoryInBytes / 1e9``)."""
    read_bytes: float | None = None
    """Bytes read (WfFormat ``readBytes`` or the sum of input file sizes)."""
    write_bytes: float | None = None
    """Bytes written (WfFormat ``writtenBytes`` or the sum of output file sizes)."""
    instances: int = 1
    """How many identical function instances the task runs (Alibaba ``instances_num``)."""
    requests: int = 1
    """Invocations served by each instance (function traces: invocations in the interval)."""


@dataclass
class Workflow:
    """A DAG of tasks submitted at one time.

    ``real_fields`` / ``derived_fields`` map each instance field to where it comes from, so a user
    can see what of a dataset is measured and what is estimated.
    """

    name: str
    tasks: list[Task]
    submit_time: float | None = None
    """Submit time from the trace in seconds, or ``None`` if the trace has none."""
    real_fields: dict[str, str] = field(default_factory=dict)
    derived_fields: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        n = len(self.tasks)
        for i, t in enumerate(self.tasks):
            for p in t.parents:
                if not 0 <= p < n or p == i:
                    raise ValueError(f"workflow {self.name!r}: task {t.name!r} has bad parent {p}")
        self._order = self._topological_order()

    def __len__(self) -> int:
        return len(self.tasks)

    @property
    def parents(self) -> list[np.ndarray]:
        return [np.asarray(t.parents, dtype=np.int64) for t in self.tasks]

    @property
    def children(self) -> list[np.ndarray]:
        return [np.asarray(k, dtype=np.int64) for k in children_of([t.parents for t in self.tasks])]

    @property
    def runtimes(self) -> np.ndarray:
        return np.array([t.runtime for t in self.tasks], dtype=np.float64)

    def topological_order(self) -> np.ndarray:
        """Task indices so that every task comes after all of its parents."""
        return self._order.copy()

    def _topological_order(self) -> np.ndarray:
        try:
            order = topological_order([t.parents for t in self.tasks])
        except ValueError:
            raise ValueError(f"workflow {self.name!r} has a cycle") from None
        return np.asarray(order, dtype=np.int64)

    def earliest_start(self) -> np.ndarray:
        """Earliest start of each task when every task runs standalone (longest parent chain)."""
        start = np.zeros(len(self.tasks))
        runtime = self.runtimes
        for i in self._order:
            ps = self.tasks[i].parents
            if ps:
                idx = np.asarray(ps)
                start[i] = float(np.max(start[idx] + runtime[idx]))
        return start

    def critical_path(self) -> float:
        """Length in seconds of the longest chain of runtimes (the standalone makespan)."""
        if not self.tasks:
            return 0.0
        return float(np.max(self.earliest_start() + self.runtimes))

    def total_work(self) -> float:
        """Core-seconds the workflow uses when run standalone."""
        inst = workflow_instances(self)
        return float(np.sum(inst.cpu_usage * inst.exec_time))


@dataclass(frozen=True)
class FunctionInstances:
    """A column store of function instances, sorted or not; every column has one entry each.

    ``type`` indexes ``type_names``; ``workflow`` and ``task`` say where each instance came from.
    """

    type: np.ndarray
    cpu_request: np.ndarray
    mem_request: np.ndarray
    io_network: np.ndarray
    io_disk: np.ndarray
    requests: np.ndarray
    exec_time: np.ndarray
    arrival_time: np.ndarray
    cpu_usage: np.ndarray
    workflow: np.ndarray
    task: np.ndarray
    type_names: tuple[str, ...] = ()

    def __len__(self) -> int:
        return int(self.type.shape[0])

    def __getitem__(self, idx: slice | np.ndarray) -> FunctionInstances:
        cols = {k: getattr(self, k)[idx] for k in (*INSTANCE_FIELDS, "workflow", "task")}
        return FunctionInstances(**cols, type_names=self.type_names)

    def record(self, i: int) -> dict[str, float | int]:
        """Instance ``i`` as a plain dict (the design note's ``task_params``)."""
        return {k: getattr(self, k)[i].item() for k in INSTANCE_FIELDS}

    def sorted_by_arrival(self) -> FunctionInstances:
        return self[np.argsort(self.arrival_time, kind="stable")]

    def with_arrival_shift(self, shift: float) -> FunctionInstances:
        return replace(self, arrival_time=self.arrival_time + shift)

    @staticmethod
    def empty(type_names: tuple[str, ...] = ()) -> FunctionInstances:
        return FunctionInstances.from_columns(
            {k: [] for k in INSTANCE_FIELDS}, type_names=type_names, n=0
        )

    @staticmethod
    def from_columns(
        cols: Mapping[str, Sequence[float] | np.ndarray],
        *,
        type_names: tuple[str, ...] = (),
        n: int | None = None,
    ) -> FunctionInstances:
        """Build from a dict of columns; missing ``workflow``/``task`` default to 0..n-1."""
        if n is None:
            n = len(next(iter(cols.values())))
        ints = {"type", "requests", "workflow", "task"}
        out: dict[str, np.ndarray] = {}
        for k in (*INSTANCE_FIELDS, "workflow", "task"):
            dtype = np.int64 if k in ints else np.float64
            if k in cols:
                out[k] = np.asarray(cols[k], dtype=dtype).reshape(n)
            elif k == "cpu_usage" and "cpu_request" in cols:
                out[k] = np.asarray(cols["cpu_request"], dtype=np.float64).reshape(n)
            elif k == "task":
                out[k] = np.arange(n, dtype=np.int64)
            elif k in ("workflow",):
                out[k] = np.zeros(n, dtype=np.int64)
            else:
                raise KeyError(f"missing instance column {k!r}")
        return FunctionInstances(**out, type_names=type_names)

    @staticmethod
    def concat(parts: Iterable[FunctionInstances]) -> FunctionInstances:
        parts = list(parts)
        if not parts:
            return FunctionInstances.empty()
        names = parts[0].type_names
        if any(p.type_names != names for p in parts):
            raise ValueError("cannot concatenate instances with different type tables")
        cols = {
            k: np.concatenate([getattr(p, k) for p in parts])
            for k in (*INSTANCE_FIELDS, "workflow", "task")
        }
        return FunctionInstances(**cols, type_names=names)


def derive_task_fields(t: Task) -> dict[str, float]:
    """Apply the module's derivation rules to one task: per-instance field values."""
    runtime = max(float(t.runtime), 1e-3)
    usage = t.cpu_usage
    if t.cores is not None and t.cores > 0:
        request = float(t.cores)
    elif usage is not None and usage > 0:
        request = math.ceil(usage / CPU_REQUEST_STEP) * CPU_REQUEST_STEP
    else:
        request = 1.0
    if usage is None or usage <= 0:
        usage = request
    read = float(t.read_bytes or 0.0)
    write = float(t.write_bytes or 0.0)
    if t.memory_gb is not None and t.memory_gb > 0:
        mem = max(MIN_MEMORY_GB, float(t.memory_gb))
    else:
        mem = float(np.clip((read + write) / 1e9, MIN_MEMORY_GB, MAX_DERIVED_MEMORY_GB))
    return {
        "cpu_request": request,
        "cpu_usage": float(usage),
        "mem_request": mem,
        "io_network": read / runtime / 1e6,
        "io_disk": write / runtime / 1e6,
        "requests": float(max(1, t.requests)),
        "exec_time": runtime,
    }


def workflow_instances(
    wf: Workflow,
    submit_time: float | None = None,
    type_index: dict[str, int] | None = None,
    workflow_id: int = 0,
) -> FunctionInstances:
    """The function instances of one workflow, arriving at ``submit_time`` + earliest start.

    ``type_index`` maps type names to ids (built by :func:`type_table`); by default the
    workflow's own types are numbered by descending frequency.
    """
    if type_index is None:
        type_index = {n: i for i, n in enumerate(type_table([wf]))}
    names = tuple(sorted(type_index, key=type_index.__getitem__))
    t0 = float(submit_time if submit_time is not None else (wf.submit_time or 0.0))
    starts = wf.earliest_start()
    derived = [derive_task_fields(t) for t in wf.tasks]
    # one row per task, then repeated per instance: numpy does the fan-out of big tasks
    reps = np.array([max(1, t.instances) for t in wf.tasks], dtype=np.int64)
    cols: dict[str, np.ndarray] = (
        {
            k: np.repeat(np.array([d[k] for d in derived], dtype=np.float64), reps)
            for k in derived[0]
        }
        if derived
        else {}
    )
    n = int(reps.sum())
    cols["type"] = np.repeat(np.array([type_index[t.type] for t in wf.tasks], np.int64), reps)
    cols["arrival_time"] = np.repeat(t0 + starts, reps)
    cols["workflow"] = np.full(n, workflow_id, dtype=np.int64)
    cols["task"] = np.repeat(np.arange(len(wf.tasks), dtype=np.int64), reps)
    if not derived:
        return FunctionInstances.empty(names)
    return FunctionInstances.from_columns(cols, type_names=names, n=n)


def type_table(workflows: Iterable[Workflow]) -> tuple[str, ...]:
    """Function type names ordered by descending instance count, ties by name.

    Envs with ``F`` function slots map type id ``k`` to slot ``min(k, F - 1)``: the ``F - 1``
    most frequent types get their own slot and the rest share the last one.
    """
    counts: dict[str, int] = {}
    for wf in workflows:
        for t in wf.tasks:
            counts[t.type] = counts.get(t.type, 0) + max(1, t.instances)
    return tuple(sorted(counts, key=lambda n: (-counts[n], n)))
