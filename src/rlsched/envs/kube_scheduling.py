"""KubeScheduling-v0: the k8s-simulator PPO plugin's bind / preempt / delay / reject problem."""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces

from rlsched.core.cluster import NodeView
from rlsched.core.timeline import Timeline
from rlsched.core.workload import Workflow, derive_task_fields
from rlsched.data import load_dataset
from rlsched.envs.base import Metric, RlschedEnv
from rlsched.optional import imported
from rlsched.scenarios import GANG_NODE_KINDS as _GANG_NODE_KINDS
from rlsched.scenarios import check_scenario, with_presets

GIB = 1073741824
"""Bytes in a GiB: the plugin's memory scale."""
CPU_SCALE = 100_000.0
"""The plugin divides the pending pod's cpu millicores by this."""
#: Node catalog: cores of the node kinds drawn uniformly; memory is MEM_PER_CORE per core.
NODE_CORES: tuple[int, ...] = (4, 8, 16, 32)
MEM_PER_CORE = 4 * GIB
#: Priority classes, lowest first (index = priority value).
PRIORITY_CLASSES: tuple[str, ...] = ("best-effort", "normal", "system-critical")
NUM_PRIORITIES = len(PRIORITY_CLASSES)
# the ufuncs' reductions called directly: ndarray.sum / .any add a Python wrapper per call, a
# sizeable part of a step at a few nodes
_add_reduce = np.add.reduce
_or_reduce = np.logical_or.reduce
#: Weights of the plugin's episode score terms.
W_COMPLETION, W_WAIT, W_JCT, W_BALANCE, W_MATCH, W_LARGE = 10.0, 5.0, 5.0, 3.0, 2.0, 8.0
#: Time scale (seconds) of the plugin's exp(-avg / 100) wait and JCT terms.
TIME_SCALE = 100.0
#: Weight of node cpu-use variance in exp(-k var).
VAR_SCALE = 10.0

# pod states
_PENDING, _RUNNING, _REJECTED = 0, 1, 2


def default_node_kinds() -> np.ndarray:
    """The node catalog as ``(millicores, bytes)`` rows: ``NODE_CORES`` x ``MEM_PER_CORE``."""
    cores = np.asarray(NODE_CORES, dtype=np.int64)
    return np.stack([cores * 1000, cores * MEM_PER_CORE], axis=1)


#: The gang preset's node kinds (docs/scenarios.md): 8, 16 and 32 cores in three memory
#: shapes of 1/3, 2/3 and 4/3 GB per core around the trace's reference machine (the loader's
#: 64 GB per 96-core Alibaba machine: 2/3 GB per core), the ratios 1 : 2 : 4 of the
#: compute / general / memory instance families.
GANG_NODE_KINDS = _GANG_NODE_KINDS


@dataclass(frozen=True)
class PodTable:
    """Pods sorted by arrival: cpu millicores, memory bytes, duration s, arrival s, priority,
    and the job (gang) each belongs to (an id; pods of a job share its priority)."""

    cpu: np.ndarray
    mem: np.ndarray
    duration: np.ndarray
    arrival: np.ndarray
    priority: np.ndarray
    job: np.ndarray

    def __len__(self) -> int:
        return int(self.cpu.shape[0])

    @staticmethod
    def build(
        cpu: Any, mem: Any, duration: Any, arrival: Any, priority: Any, job: Any = None
    ) -> PodTable:
        cpu_a = np.asarray(cpu, dtype=np.int64)
        mem_a = np.asarray(mem, dtype=np.int64)
        dur_a = np.asarray(duration, dtype=np.float64)
        arr_a = np.asarray(arrival, dtype=np.float64)
        pr_a = np.asarray(priority, dtype=np.int64)
        job_a = np.arange(len(cpu_a)) if job is None else np.asarray(job, dtype=np.int64)
        if not (len(cpu_a) == len(mem_a) == len(dur_a) == len(arr_a) == len(pr_a) == len(job_a)):
            raise ValueError("pod columns differ in length")
        if len(cpu_a) == 0:
            raise ValueError("no pods")
        if (cpu_a < 0).any() or (mem_a < 0).any() or (dur_a <= 0).any():
            raise ValueError("pod cpu and memory must be >= 0 and durations > 0")
        if ((pr_a < 0) | (pr_a >= NUM_PRIORITIES)).any():
            raise ValueError(f"priorities must be in 0..{NUM_PRIORITIES - 1}")
        order = np.argsort(arr_a, kind="stable")
        cols = [a[order] for a in (cpu_a, mem_a, dur_a, arr_a, pr_a, job_a)]
        for a in cols:
            a.flags.writeable = False
        return PodTable(*cols)


def pods_from_workflows(
    workflows: Sequence[Workflow], shares: Sequence[float], seed: int
) -> PodTable:
    """One pod per task instance (see the env docstring for the rules)."""
    rng = np.random.default_rng(seed)
    classes = rng.choice(NUM_PRIORITIES, size=len(workflows), p=np.asarray(shares, float))
    cpu: list[float] = []
    mem: list[float] = []
    dur: list[float] = []
    arr: list[float] = []
    pr: list[int] = []
    job: list[int] = []
    reps: list[int] = []
    for k, (w, cls) in enumerate(zip(workflows, classes.tolist(), strict=True)):
        t0 = float(w.submit_time or 0.0)
        starts = (
            w.earliest_start().tolist() if any(t.parents for t in w.tasks) else [0.0] * len(w.tasks)
        )
        for t, s in zip(w.tasks, starts, strict=True):
            d = derive_task_fields(t)
            cpu.append(d["cpu_request"])
            mem.append(d["mem_request"])
            dur.append(d["exec_time"])
            arr.append(t0 + s)
            pr.append(cls)
            job.append(k)
            reps.append(max(1, t.instances))
    r = np.asarray(reps)
    return PodTable.build(
        np.repeat(np.rint(np.asarray(cpu) * 1000.0), r),
        np.repeat(np.rint(np.asarray(mem) * 1e9), r),
        np.repeat(dur, r),
        np.repeat(arr, r),
        np.repeat(pr, r),
        np.repeat(job, r),
    )


_POD_CACHE: dict[tuple[str, tuple[float, ...], int], PodTable] = {}


def load_pods(name: str, shares: Sequence[float], seed: int) -> tuple[str, PodTable]:
    """Pods of registry dataset ``name``, cached per (name, shares, seed); read-only."""
    ds = load_dataset(name)
    key = (ds.name, tuple(float(s) for s in shares), int(seed))
    if key not in _POD_CACHE:
        if not ds.workflows:
            raise ValueError(f"dataset {ds.name!r} has no workflows")
        _POD_CACHE[key] = pods_from_workflows(ds.workflows, shares, seed)
    return ds.name, _POD_CACHE[key]


