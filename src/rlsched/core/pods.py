"""Pods sharing nodes window by window: the request model of ``rlsched/PodRebalancing-v0``.

Numpy only. A :class:`PodWorkload` holds a cluster (per node allocatable cpu / memory), pods
(initial node, Kubernetes cpu / memory requests) and, per 5-minute window, how many requests
each pod handles and how large one of its requests is. :func:`simulate_window` plays one window
for one placement and counts the requests that did not get the resources they asked for.

The model (the design note's DeployEnv; see ``docs/pod_rebalancing.md``):

Sharing (Kubernetes BestEffort-style). A pod ``p`` on node ``n`` is *assigned*
``C_n * request_cpu_p / sum(request_cpu on n)`` cores (all of the node's allocatable cpu, split
in proportion to the requests) and ``request_mem_p`` GB of memory (scaled down in proportion if
the node's memory requests exceed its allocatable): :func:`assigned_resources`.

Requests. Requests of a pod in a window are its ``requests[w, p]``; request ``i`` asks for
``d_i = (cpu, mem) = demand[w, p] * exp(spread_p * z_i - spread_p**2 / 2)``, ``z_i`` standard
normal, one draw per request for both resources (:func:`draw_requests`; mean-preserving).

Time axis (``t``), per node. ``k`` is the index of a request among its pod's requests.

- ``serial``: a pod handles its requests one after another, all of the same duration, so its
  demand at any time is one request's. Round-robin dispatch spaces every pod's requests evenly,
  so the note lines the pods of a node up by request index: position ``t = k`` holds the
  ``k``-th request of every pod that has one (pods with fewer requests are idle, zero, at the
  end). A node's axis has ``max(requests of its pods)`` positions spanning the window.
- ``parallel``: the window is ``slots`` slots; a pod's ``r`` requests arrive evenly spread
  (request ``k`` at ``(k + 1/2) / r`` of the window, slot ``t = floor((k + 1/2) * slots / r)``)
  and each runs for one slot, so the requests of a pod in the same slot run concurrently and
  their demands add up.

Serving, per node ``n`` and position ``t``, separately for cpu and memory:

1. every pod first serves its active requests from its own assignment, shortest (smallest
   demand) first, as many as fit in it;
2. the node's capacity its pods did not use in step 1 (``C_n`` minus what step 1 served) goes
   to the remaining requests of all its pods, again shortest first (the note: under contention
   the request asking for the least is served first).

A request is *violated* when its cpu or its memory is not served. Without contention (total
demand at ``(n, t)`` within the allocatable) nothing is violated: step 2 has room for all of it.
With contention, a pod within its proportional share is protected and the excess competes
shortest-job-first.

Series. ``pod_series`` / ``node_series`` are the demand (cores, GB) averaged over each of
``slots`` equal parts of the window: in serial mode position ``t`` of a node with ``L``
positions covers ``[t / L, (t + 1) / L)`` of the window, so the series is the exact time average
of the note's padded axis.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from rlsched.optional import loaded

MODES = ("serial", "parallel")

#: Relative tolerance of the "fits" comparisons (sums of floats).
_RTOL = 1e-9


@dataclass(frozen=True, eq=False)
class PodWorkload:
    """A cluster, its pods and their per-window request counts and sizes (all arrays)."""

    kind: ClassVar[str] = "pod-requests"

    node_names: tuple[str, ...]
    node_cpu: np.ndarray
    """``(N,)`` allocatable cores."""
    node_mem: np.ndarray
    """``(N,)`` allocatable GB."""
    pod_names: tuple[str, ...]
    pod_node: np.ndarray
    """``(P,)`` initial node index of each pod."""
    request_cpu: np.ndarray
    """``(P,)`` Kubernetes cpu request (cores)."""
    request_mem: np.ndarray
    """``(P,)`` Kubernetes memory request (GB)."""
    requests: np.ndarray
    """``(W, P)`` requests dispatched to each pod in each 5-minute window."""
    demand_cpu: np.ndarray
    """``(W, P)`` mean cpu (cores) one request of the pod uses in the window."""
    demand_mem: np.ndarray
    """``(W, P)`` mean memory (GB) one request of the pod uses in the window."""
    spread: np.ndarray
    """``(P,)`` lognormal sigma of one request's size around the window's mean."""
    mode: str = "serial"
    """``serial`` or ``parallel``: how a pod runs its requests (module docstring)."""
    pod_service: tuple[str, ...] = ()
    """Service (app) of each pod, informational; empty when unknown."""
    window_s: float = 300.0
    """Window length, seconds."""

    def __post_init__(self) -> None:
        N, P = len(self.node_names), len(self.pod_names)
        W = self.requests.shape[0] if self.requests.ndim == 2 else -1
        if N < 1 or P < 1 or W < 1:
            raise ValueError("a pod workload needs at least one node, pod and window")
        for name, a, shape in (
            ("node_cpu", self.node_cpu, (N,)),
            ("node_mem", self.node_mem, (N,)),
            ("pod_node", self.pod_node, (P,)),
            ("request_cpu", self.request_cpu, (P,)),
            ("request_mem", self.request_mem, (P,)),
            ("requests", self.requests, (W, P)),
            ("demand_cpu", self.demand_cpu, (W, P)),
            ("demand_mem", self.demand_mem, (W, P)),
            ("spread", self.spread, (P,)),
        ):
            if np.shape(a) != shape:
                raise ValueError(f"{name} has shape {np.shape(a)}, expected {shape}")
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, not {self.mode!r}")
        if (self.pod_node < 0).any() or (self.pod_node >= N).any():
            raise ValueError("pod_node must index node_names")
        if (self.node_cpu <= 0).any() or (self.node_mem <= 0).any():
            raise ValueError("node allocatable cpu and memory must be positive")
        if (self.requests < 0).any():
            raise ValueError("request counts must be >= 0")
        if self.pod_service and len(self.pod_service) != P:
            raise ValueError("pod_service must name one service per pod")

    @property
    def num_nodes(self) -> int:
        return len(self.node_names)

    @property
    def num_pods(self) -> int:
        return len(self.pod_names)

    @property
    def num_windows(self) -> int:
        return int(self.requests.shape[0])

    def summary(self) -> dict[str, object]:
        """Facts for ``rlsched datasets show``."""
        N = self.num_nodes
        res_cpu = np.bincount(self.pod_node, weights=self.request_cpu, minlength=N)
        res_mem = np.bincount(self.pod_node, weights=self.request_mem, minlength=N)
        per_window = self.requests.sum(axis=1)
        out: dict[str, object] = {
            "mode": self.mode,
            "nodes": N,
            "pods": self.num_pods,
            "windows": self.num_windows,
            "window_s": self.window_s,
            "requests": int(self.requests.sum()),
            "requests_per_window_mean": float(per_window.mean()),
            "requests_per_window_max": int(per_window.max()),
            "allocatable_cpu": float(self.node_cpu.sum()),
            "allocatable_mem": float(self.node_mem.sum()),
            "requested_cpu_share_per_node": [round(float(x), 3) for x in res_cpu / self.node_cpu],
            "requested_mem_share_per_node": [round(float(x), 3) for x in res_mem / self.node_mem],
            "pods_per_node": np.bincount(self.pod_node, minlength=N).tolist(),
        }
        if self.pod_service:
            out["services"] = len(set(self.pod_service))
        w = self.requests.astype(float)
        if w.sum() > 0:
            out["request_cpu_mean"] = float((self.demand_cpu * w).sum() / w.sum())
            out["request_mem_mean"] = float((self.demand_mem * w).sum() / w.sum())
        return out


@dataclass(frozen=True, eq=False)
class WindowRequests:
    """The requests of one window, pod-major (all of pod 0's, then pod 1's, ...)."""

    counts: np.ndarray
    """``(P,)`` requests per pod."""
    cpu: np.ndarray
    """``(R,)`` cores each request asks for."""
    mem: np.ndarray
    """``(R,)`` GB each request asks for."""

    @property
    def pod(self) -> np.ndarray:
        return np.repeat(np.arange(len(self.counts)), self.counts)


def draw_requests(
    counts: np.ndarray,
    cpu_mean: np.ndarray,
    mem_mean: np.ndarray,
    spread: np.ndarray,
    rng: np.random.Generator,
) -> WindowRequests:
    """Sizes of a window's requests: the pod's mean times a mean-one lognormal factor
    (``exp(spread * z - spread**2 / 2)``), the same factor for cpu and memory. Draws exactly
    ``counts.sum()`` normals, whatever the placement, so paired policy comparisons see the same
    requests."""
    counts = np.asarray(counts, dtype=np.int64)
    pod = np.repeat(np.arange(len(counts)), counts)
    z = rng.standard_normal(len(pod))
    P = len(counts)
    s = np.broadcast_to(np.asarray(spread, dtype=float), (P,))[pod]
    f = np.exp(s * z - 0.5 * s * s)
    cpu = np.broadcast_to(np.asarray(cpu_mean, dtype=float), (P,))[pod]
    mem = np.broadcast_to(np.asarray(mem_mean, dtype=float), (P,))[pod]
    return WindowRequests(counts, cpu * f, mem * f)


def assigned_resources(
    pod_node: np.ndarray,
    request_cpu: np.ndarray,
    request_mem: np.ndarray,
    node_cpu: np.ndarray,
    node_mem: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """BestEffort-style assignment ``(cpu, mem)`` per pod: the node's allocatable cpu split in
    proportion to the cpu requests of its pods (equally if they all request 0), memory as
    requested (scaled down in proportion if the node's requests exceed its allocatable)."""
    N = len(node_cpu)
    rc = np.bincount(pod_node, weights=request_cpu, minlength=N)
    rm = np.bincount(pod_node, weights=request_mem, minlength=N)
    cnt = np.bincount(pod_node, minlength=N)
    tot = rc[pod_node]
    with np.errstate(divide="ignore", invalid="ignore"):
        frac = np.where(tot > 0, request_cpu / tot, 1.0 / np.maximum(cnt[pod_node], 1))
        mem_scale = np.where(rm > node_mem, node_mem / rm, 1.0)
    return node_cpu[pod_node] * frac, request_mem * mem_scale[pod_node]


@dataclass(frozen=True, eq=False)
class WindowResult:
    """What one window did to each pod and node."""

    violated: np.ndarray
    """``(R,)`` request not served (cpu or memory), pod-major like the requests."""
    pod_requests: np.ndarray
    """``(P,)`` requests per pod."""
    pod_violations: np.ndarray
    """``(P,)`` violated requests per pod."""
    node_requests: np.ndarray
    """``(N,)`` requests on each node."""
    node_violations: np.ndarray
    """``(N,)`` violated requests on each node."""
    pod_series: np.ndarray
    """``(P, slots, 2)`` demand (cores, GB) averaged over each slot of the window."""
    node_series: np.ndarray
    """``(N, slots, 2)`` sum of ``pod_series`` over each node's pods."""
    assigned_cpu: np.ndarray
    """``(P,)`` BestEffort cpu assignment (:func:`assigned_resources`)."""
    assigned_mem: np.ndarray
    """``(P,)`` memory assignment."""
    axis: np.ndarray
    """``(N,)`` positions on each node's time axis (serial: its pods' most requests; parallel:
    ``slots``)."""

    @property
    def requests(self) -> int:
        return int(self.pod_requests.sum())

    @property
    def violations(self) -> int:
        return int(self.pod_violations.sum())


def _group_cumsum(order: np.ndarray, keys: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Within-group inclusive cumulative sums of ``values[order]``, ``order`` sorting by key
    (groups contiguous)."""
    v, k = values[order], keys[order]
    cs = np.cumsum(v)
    first = np.ones(len(k), dtype=bool)
    first[1:] = k[1:] != k[:-1]
    before = (cs - v)[first]
    return cs - before[np.cumsum(first) - 1]


def _fits(total: np.ndarray, limit: np.ndarray) -> np.ndarray:
    return total <= limit + _RTOL * np.maximum(np.abs(limit), 1.0)


def serve(
    demand: np.ndarray,
    pod: np.ndarray,
    node: np.ndarray,
    t: np.ndarray,
    n_t: int,
    assigned: np.ndarray,
    capacity: np.ndarray,
    one_per_pod: bool = False,
) -> np.ndarray:
    """Which requests get ``demand`` of one resource (module docstring, "Serving"): first
    within their pod's ``assigned`` amount, shortest first per ``(pod, t)``; then the node's
    unused ``capacity`` per ``(node, t)``, shortest first (ties: request order). Returns a bool
    per request. ``one_per_pod``: every ``(pod, t)`` holds one request (serial mode)."""
    R = len(demand)
    ok = np.zeros(R, dtype=bool)
    if R == 0:
        return ok
    by_size = np.argsort(demand, kind="stable")
    if one_per_pod:
        ok = _fits(demand, assigned[pod])
    else:
        key1 = pod * n_t + t
        o1 = by_size[np.argsort(key1[by_size], kind="stable")]
        ok[o1] = _fits(_group_cumsum(o1, key1, demand), assigned[pod[o1]])
    cell = node * n_t + t
    used = np.bincount(cell, weights=np.where(ok, demand, 0.0), minlength=len(capacity) * n_t)
    rest = by_size[~ok[by_size]]  # unserved, smallest first
    if len(rest):
        left = np.repeat(capacity, n_t) - used
        o2 = rest[np.argsort(cell[rest], kind="stable")]
        ok[o2] = _fits(_group_cumsum(o2, cell, demand), left[cell[o2]])
    return ok


#: Set False to play windows with the numpy path where numba is installed (the kernels' tests
#: compare both)
COMPILED = True


def _kernels() -> Any:
    """:mod:`rlsched.core.pods_kernels` (imported at the first window, so that importing this
    module does not import numba), or None (numba missing, or ``COMPILED`` off)."""
    return loaded("rlsched.core.pods_kernels") if COMPILED else None


def simulate_window(
    pod_node: np.ndarray,
    request_cpu: np.ndarray,
    request_mem: np.ndarray,
    node_cpu: np.ndarray,
    node_mem: np.ndarray,
    reqs: WindowRequests,
    mode: str = "serial",
    slots: int = 10,
) -> WindowResult:
    """Play one window of ``reqs`` with pods placed on ``pod_node`` (module docstring).

    Vectorised over requests (a few sorts and bincounts per resource), no loop over nodes,
    pods or requests; where numba is installed, compiled into one call with the same floats
    (:func:`rlsched.core.pods_kernels.simulate_window`).
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
    if slots < 1:
        raise ValueError("slots must be >= 1")
    pod_node = np.asarray(pod_node, dtype=np.int64)
    node_cpu = np.asarray(node_cpu, dtype=float)
    node_mem = np.asarray(node_mem, dtype=float)
    N, P, S = len(node_cpu), len(pod_node), int(slots)
    counts = np.asarray(reqs.counts, dtype=np.int64)
    kernels = _kernels()
    if kernels is not None:
        out = kernels.simulate_window(
            pod_node, np.asarray(request_cpu, dtype=float), np.asarray(request_mem, dtype=float),
            node_cpu, node_mem, counts, np.asarray(reqs.cpu, dtype=float),
            np.asarray(reqs.mem, dtype=float), mode == "serial", S,
        )  # fmt: skip
        if out is not None:  # the same fields in the same order, but pod_requests
            return WindowResult(out[0], counts, *out[1:])
    R = int(counts.sum())
    pod = np.repeat(np.arange(P), counts)
    start = np.cumsum(counts) - counts
    k = np.arange(R) - start[pod]
    node = pod_node[pod]
    if mode == "serial":
        t = k
        axis = np.zeros(N, dtype=np.int64)
        np.maximum.at(axis, pod_node, counts)
        length = axis[node].astype(float)
        lo = k * S / np.maximum(length, 1.0)
        hi = (k + 1) * S / np.maximum(length, 1.0)
    else:
        t = ((2 * k + 1) * S) // (2 * counts[pod]) if R else k
        axis = np.full(N, S, dtype=np.int64)
        lo, hi = t.astype(float), t + 1.0
    n_t = int(t.max()) + 1 if R else 1

    a_cpu, a_mem = assigned_resources(pod_node, request_cpu, request_mem, node_cpu, node_mem)
    single = mode == "serial"
    ok_cpu = serve(reqs.cpu, pod, node, t, n_t, a_cpu, node_cpu, single)
    ok_mem = serve(reqs.mem, pod, node, t, n_t, a_mem, node_mem, single)
    violated = ~(ok_cpu & ok_mem)

    # time average per slot: request i holds its demand over [lo_i, hi_i) (in slot units)
    if mode == "serial":
        s = np.arange(S, dtype=float)
        overlap = np.minimum(hi[:, None], s + 1.0) - np.maximum(lo[:, None], s)
        rows, cols = np.nonzero(overlap > 0)
        share = overlap[rows, cols]
        key = pod[rows] * S + cols
        w_cpu, w_mem = reqs.cpu[rows] * share, reqs.mem[rows] * share
    else:
        key, w_cpu, w_mem = pod * S + t, reqs.cpu, reqs.mem
    pod_series = np.stack(
        [
            np.bincount(key, weights=w_cpu, minlength=P * S),
            np.bincount(key, weights=w_mem, minlength=P * S),
        ],
        axis=1,
    )
    node_key = np.repeat(pod_node * S, S) + np.tile(np.arange(S), P)
    node_series = np.stack(
        [
            np.bincount(node_key, weights=pod_series[:, 0], minlength=N * S),
            np.bincount(node_key, weights=pod_series[:, 1], minlength=N * S),
        ],
        axis=1,
    ).reshape(N, S, 2)
    pod_series = pod_series.reshape(P, S, 2)

    pod_viol = np.bincount(pod, weights=violated, minlength=P).astype(np.int64)
    return WindowResult(
        violated=violated,
        pod_requests=counts,
        pod_violations=pod_viol,
        node_requests=np.bincount(pod_node, weights=counts, minlength=N).astype(np.int64),
        node_violations=np.bincount(pod_node, weights=pod_viol, minlength=N).astype(np.int64),
        pod_series=pod_series,
        node_series=node_series,
        assigned_cpu=a_cpu,
        assigned_mem=a_mem,
        axis=axis,
    )


def node_load(load: np.ndarray) -> np.ndarray:
    """``(N,)`` each node's load over the window, from its ``(N, slots, 2)`` per-slot cpu and
    memory loads: the larger of the two means over the slots (greedy_migration's order of
    targets). The same float64 numbers as ``load.astype(float).mean(1).max(1)``, faster."""
    s = np.add.reduce(load, axis=1, dtype=np.float64)  # = float64 mean, without its overhead
    s /= load.shape[1]
    return np.asarray(s.max(axis=1))


def greedy_candidates(
    violations: np.ndarray, load: np.ndarray, moves: np.ndarray, k: int
) -> np.ndarray:
    """The ``k`` feasible moves a greedy rebalancer tries first, best first.

    ``violations``: ``(S,)`` the last window's violated requests of the pod in each slot (0 for
    an empty slot); ``load``: ``(N,)`` each node's load; ``moves``: ``(S, N)`` True where the
    pod in slot ``s`` may move to node ``n``. The order is that of ``greedy_migration``'s own
    choice: pods with more violations first (ties: lower slot), each to less loaded nodes first
    (ties: lower node), so its move is always the first; pods without violations come last, in
    the same order. Returns flat ``s * N + n`` indices (at most ``k``).
    """
    N = moves.shape[1]
    order = np.argsort(-violations, kind="stable")  # more violations first, then lower slot
    # only the first pods that give k moves are needed: look at them a block at a time (one
    # block nearly always: a pod can go to most nodes), not at every pod's moves
    pods, found, start = order[:0], 0, 0
    while found < k and start < len(order):
        block = order[start : start + max(k, 16)]
        counts = np.cumsum(moves[block].sum(axis=1))
        enough = int(np.searchsorted(counts, k - found))  # the block's pod that reaches k
        pods = np.concatenate([pods, block[: enough + 1]])
        found += int(counts[min(enough, len(block) - 1)])
        start += len(block)
    nodes = np.argsort(load, kind="stable")  # less loaded first, then lower node
    # row-major nonzero: pod by pod in that order, each pod's nodes in load order
    r, c = np.nonzero(moves[pods][:, nodes])
    return (pods[r[:k]] * N + nodes[c[:k]]).astype(np.int64)