#: :mod:`rlsched.envs.kube_kernels` once loaded, False without numba (the step in numpy)
_KERNELS: Any = None


def _kernels() -> Any:
    """The compiled parts of the step (:mod:`rlsched.envs.kube_kernels`), or None without
    numba; loaded once per process."""
    global _KERNELS
    if _KERNELS is None:
        _KERNELS = imported("rlsched.envs.kube_kernels") or False
    return _KERNELS or None


class KubeSchedulingEnv(RlschedEnv):
    """
    ## Description

    The k8s-simulator PPO plugin's problem: pods arrive at a cluster of ``num_nodes``
    heterogeneous nodes and the scheduler decides, for the pod at the head of the scheduling
    queue, to bind it to a node, preempt lower-priority pods on a node and bind it there, delay
    it, or reject it. Pods run for their trace duration and then free their resources.

    Time is event-driven: the clock jumps to the next pod arrival when the queue is empty, and
    to the next cluster event (a pod completing or arriving) when every queued pod was delayed.
    Node state lives in numpy arrays; completions in a :class:`~rlsched.core.timeline.Timeline`.

    **Nodes.** Allocatable cpu in millicores and memory in bytes. Each node's kind is drawn
    uniformly by ``cluster_seed`` from ``NODE_CORES`` = 4, 8, 16 or 32 cores with 4 GiB per
    core (4c/16Gi, 8c/32Gi, 16c/64Gi, 32c/128Gi), allocatable = capacity; or pass ``nodes``,
    a list of ``(cpu_millicores, memory_bytes)``.

    **Pods.** Each task instance of the dataset is a pod: ``cpu = round(cores * 1000)``
    millicores, ``memory = round(memory_gb * 1e9)`` bytes, duration = runtime, arrival = the
    job's trace submit time (+ the task's earliest start in its DAG, for DAG datasets). Fields a
    trace lacks follow :mod:`rlsched.core.workload`'s rules. An episode is the window of
    ``episode_length`` consecutive pods (by arrival) starting at an offset drawn with the reset
    seed, times shifted so the first arrives at 0. With ``load`` set, the window's arrival
    times are scaled so that its offered cpu load ``sum(cpu * duration) / span`` is ``load``
    times the cluster's allocatable cpu; by default (``None``) trace times are kept.

    **Priorities.** Every job (workflow) gets a priority class, drawn with
    ``numpy.random.default_rng(priority_seed)`` over the dataset's jobs in order with
    ``priority_shares`` (default 30% best-effort = 0, 60% normal = 1, 10% system-critical = 2);
    all pods of a job share it. Injected pods carry their own ``priority``.

    **Preemption** (action ``N + i``) is offered only when the pod does not fit node ``i`` now
    but fits after evicting pods of strictly lower priority. Victims are chosen as
    kube-scheduler does: take every lower-priority pod off the node, then reprieve them one by
    one from the highest priority (ties: the earliest bound first) while the pending pod still
    fits, so only lowest-priority pods that are needed are evicted. Evicted pods return to the
    back of the queue, keep their arrival time and restart from scratch when bound again; each
    eviction counts as one preemption.

    **Gangs** (``gang=True``, the ``gang`` preset, the default): every job of the trace is a
    gang, as a Volcano PodGroup whose minAvailable is all of its pods. The pods of a job arrive
    together (at the job's first arrival) and are queued one after another; binding one only
    reserves its resources, and when the gang's last pod is bound all of them start at once.
    Delaying a pod of a gang parks the whole gang and takes back what it had reserved (with
    the reward those binds paid); rejecting rejects the whole gang, and is valid only when the
    pod can neither be bound, preempt nor wait (Volcano never drops a job). Evicting a pod of a
    running gang evicts every pod of it still running (the job restarts). An episode is a
    window of whole jobs holding at least ``episode_length`` pods; jobs no packing of the empty
    cluster could hold (a pod larger than every node, or more requests than the cluster has)
    never enter it. The main metric is then ``mean_job_jct`` (lower is better).

    **Delay** (action ``2N``) parks the pod (kube-scheduler's unschedulable queue): the next
    queued pod is decided at the same time; when every queued pod is parked, the clock moves
    to the next completion or arrival and the parked pods rejoin the queue, ahead of new
    arrivals. A pod may be delayed ``max_delays`` times per scheduling attempt (reset when it is
    evicted); delay is valid only if something is running, queued or still to arrive.

    ## Action Space

    ``Discrete(2N + 2)``, as the plugin: ``0..N-1`` bind to node ``i``; ``N..2N-1`` preempt
    lower-priority pods on node ``i`` then bind; ``2N`` delay; ``2N + 1`` reject.
    :meth:`action_masks`: bind valid iff the pod fits (cpu and memory); preempt valid iff it
    does not fit now but fits after evicting strictly lower-priority pods; delay as above;
    reject always (gang mode: only when nothing else is valid).

    ## Observation Space

    ``Box(0, inf, (2N + 2,), float32)``, exactly the plugin's state vector: per node ``i``
    (interleaved) ``used_cpu_i / allocatable_cpu_i``, ``used_mem_i / allocatable_mem_i``
    (requests of the pods bound there, in [0, 1]); then the pending pod's
    ``cpu_millicores / 100000`` and ``memory_bytes / 1073741824``. After the last step the pod
    entries are 0. (The design note's "state 2n" leaves out the two pod entries; this follows
    the issue's ``2N + 2``.)

    ## Rewards

    With ``L`` pods in the episode and ``L_large`` of them large (``cpu >= large_cpu``
    millicores or ``memory >= large_memory`` bytes; defaults 1000 m and 1 GiB), a bind (also
    after a preemption) of pod ``j`` pays its completion credit::

        c_j = (10 + 5 exp(-wait_j / 100) + 5 exp(-jct_j / 100) + 2 match_j
               + 3 exp(-10 var_cpu)) / L  +  8 [j large] / L_large

    where ``wait_j = now - arrival_j``, ``jct_j = wait_j + duration_j``, ``match_j`` is the
    cosine between the pod's request and the node's free resources (both as fractions of the
    node's allocatable) before binding, and ``var_cpu`` the variance over nodes of
    ``used_cpu / allocatable_cpu`` after the action. Each evicted pod ``q`` costs its credit
    back plus ``preempt_penalty * (1 + priority_q) / L`` (default 2); a rejection costs
    ``reject_penalty / L`` (default 1); a delay pays 0 (waiting lowers the later credit). The
    episode return is therefore the plugin's score with per-pod terms in place of averages,
    minus preemption and rejection costs; it keeps all six of the plugin's terms and weights.

    ``info["metrics"]["plugin_score"]`` is the plugin's own episode score::

        10 completion_rate + 5 exp(-mean_wait / 100) + 5 exp(-mean_jct / 100)
        + 3 exp(-10 cpu_util_var) + 2 resource_match + 8 large_completion_rate

    ``completion_rate``: pods bound at the end (they all run to completion) / ``L``;
    ``mean_wait`` / ``mean_jct``: over those pods, bind time (final bind) / completion time
    minus arrival (exp terms 0 when none is bound); ``cpu_util_var``: the mean over decision
    steps of ``var_cpu``; ``resource_match``: mean ``match_j`` of the final binds (0 if none);
    ``large_completion_rate``: large pods bound / ``L_large`` (1 when there are none).

    Job figures (both modes): ``mean_job_jct``, the mean over jobs of the last pod's
    completion minus the job's first arrival, where a job with a rejected (or undecided) pod
    counts as run after everything else, ``max(makespan, now) - arrival`` plus its longest
    pod; ``makespan`` (the last completion, episode start 0); ``jobs``; ``jobs_rejected``.

    An invalid action ends the episode with reward ``-invalid_action_penalty`` (the rule of
    :mod:`rlsched.envs.base`); by default the most the undecided pods could still earn,
    ``25 left / L + 8 left_large / L_large``. After the end :meth:`action_masks` is all True.

    ## Starting State

    An empty cluster (fixed by ``cluster_seed``, or redrawn each reset with
    ``randomize_cluster``) at time 0 with the pods arriving at 0 queued.

    ## Episode End

    Terminated when every pod of the window is bound (and not evicted) or rejected, or on an
    invalid action. The last step's ``info["metrics"]`` holds the episode's figures above plus
    preemptions, rejections, delays and invalid actions.

    ## Arguments

    ``num_nodes`` (7: state 16 = 2N + 2, actions 16), ``dataset`` (registry name, a
    :class:`~rlsched.data.Dataset`, or a list of pod dicts ``{"cpu": millicores, "memory":
    bytes, "duration": s, "arrival": s, "priority": 0..2 (1)}``; default
    ``"alibaba:cloudsimpy-jobs"``), ``episode_length`` (200), ``load`` (None),
    ``priority_shares`` ((0.3, 0.6, 0.1)), ``priority_seed`` (0), ``max_delays`` (10),
    ``preempt_penalty`` (2.0), ``reject_penalty`` (1.0), ``invalid_action_penalty`` (None),
    ``large_cpu`` (1000), ``large_memory`` (1 GiB), ``nodes`` (None), ``cluster_seed`` (0),
    ``randomize_cluster`` (False), ``gang`` (False; see Gangs), ``node_kinds`` (None: the
    ``NODE_CORES`` catalog; else ``(millicores, bytes)`` kinds drawn uniformly per node),
    ``scenario`` (None: the default preset ``gang``; a preset name of
    :mod:`rlsched.scenarios`, docs/scenarios.md; explicit arguments win over the preset's),
    ``render_mode`` (None; ``"ansi"`` renders a node table).

    ## Version History

    - v0: initial version.
    """

    #: Built per dataset or episode and never written in a step: snapshots share them.
    snapshot_static = (
        "_table", "_jobs_by_arrival", "_gang_pods", "_job_l", "_gang_of",
        # per-pod columns, replaced as a whole (per episode or resampled future), never
        # changed in place
        "_cpu_l", "_mem_l", "_dur_l", "_arr_l", "_prio_l", "_large_l",
    )  # fmt: skip
    #: Per-pod numbers changed in place item by item: copied one level deep
    snapshot_shallow = (
        "_state", "_node_of", "_bind_time", "_epoch", "_delays", "_credit", "_match",
    )  # fmt: skip
    oracle_base = "least_loaded"
    #: To the episode's end: job completion at a finite horizon counts only the jobs done by
    #: then, which rewards holding jobs back
    rollout_options: ClassVar[dict[str, Any]] = {"horizon": None}
    METRICS: ClassVar[dict[str, Metric]] = {
        "plugin_score": Metric("plugin_score", "", True, leaderboard=True, main=True),
        "mean_job_jct": Metric("mean_job_jct", "s", False, leaderboard=True),
        "makespan": Metric("makespan", "s", False, leaderboard=True),
        "completion_rate": Metric("completion_rate", "fraction", True, leaderboard=True),
        "mean_wait": Metric("mean_wait", "s", False, leaderboard=True),
        "mean_jct": Metric("mean_jct", "s", False, leaderboard=True),
        "cpu_util_var": Metric("cpu_util_var", "", False, leaderboard=True),
        "preemptions": Metric("preemptions", "pods", False, leaderboard=True),
        "rejections": Metric("rejections", "pods", False, leaderboard=True),
        "invalid_actions": Metric("invalid", "actions", False, leaderboard=True),
        "resource_match": Metric("resource_match", "", True),
        "large_completion_rate": Metric("large_completion_rate", "fraction", True),
        "preempt_actions": Metric("preempt_actions", "actions"),
        "delays": Metric("delays", "actions"),
        "pods": Metric("pods", "pods"),
        "sim_time": Metric("sim_time", "s"),
        "jobs": Metric("jobs", "jobs"),
        "jobs_rejected": Metric("jobs_rejected", "jobs", False),
    }

    @with_presets
    def __init__(
        self,
        num_nodes: int = 7,
        dataset: str | Any = "alibaba:cloudsimpy-jobs",
        episode_length: int = 200,
        load: float | None = None,
        priority_shares: Sequence[float] = (0.3, 0.6, 0.1),
        priority_seed: int = 0,
        max_delays: int = 10,
        preempt_penalty: float = 2.0,
        reject_penalty: float = 1.0,
        invalid_action_penalty: float | None = None,
        large_cpu: int = 1000,
        large_memory: int = GIB,
        nodes: Sequence[tuple[int, int]] | None = None,
        cluster_seed: int = 0,
        randomize_cluster: bool = False,
        gang: bool = False,
        node_kinds: Sequence[tuple[int, int]] | None = None,
        scenario: str | None = None,
        render_mode: str | None = None,
    ) -> None:
        super().__init__()
        check_scenario(type(self).__name__, scenario)
        if nodes is not None:
            num_nodes = len(nodes)
        if num_nodes < 1 or episode_length < 1:
            raise ValueError("num_nodes and episode_length must be >= 1")
        if max_delays < 0:
            raise ValueError("max_delays must be >= 0")
        if load is not None and load <= 0:
            raise ValueError("load must be positive")
        shares = np.asarray(priority_shares, dtype=np.float64)
        if shares.shape != (NUM_PRIORITIES,) or (shares < 0).any() or shares.sum() <= 0:
            raise ValueError(f"priority_shares needs {NUM_PRIORITIES} non-negative shares")
        self._set_render_mode(render_mode)
        self.num_nodes = N = int(num_nodes)
        self.episode_length = int(episode_length)
        self.load = None if load is None else float(load)
        self.priority_shares = tuple((shares / shares.sum()).tolist())
        self.priority_seed = int(priority_seed)
        self.max_delays = int(max_delays)
        self.preempt_penalty = float(preempt_penalty)
        self.reject_penalty = float(reject_penalty)
        self.invalid_action_penalty = invalid_action_penalty
        self.large_cpu = int(large_cpu)
        self.large_memory = int(large_memory)
        self.cluster_seed = int(cluster_seed)
        self.randomize_cluster = bool(randomize_cluster) and nodes is None
        self.gang = bool(gang)
        if self.gang:  # Volcano's question: how long do the jobs take (an instance attribute)
            self.main_metric = "mean_job_jct"  # lower is better (METRICS)
        kinds = default_node_kinds() if node_kinds is None else node_kinds
        self.node_kinds = np.asarray(kinds, dtype=np.int64).reshape(-1, 2)
        if len(self.node_kinds) == 0 or (self.node_kinds <= 0).any():
            raise ValueError("node_kinds needs (millicores, bytes) pairs, all positive")
        self.node_kinds.flags.writeable = False

        if nodes is not None:
            alloc = np.asarray(nodes, dtype=np.int64).reshape(N, 2)
            if (alloc <= 0).any():
                raise ValueError("node allocatable cpu and memory must be positive")
        else:
            alloc = self.sample_nodes(N, np.random.default_rng(self.cluster_seed), self.node_kinds)
        self._set_nodes(alloc)

        self.action_space = spaces.Discrete(2 * N + 2)
        high = np.full(2 * N + 2, np.inf, dtype=np.float32)
        high[: 2 * N] = 1.0
        self.observation_space = spaces.Box(0.0, high, (2 * N + 2,), np.float32)

        self._dataset_name: str | None = None
        self._table: PodTable | None = None
        self.set_dataset(dataset)
        self._done = True
        self._L = 0
        _kernels()  # the step's compiled parts, where numba is there (module docstring)

    # ------------------------------------------------------------------ setup
    @staticmethod
    def sample_nodes(
        num_nodes: int, rng: np.random.Generator, kinds: np.ndarray | None = None
    ) -> np.ndarray:
        """``(N, 2)`` allocatable (millicores, bytes): a uniform draw from the node ``kinds``
        (default: ``NODE_CORES`` with ``MEM_PER_CORE``)."""
        k = default_node_kinds() if kinds is None else np.asarray(kinds, dtype=np.int64)
        return k[rng.integers(0, len(k), num_nodes)].copy()

    def _set_nodes(self, alloc: np.ndarray) -> None:
        self.allocatable = alloc.astype(np.int64)
        self.allocatable.flags.writeable = False
        self._alloc_f = alloc.astype(np.float64)
        self._inv_alloc = 1.0 / self._alloc_f
        self._inv_cpu = self._inv_alloc[:, 0].tolist()
        self._inv_mem = self._inv_alloc[:, 1].tolist()
        # heuristics' units: cores and GiB
        self._alloc_units = alloc.astype(np.float64) / np.array([1000.0, GIB])

    def set_dataset(self, source: str | Any) -> None:
        """A registry name, a :class:`~rlsched.data.Dataset`, a list of workflows, or a list
        of pod dicts; takes effect at the next reset."""
        if isinstance(source, str):
            self._dataset_name, self._table = load_pods(
                source, self.priority_shares, self.priority_seed
            )
            return
        if hasattr(source, "workflows"):
            self._dataset_name = str(getattr(source, "name", "dataset"))
            self._table = pods_from_workflows(
                source.workflows, self.priority_shares, self.priority_seed
            )
            return
        items = list(source)
        if items and isinstance(items[0], Workflow):
            self._dataset_name = "workflows"
            self._table = pods_from_workflows(items, self.priority_shares, self.priority_seed)
            return
        if not items or not all(isinstance(p, Mapping) for p in items):
            raise ValueError("dataset must be a name, a Dataset, workflows or a list of pod dicts")
        try:
            self._table = PodTable.build(
                [p["cpu"] for p in items],
                [p["memory"] for p in items],
                [p["duration"] for p in items],
                [p.get("arrival", 0.0) for p in items],
                [p.get("priority", 1) for p in items],
                [p.get("job", k) for k, p in enumerate(items)],
            )
        except KeyError as e:
            raise ValueError(f"pod dict lacks {e.args[0]!r}") from e
        self._dataset_name = "pods"

    @property
    def dataset_name(self) -> str | None:
        return self._dataset_name

    def _job_index(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(perm, start, arrival)`` of the table's schedulable jobs in order of first
        arrival: the pods of the job ranked ``r`` are ``perm[start[r]:start[r + 1]]`` (table
        order), arriving with the job's first pod at ``arrival[r]``. A job is schedulable when
        each pod fits some node and its total requests fit the cluster's; the others (Volcano
        would keep them pending forever) never enter an episode. Cached per table and
        cluster (read-only)."""
        tab = self._table
        assert tab is not None
        alloc = self.allocatable
        key = alloc.tobytes()
        cached = getattr(self, "_jobs_by_arrival", None)
        if cached is not None and cached[0] is tab and cached[1] == key:
            return cached[2]
        _, first, inv = np.unique(tab.job, return_index=True, return_inverse=True)
        nj = len(first)
        order = np.argsort(first, kind="stable")  # jobs by their first pod's arrival
        rank = np.empty_like(order)
        rank[order] = np.arange(nj)
        pod_rank = rank[inv.ravel()]
        fits = ((tab.cpu[:, None] <= alloc[:, 0]) & (tab.mem[:, None] <= alloc[:, 1])).any(1)
        ok = (
            (np.bincount(pod_rank, weights=tab.cpu, minlength=nj) <= alloc[:, 0].sum())
            & (np.bincount(pod_rank, weights=tab.mem, minlength=nj) <= alloc[:, 1].sum())
            & (np.bincount(pod_rank, weights=~fits, minlength=nj) == 0)
        )
        if not ok.any():
            raise ValueError("no job of the dataset fits this cluster as a gang")
        new_rank = np.cumsum(ok) - 1  # ranks among the schedulable jobs
        keep = ok[pod_rank]
        idx = np.flatnonzero(keep)
        pr = new_rank[pod_rank[idx]]
        perm = idx[np.lexsort((idx, pr))]
        start = np.concatenate([[0], np.cumsum(np.bincount(pr, minlength=int(ok.sum())))])
        out = (perm, start, tab.arrival[first[order]][ok])
        for a in out:
            a.flags.writeable = False
        self._jobs_by_arrival = (tab, key, out)
        return out

    # ------------------------------------------------------------------ gymnasium API
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        rng = self.np_random
        if self.randomize_cluster:
            self._set_nodes(self.sample_nodes(self.num_nodes, rng, self.node_kinds))
        N = self.num_nodes
        self._set_pods(*self._draw_pods(rng))
        L, nj_l = self._L, len(self._gang_pods)

        # node state: integer requests, per priority too (preemption feasibility)
        self._used = np.zeros((N, 2), dtype=np.int64)
        self._free_c = self.allocatable[:, 0].copy()
        self._free_m = self.allocatable[:, 1].copy()
        # _low[p] = (cpu, mem) requests of pods with priority < p per node: what preempting
        # for a priority-p pod can free
        self._low = np.zeros((NUM_PRIORITIES, 2, N), dtype=np.int64)
        self._ucpu = np.zeros(N)  # used / allocatable cpu
        self._mask = np.zeros(2 * N + 2, dtype=bool)
        self._node_pods: list[dict[int, None]] = [{} for _ in range(N)]  # insertion-ordered
        # pod state
        self._state = [_PENDING] * L
        self._node_of = [-1] * L
        self._bind_time = [0.0] * L
        self._epoch = [0] * L
        self._delays = [0] * L
        self._gdelays = [0] * nj_l
        self._reserved: list[int] = []  # pods of the gang being placed (gang mode)
        self._credit = [0.0] * L
        self._match = [0.0] * L
        self._timeline: Timeline[tuple[int, int]] = Timeline()
        self._stale = 0
        self._running = 0
        self._queue: deque[int] = deque()
        self._parked: list[int] = []
        self._k = 0
        self._now = 0.0
        # statistics
        self._var_sum = 0.0
        self._steps = 0
        self._preemptions = 0
        self._preempt_actions = 0
        self._rejections = 0
        self._delay_count = 0
        self._invalid = 0
        self._total_reward = 0.0
        self._done = False
        self._admit()
        self._next_pod()
        return self._observation(), {"time": self._now, "dataset": self._dataset_name}

    def _draw_pods(
        self, rng: np.random.Generator
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """An episode's pods, drawn with ``rng``: ``(cpu, mem, duration, arrival, priority,
        job)`` (``job``: 0-based within the window; arrivals from 0, scaled to ``load``)."""
        tab = self._table
        assert tab is not None
        n = len(tab)
        if self.gang:
            # whole jobs, in order of arrival, until the window holds episode_length pods;
            # every pod of a job arrives with the job (a gang is submitted as one)
            perm, jstart, jarr = self._job_index()
            nj = len(jstart) - 1
            want = min(self.episode_length, n)
            s_max = int(np.searchsorted(jstart, n - want, side="right")) - 1
            # (clamped after the draw, so every other window stays the one it was: where
            # unschedulable jobs are left out, n - want can pass the last job)
            s = min(int(rng.integers(0, max(s_max, 0) + 1)), nj - 1)
            e = min(int(np.searchsorted(jstart, jstart[s] + want, side="left")), nj)
            idx = perm[jstart[s] : jstart[e]]
            job_local = np.repeat(np.arange(e - s), np.diff(jstart[s : e + 1]))
            arrival = np.repeat(jarr[s:e] - jarr[s], np.diff(jstart[s : e + 1]))
        else:
            L = min(self.episode_length, n)
            start = int(rng.integers(0, n - L + 1))
            idx = np.arange(start, start + L)
            arrival = tab.arrival[idx] - tab.arrival[start]
            job_local = np.unique(tab.job[idx], return_inverse=True)[1].ravel()
        cpu, mem, dur = tab.cpu[idx], tab.mem[idx], tab.duration[idx]
        span = float(arrival[-1])
        if self.load is not None and span > 0:
            offered = float(np.sum(cpu * dur)) / span
            arrival = arrival * (offered / (self.load * float(self.allocatable[:, 0].sum())))
        return cpu, mem, dur, arrival, tab.priority[idx], job_local

    def _set_pods(
        self,
        cpu: np.ndarray,
        mem: np.ndarray,
        dur: np.ndarray,
        arrival: np.ndarray,
        prio: np.ndarray,
        job_local: np.ndarray,
    ) -> None:
        """Make these the episode's pods: per-pod columns, gangs, reward weights."""
        L = len(cpu)
        self._L = L
        self._cpu_l = cpu.tolist()
        self._mem_l = mem.tolist()
        self._dur_l = dur.tolist()
        self._arr_l = arrival.tolist()
        self._prio_l = prio.tolist()
        self._job_l = np.array(job_local, dtype=np.int64)
        self._job_l.flags.writeable = False
        self._gang_of = self._job_l.tolist()
        nj_l = int(job_local.max()) + 1
        by_job = np.argsort(job_local, kind="stable")
        bounds = np.concatenate([[0], np.cumsum(np.bincount(job_local, minlength=nj_l))])
        self._gang_pods = tuple(
            tuple(by_job[bounds[g] : bounds[g + 1]].tolist()) for g in range(nj_l)
        )
        large = (cpu >= self.large_cpu) | (mem >= self.large_memory)
        self._large_l = large.tolist()
        self._n_large = int(large.sum())
        # the pending pod's observation entries, float32, one row per pod
        self._pod_obs = np.stack([cpu / CPU_SCALE, mem / GIB], axis=1).astype(np.float32)
        inv_l = 1.0 / L
        self._w = [w * inv_l for w in (W_COMPLETION, W_WAIT, W_JCT, W_MATCH, W_BALANCE)]
        self._w_large = W_LARGE / self._n_large if self._n_large else 0.0

    def _resample_workload(self, rng: np.random.Generator, sampler: str | None = None) -> None:
        """Pods that have not arrived: a fresh window of the trace (whole jobs in gang mode),
        its first pod (job) set at the last arrived pod's arrival so the gaps after it are the
        window's own, as new jobs; the episode keeps at most its pod count (fewer where a
        gang would not fit in it)."""
        k, L = self._k, self._L
        if self._done or k >= L or k == 0:
            return
        cpu, mem, dur, arr, prio, job = self._draw_pods(rng)
        # the window's first pod (first job in gang mode) stands for the last arrived one
        first = int(np.searchsorted(job, 1)) if self.gang else 1
        end = first + (L - k)
        if end < len(job) and self.gang:  # whole jobs only
            end = int(np.searchsorted(job, job[end], side="left"))
        end = min(end, len(job))
        if end <= first:
            return
        tail = slice(first, end)
        last = self._arr_l[k - 1]
        job_t = job[tail] - int(job[tail].min()) + int(self._job_l[:k].max()) + 1
        self._set_pods(
            np.concatenate([self._cpu_l[:k], cpu[tail]]),
            np.concatenate([self._mem_l[:k], mem[tail]]),
            np.concatenate([self._dur_l[:k], dur[tail]]),
            np.concatenate([self._arr_l[:k], arr[tail] - arr[0] + last]),
            np.concatenate([self._prio_l[:k], prio[tail]]).astype(np.int64),
            np.concatenate([self._job_l[:k], job_t]).astype(np.int64),
        )
        n = self._L
        for name, init in (("_state", _PENDING), ("_node_of", -1), ("_bind_time", 0.0),
                           ("_epoch", 0), ("_delays", 0), ("_credit", 0.0), ("_match", 0.0)):
            setattr(self, name, getattr(self, name)[:k] + [init] * (n - k))  # fmt: skip
        nj = len(self._gang_pods)
        self._gdelays = (self._gdelays + [0] * nj)[:nj]

    def oracle_actions(self, mask: np.ndarray, base_action: int) -> list[int] | None:
        """The clairvoyant oracle's candidates in gang mode: at a gang's first pod, the base's
        action, delaying the gang and each valid preemption; within a gang, the base's action
        only (the gang's order and admission decide completion; which node a small pod lands
        on rarely does). None outside gang mode: the oracle's own rule."""
        if not self.gang:
            return None
        if self._reserved:
            return [int(base_action)]
        N = self.num_nodes
        cand = dict.fromkeys([int(base_action)])
        if mask[2 * N]:
            cand[2 * N] = None
        for a in np.flatnonzero(mask[N : 2 * N]).tolist():
            cand[N + a] = None
        return list(cand)

    def free_capacity(self) -> tuple[np.ndarray, np.ndarray]:
        """Free (allocatable minus requested) millicores and bytes per node, copies."""
        return self._free_c.copy(), self._free_m.copy()

    def pending_gang(self) -> tuple[np.ndarray, np.ndarray, bool]:
        """``(cpu, mem, first)`` of the pending pod's gang: the requests of its pods still to
        place (the pending pod first), and whether none of the gang is placed yet. Outside gang
        mode the gang is the pending pod alone."""
        q = self._queue
        if self._done or not q:
            return np.zeros(0, np.int64), np.zeros(0, np.int64), True
        j = q[0]
        pods = [j]
        if self.gang:
            g = self._gang_of[j]
            for r in q:
                if r != j:
                    if self._gang_of[r] != g:
                        break
                    pods.append(r)
        cpu, mem = self._cpu_l, self._mem_l
        return (
            np.fromiter((cpu[r] for r in pods), np.int64, len(pods)),
            np.fromiter((mem[r] for r in pods), np.int64, len(pods)),
            not self._reserved,
        )

    def action_masks(self) -> np.ndarray:
        """Valid actions for the pending pod (bind, preempt, delay, reject)."""
        if self._done:
            return np.ones(2 * self.num_nodes + 2, dtype=bool)
        return self._mask.copy()

    def node_view(self, observation: np.ndarray) -> NodeView:
        """The observation in cores and GiB, for the node-scoring heuristics.

        Requests are the observed fractions times the env's allocatable; ``fallback_action``
        is delay, so a heuristic delays when no node fits.
        """
        N = self.num_nodes
        obs = np.asarray(observation, dtype=np.float64)
        frac = obs[: 2 * N].reshape(N, 2)
        return NodeView(
            capacity=self._alloc_units,
            requested=frac * self._alloc_units,
            demand=np.array([obs[2 * N] * (CPU_SCALE / 1000.0), obs[2 * N + 1]]),
            load=frac.max(axis=1),
            fallback_action=2 * N,
        )

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        reward, terminated, truncated, info = self.advance(action)
        return self._observation(), reward, terminated, truncated, info

    def advance(
        self, action: int, rewarded: bool = True
    ) -> tuple[float, bool, bool, dict[str, Any]]:
        """:meth:`step` without building the observation (a policy that reads the mask alone:
        round_robin, first_fit, random)."""
        if self._done:
            raise RuntimeError("step() called on a finished episode; call reset()")
        a = int(action)
        N = self.num_nodes
        if not (0 <= a < 2 * N + 2 and self._mask[a]):
            return self._invalid_step()
        j = self._queue.popleft()
        now = self._now
        reward = 0.0
        info: dict[str, Any] = {"pod": j, "time": now}
        if self.gang and a >= 2 * N:  # delay or reject a whole gang
            reward -= self._gang_undo(j, reject=a == 2 * N + 1)
            self._queue_step_done(self._cpu_var())
            self._next_pod()
        elif a < 2 * N:
            node = a if a < N else a - N
            if a >= N:
                reward -= self._preempt(node, j)
                info["evicted"] = self._last_victims
            c = self._cpu_l[j]
            m = self._mem_l[j]
            # resource match: cosine of request and free, as fractions of the node
            ic, im = self._inv_cpu[node], self._inv_mem[node]
            fc = int(self._free_c[node]) * ic
            fm = int(self._free_m[node]) * im
            dc, dm = c * ic, m * im
            norm = math.sqrt((dc * dc + dm * dm) * (fc * fc + fm * fm))
            match = (dc * fc + dm * fm) / norm if norm > 0 else 1.0
            if self.gang:
                self._reserved.append(j)
                q = self._queue
                # the gang's last pod placed: all of them start together (Volcano's commit)
                self._bind(node, j, now, start=False)
                if not q or self._gang_of[q[0]] != self._gang_of[j]:
                    for r in self._reserved:
                        self._timeline.push(now + self._dur_l[r], (r, self._epoch[r]))
                    self._reserved = []
            else:
                self._bind(node, j, now)
            var = self._cpu_var()
            wait = now - self._arr_l[j]
            jct = wait + self._dur_l[j]
            w = self._w
            credit = (
                w[0]
                + w[1] * math.exp(-wait / TIME_SCALE)
                + w[2] * math.exp(-jct / TIME_SCALE)
                + w[3] * match
                + w[4] * math.exp(-VAR_SCALE * var)
                + (self._w_large if self._large_l[j] else 0.0)
            )
            self._credit[j] = credit
            self._match[j] = match
            reward += credit
            info.update(node=node, wait=wait)
            self._queue_step_done(var)
            self._next_pod()
        elif a == 2 * N:
            self._delays[j] += 1
            self._delay_count += 1
            self._parked.append(j)
            self._queue_step_done(self._cpu_var())
            self._next_pod()
        else:
            self._state[j] = _REJECTED
            self._rejections += 1
            reward -= self.reject_penalty / self._L
            self._queue_step_done(self._cpu_var())
            self._next_pod()
        self._total_reward += reward
        if self._done:
            info["metrics"] = self.metrics()
        return reward, self._done, False, info

    # ------------------------------------------------------------------ simulation core
    def _invalid_step(self) -> tuple[float, bool, bool, dict[str, Any]]:
        self._invalid += 1
        if self.invalid_action_penalty is None:
            left = [j for j in range(self._L) if self._state[j] == _PENDING]
            n_large = sum(self._large_l[j] for j in left)
            penalty = (W_COMPLETION + W_WAIT + W_JCT + W_BALANCE + W_MATCH) * len(
                left
            ) / self._L + n_large * self._w_large
        else:
            penalty = float(self.invalid_action_penalty)
        self._done = True
        self._total_reward -= penalty
        info = {"invalid_action": True, "time": self._now, "metrics": self.metrics()}
        return -penalty, True, False, info

    def _queue_step_done(self, var: float) -> None:
        self._var_sum += var
        self._steps += 1

    def _cpu_var(self) -> float:
        """Variance over nodes of used / allocatable cpu."""
        u = self._ucpu
        n = self.num_nodes
        mean = float(_add_reduce(u)) / n  # u.sum(): the same reduction, without its wrapper
        v = float(u.dot(u)) / n - mean * mean
        return v if v > 0.0 else 0.0

    def _gang_undo(self, j: int, reject: bool) -> float:
        """Delay (park) or reject the whole gang of pod ``j`` (popped from the queue): its
        pods placed so far are taken back (Volcano discards a gang's partial allocation).
        Returns the reward taken back."""
        g = self._gang_of[j]
        q = self._queue
        pods = [*self._reserved, j]
        while q and self._gang_of[q[0]] == g:
            pods.append(q.popleft())
        back = 0.0
        for r in self._reserved:
            self._unbind(r)
            self._node_of[r] = -1
            back += self._credit[r]
            self._credit[r] = 0.0
        self._reserved = []
        if reject:
            for r in pods:
                self._state[r] = _REJECTED
            self._rejections += len(pods)
            back += self.reject_penalty * len(pods) / self._L
        else:
            for r in pods:
                self._state[r] = _PENDING
            self._gdelays[g] += 1
            self._delay_count += 1
            self._parked.extend(pods)
        return back

    def _place(self, node: int, j: int, sign: int) -> None:
        """Pod ``j``'s requests added to (``sign`` 1) or taken off (-1) ``node``: its used and
        free room, the lower-priority sums and its cpu use (compiled where numba is there)."""
        c, m, p = self._cpu_l[j], self._mem_l[j], self._prio_l[j]
        if _KERNELS:
            _KERNELS.place(self._used, self._free_c, self._free_m, self._low, self._ucpu,
                           self._inv_alloc, node, c, m, p, sign)  # fmt: skip
            return
        u = self._used
        u[node, 0] += sign * c
        u[node, 1] += sign * m
        self._free_c[node] -= sign * c
        self._free_m[node] -= sign * m
        if p + 1 < NUM_PRIORITIES:
            self._low[p + 1 :, 0, node] += sign * c
            self._low[p + 1 :, 1, node] += sign * m
        self._ucpu[node] = int(u[node, 0]) * self._inv_cpu[node]

    def _bind(self, node: int, j: int, now: float, start: bool = True) -> None:
        self._place(node, j, 1)
        self._node_pods[node][j] = None
        self._node_of[j] = node
        self._state[j] = _RUNNING
        self._bind_time[j] = now
        self._running += 1
        if start:
            self._timeline.push(now + self._dur_l[j], (j, self._epoch[j]))

    def _unbind(self, j: int) -> None:
        node = self._node_of[j]
        self._place(node, j, -1)
        del self._node_pods[node][j]
        self._running -= 1

    def _preempt(self, node: int, j: int) -> float:
        """Evict the fewest, lowest-priority pods on ``node`` that ``j`` needs; their cost."""
        p = self._prio_l[j]
        need_c = self._cpu_l[j] - int(self._free_c[node])
        need_m = self._mem_l[j] - int(self._free_m[node])
        prio = self._prio_l
        cand = [q for q in self._node_pods[node] if prio[q] < p]
        # kube-scheduler: remove all lower-priority pods, then reprieve from the highest
        # priority (earliest bound first) while the pod still fits
        cand.sort(key=lambda q: (-prio[q], self._bind_time[q]))
        freed_c = sum(self._cpu_l[q] for q in cand)
        freed_m = sum(self._mem_l[q] for q in cand)
        victims = []
        for q in cand:
            c, m = self._cpu_l[q], self._mem_l[q]
            if freed_c - c >= need_c and freed_m - m >= need_m:
                freed_c -= c
                freed_m -= m
            else:
                victims.append(q)
        if self.gang and victims:
            # evicting one pod of a gang kills the gang: every pod of it still running goes
            # back to the queue (it restarts as a whole)
            seen = dict.fromkeys(self._gang_of[q] for q in victims)
            victims = [
                r
                for g in seen
                for r in self._gang_pods[g]
                if self._state[r] == _RUNNING and r in self._node_pods[self._node_of[r]]
            ]
            for g in seen:
                self._gdelays[g] = 0
        cost = 0.0
        inv_l = 1.0 / self._L
        for q in victims:
            self._unbind(q)
            self._epoch[q] += 1
            self._stale += 1
            self._state[q] = _PENDING
            self._node_of[q] = -1
            self._delays[q] = 0
            cost += self._credit[q] + self.preempt_penalty * (1 + prio[q]) * inv_l
            self._credit[q] = 0.0
            self._queue.append(q)
        self._preemptions += len(victims)
        self._preempt_actions += 1
        self._last_victims = victims
        return cost

    def _release_until(self, t: float) -> None:
        epoch = self._epoch
        for _, (j, e) in self._timeline.pop_until(t):
            if e != epoch[j]:
                self._stale -= 1
                continue
            self._unbind(j)

    def _next_completion(self) -> float:
        tl = self._timeline
        if self._stale:
            while len(tl):
                t, (j, e) = tl.pop()
                if e != self._epoch[j]:
                    self._stale -= 1
                    continue
                tl.push(t, (j, e))
                break
        return tl.peek_time()

    def _admit(self) -> None:
        """Queue every pod that has arrived by now."""
        k, L, arr, now = self._k, self._L, self._arr_l, self._now
        q = self._queue
        while k < L and arr[k] <= now:
            q.append(k)
            k += 1
        self._k = k

    def _next_pod(self) -> None:
        """Advance the clock until a pod is queued; compute its mask, or end the episode."""
        q = self._queue
        while not q:
            t_arr = self._arr_l[self._k] if self._k < self._L else math.inf
            if self._parked:
                # every queued pod is parked: wait for the next cluster event
                t = min(self._next_completion(), t_arr)
                if t < math.inf:
                    self._now = max(self._now, t)
                    self._release_until(self._now)
                q.extend(self._parked)
                self._parked.clear()
                self._admit()
            elif t_arr < math.inf:
                self._now = max(self._now, t_arr)
                self._release_until(self._now)
                self._admit()
            else:
                self._done = True
                return
        self._compute_mask(q[0])

    def _compute_mask(self, j: int) -> None:
        N = self.num_nodes
        c, m, p = self._cpu_l[j], self._mem_l[j], self._prio_l[j]
        free_c, free_m = self._free_c, self._free_m
        mask = self._mask
        if _KERNELS:
            placeable = _KERNELS.fill_mask(free_c, free_m, self._low, p, c, m, mask, N)
        else:
            fits = (free_c >= c) & (free_m >= m)
            mask[:N] = fits
            if p > 0:
                low = self._low[p]
                mask[N : 2 * N] = ~fits & (free_c + low[0] >= c) & (free_m + low[1] >= m)
            else:
                mask[N : 2 * N] = False
            placeable = bool(_or_reduce(mask[: 2 * N]))
        if self.gang:
            q, g = self._queue, self._gang_of[j]
            mask[2 * N] = self._gdelays[g] < self.max_delays and (
                self._running > len(self._reserved)
                or self._gang_of[q[-1]] != g  # another gang is queued
                or bool(self._parked)
                or self._k < self._L
            )
        else:
            mask[2 * N] = self._delays[j] < self.max_delays and (
                self._running > 0 or len(self._queue) > 1 or bool(self._parked) or self._k < self._L
            )
        # a gang is rejected only when it can neither be placed nor wait (Volcano never drops
        # a job; rejecting would otherwise shorten the other jobs' waits for free)
        mask[2 * N + 1] = not self.gang or not (placeable or mask[2 * N])

    def _observation(self) -> np.ndarray:
        N = self.num_nodes
        obs = np.empty(2 * N + 2, dtype=np.float32)
        obs[: 2 * N] = (self._used / self._alloc_f).ravel()
        if not self._done and self._queue:
            obs[2 * N :] = self._pod_obs[self._queue[0]]
        else:
            obs[2 * N :] = 0.0
        return obs

    # ------------------------------------------------------------------ reporting
    def metrics(self) -> dict[str, float]:
        """The episode so far: the plugin's score and its statistics, and action counts."""
        L = self._L
        if not L:
            return {}
        bound = [j for j in range(L) if self._state[j] == _RUNNING]
        k = len(bound)
        if k:
            waits = np.array([self._bind_time[j] - self._arr_l[j] for j in bound])
            jcts = waits + np.array([self._dur_l[j] for j in bound])
            mean_wait, mean_jct = float(waits.mean()), float(jcts.mean())
            match = float(np.mean([self._match[j] for j in bound]))
        else:
            mean_wait = mean_jct = float("nan")
            match = 0.0
        completion = k / L if L else 0.0
        large_done = sum(self._large_l[j] for j in bound)
        large_rate = large_done / self._n_large if self._n_large else 1.0
        var = self._var_sum / self._steps if self._steps else 0.0
        score = (
            W_COMPLETION * completion
            + (W_WAIT * math.exp(-mean_wait / TIME_SCALE) if k else 0.0)
            + (W_JCT * math.exp(-mean_jct / TIME_SCALE) if k else 0.0)
            + W_BALANCE * math.exp(-VAR_SCALE * var)
            + W_MATCH * match
            + W_LARGE * large_rate
        )
        return {
            "plugin_score": float(score),
            **self._job_metrics(),
            "completion_rate": float(completion),
            "mean_wait": mean_wait,
            "mean_jct": mean_jct,
            "cpu_util_var": float(var),
            "resource_match": match,
            "large_completion_rate": float(large_rate),
            "preemptions": float(self._preemptions),
            "preempt_actions": float(self._preempt_actions),
            "rejections": float(self._rejections),
            "delays": float(self._delay_count),
            "invalid_actions": float(self._invalid),
            "pods": float(L),
            "sim_time": float(self._now),
        }

    def _job_metrics(self) -> dict[str, float]:
        """Job completion: a job completes when its last pod does; its JCT is that minus its
        first pod's arrival. A job the scheduler rejected (any pod), or left undecided, counts
        as if it ran after everything else: JCT = makespan - arrival + its longest pod.
        (Gang mode: jobs no packing of the empty cluster could hold never enter an episode.)"""
        job = self._job_l
        nj = int(job.max()) + 1
        state = np.asarray(self._state)
        dur = np.asarray(self._dur_l)
        end = np.asarray(self._bind_time) + dur
        done = state == _RUNNING
        makespan = float(end[done].max()) if done.any() else 0.0
        horizon = max(makespan, self._now)
        arr = np.full(nj, np.inf)
        np.minimum.at(arr, job, np.asarray(self._arr_l))
        fin = np.zeros(nj)
        np.maximum.at(fin, job, np.where(done, end, 0.0))
        longest = np.zeros(nj)
        np.maximum.at(longest, job, dur)
        n_done = np.bincount(job, weights=done, minlength=nj)
        complete = n_done == np.bincount(job, minlength=nj)
        jct = np.where(complete, fin - arr, horizon - arr + longest)
        return {
            "mean_job_jct": float(jct.mean()),
            "makespan": makespan,
            "jobs": float(nj),
            "jobs_rejected": float((~complete).sum()),
        }

    def render(self) -> str | None:
        if self.render_mode != "ansi":
            return None
        if not self._L:
            return "(not reset)"
        alloc, used = self.allocatable, self._used
        lines = [
            f"t={self._now:9.1f}s  queued={len(self._queue) + len(self._parked)}  "
            f"arrived={self._k}/{self._L}  running={self._running}  "
            f"preemptions={self._preemptions}  rejections={self._rejections}  "
            f"reward={self._total_reward:.3f}",
            f"{'node':<8}{'cpu m used/alloc':>20}{'mem GiB used/alloc':>22}{'pods by prio':>16}",
        ]
        prio = self._prio_l
        for i in range(self.num_nodes):
            counts = [0] * NUM_PRIORITIES
            for q in self._node_pods[i]:
                counts[prio[q]] += 1
            lines.append(
                f"node-{i:<3}{used[i, 0]:>10d}/{alloc[i, 0]:<9d}"
                f"{used[i, 1] / GIB:>11.2f}/{alloc[i, 1] / GIB:<10.1f}"
                f"{'/'.join(map(str, counts)):>16}"
            )
        if not self._done and self._queue:
            j = self._queue[0]
            lines.append(
                f"pending pod {j}: cpu={self._cpu_l[j]}m mem={self._mem_l[j] / GIB:.2f}GiB "
                f"dur={self._dur_l[j]:.1f}s prio={PRIORITY_CLASSES[prio[j]]} "
                f"arrival={self._arr_l[j]:.1f}s delays={self._delays[j]}"
            )
        return "\n".join(lines)
