"""Workflow offloading on edge servers (and a cloud): the static model and its timing rules.

A workflow is a DAG of :class:`OffloadTask` s; each task runs on one :class:`Server`. The timing
model below is the one every part of the package uses (the ``WorkflowOffloading-v0`` env,
:func:`simulate`, and the CP-SAT solver in :mod:`rlsched.core.optimal`):

- **origin**: a workflow arrives at an edge server, its ``origin``, which holds its input and
  must receive its results.
- **transfer**: a task ``t`` on server ``s`` is *ready* at
  ``max over parents p of (finish_p + trans_time(p, server_p, s))`` where
  ``trans_time(p, i, j) = data_p * adj[i][j] / bandwidth + latency[i][j]`` (0 when ``i == j``);
  a source task (no parents) is ready at ``arrival + input_time(s)``,
  ``input_time(s) = input_data * adj[origin][s] / bandwidth + latency[origin][s]`` (0 on the
  origin, or when there is no input). ``latency`` (seconds, default all 0) is a link's fixed
  cost per transfer: the round-trip time a connection pays before its data flows, so a WAN's
  measured RTT enters beside its bandwidth.
- **completion**: the workflow is complete when the output of every sink task (no children)
  is back at the origin: ``max over sinks t of (finish_t + output_time(t, server_t))`` with
  ``output_time(t, s) = data_t * adj[s][origin] / bandwidth + latency[s][origin]`` (0 on the
  origin). The
  *makespan* is the completion minus the arrival.
- **cold start**: if ``s`` lacks ``t``'s image (not in ``s.images`` and not cached), the first
  task of that image on ``s`` *pulls* it: its run is ``pull_time + exec_time`` and it holds its
  cpu and memory for the whole run (as a starting container does). Later tasks of that image on
  ``s`` start no earlier than the pull's end (``start + pull_time``). The image is then cached.
  The cloud holds every image. Edge caches may be bounded (``cache_size`` images, LRU eviction
  in decision order: a use or a pull makes an image most recent; a pull into a full cache
  evicts the least recently used cached image; images in ``s.images`` are never evicted).
  :func:`simulate` uses an unbounded cache unless told otherwise.
- **resources**: a task starts at the earliest time ``>= ready`` (and ``>=`` its image's
  availability) at which ``s`` has the task's cpu and memory free for its whole run (insertion
  list scheduling: a task may fill an earlier gap, it never moves a placed one). Tasks are placed
  in ``order`` (default: topological by decreasing upward rank). The cloud has unlimited cpu and
  memory.
- ``exec_time(t, s) = work_t / speed_s``.

Units: time in seconds, data in MB, bandwidth in MB/s per unit of distance, memory in GB.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rlsched.core.dag import children_of, topological_order

_EPS = 1e-9


@dataclass(frozen=True)
class Server:
    """An edge server (or the cloud): cpu cores, memory GB, relative speed, images it holds."""

    name: str
    cpu: float
    mem: float
    speed: float
    images: frozenset[str]
    is_cloud: bool = False

    def holds(self, image: str) -> bool:
        return self.is_cloud or image in self.images


@dataclass(frozen=True)
class OffloadTask:
    """One workflow task. ``work`` = sum of its instances' exec times at speed 1 (s);
    ``cpu`` / ``mem`` = sum of its instances' (held while running); ``data`` = ``d_i``, the
    output size sent to each child (MB); ``parents`` = indices of its direct predecessors."""

    name: str
    image: str
    cpu: float
    mem: float
    work: float
    data: float
    parents: tuple[int, ...] = ()


@dataclass(frozen=True)
class OffloadInstance:
    """One workflow on a set of servers: the static problem a solver sees.

    ``origin`` is the server the workflow arrives at (its input is there and its sinks' outputs
    go back there); ``input_data`` is the MB *each* source task receives from the origin.
    """

    servers: tuple[Server, ...]
    adj: np.ndarray
    bandwidth: float
    pull_time: float
    tasks: tuple[OffloadTask, ...]
    arrival: float = 0.0
    name: str = ""
    origin: int = 0
    input_data: float = 0.0
    #: ``(servers, servers)`` fixed seconds per transfer between two servers (a link's RTT);
    #: None: no latency term.
    latency: np.ndarray | None = None

    def __post_init__(self) -> None:
        n = len(self.tasks)
        for i, t in enumerate(self.tasks):
            for p in t.parents:
                if not 0 <= p < n or p == i:
                    raise ValueError(f"task {t.name!r} has bad parent {p}")
        s = len(self.servers)
        if np.shape(self.adj) != (s, s):
            raise ValueError(f"adj must be ({s}, {s}), got {np.shape(self.adj)}")
        if self.bandwidth <= 0:
            raise ValueError("bandwidth must be positive")
        if not 0 <= self.origin < s:
            raise ValueError(f"origin {self.origin} out of range for {s} servers")
        if self.input_data < 0:
            raise ValueError("input_data must be >= 0")
        if self.latency is not None:
            if np.shape(self.latency) != (s, s):
                raise ValueError(f"latency must be ({s}, {s}), got {np.shape(self.latency)}")
            if np.any(np.asarray(self.latency) < 0):
                raise ValueError("latency must be >= 0")

    def _lat(self, i: int, j: int) -> float:
        return 0.0 if self.latency is None else float(self.latency[i][j])

    def exec_time(self, t: int, s: int) -> float:
        return self.tasks[t].work / self.servers[s].speed

    def trans_time(self, p: int, i: int, j: int) -> float:
        if i == j:
            return 0.0
        return float(self.tasks[p].data * self.adj[i][j] / self.bandwidth) + self._lat(i, j)

    def input_time(self, s: int) -> float:
        """Time to move a source task's input from the origin to server ``s``."""
        if s == self.origin or self.input_data == 0:
            return 0.0
        o = self.origin
        return float(self.input_data * self.adj[o][s] / self.bandwidth) + self._lat(o, s)

    def output_time(self, t: int, s: int) -> float:
        """Time to move task ``t``'s output from server ``s`` back to the origin (counts for
        sink tasks only, see :meth:`is_sink`)."""
        if s == self.origin:
            return 0.0
        o = self.origin
        return float(self.tasks[t].data * self.adj[s][o] / self.bandwidth) + self._lat(s, o)

    def is_sink(self, t: int) -> bool:
        """``t`` has no children: its output goes back to the origin."""
        return t not in self._parents_set()

    def sinks(self) -> list[int]:
        ps = self._parents_set()
        return [t for t in range(len(self.tasks)) if t not in ps]

    def _parents_set(self) -> frozenset[int]:
        cached = self.__dict__.get("_pset")
        if cached is None:
            cached = frozenset(p for t in self.tasks for p in t.parents)
            object.__setattr__(self, "_pset", cached)
        return cached

    def completion_time(self, server: Sequence[int] | np.ndarray, finish: Any) -> float:
        """Absolute time every sink's output is back at the origin."""
        return max(
            (float(finish[t]) + self.output_time(t, int(server[t])) for t in self.sinks()),
            default=self.arrival,
        )

    def can_host(self, t: int, s: int) -> bool:
        srv, task = self.servers[s], self.tasks[t]
        return srv.is_cloud or (task.cpu <= srv.cpu + _EPS and task.mem <= srv.mem + _EPS)

    def children(self) -> list[list[int]]:
        return children_of([t.parents for t in self.tasks])

    def upward_rank(self) -> np.ndarray:
        """HEFT upward rank: ``mean exec + max over children (mean transfer + rank child)``,
        means over all servers (transfers over all ordered pairs of distinct servers)."""
        n, m = len(self.tasks), len(self.servers)
        inv_speed = np.mean([1.0 / s.speed for s in self.servers])
        adj = np.asarray(self.adj, dtype=float)
        mean_dist = float(adj.sum() / (m * (m - 1))) if m > 1 else 0.0
        lat = 0.0 if self.latency is None else float(np.sum(self.latency))
        mean_lat = lat / (m * (m - 1)) if m > 1 else 0.0
        kids = self.children()
        rank = np.zeros(n)
        for t in reversed(topological_order([t.parents for t in self.tasks])):
            task = self.tasks[t]
            comm = task.data * mean_dist / self.bandwidth + mean_lat
            best = max((comm + rank[c] for c in kids[t]), default=0.0)
            rank[t] = task.work * inv_speed + best
        return rank

    def depth(self) -> np.ndarray:
        """Each task's depth: the longest chain of predecessors above it (0 for a source)."""
        dep = np.zeros(len(self.tasks))
        for t in topological_order([t.parents for t in self.tasks]):
            dep[t] = max((dep[p] + 1 for p in self.tasks[t].parents), default=0.0)
        return dep

    def descendant_load(self) -> np.ndarray:
        """What each task's subtree asks of the servers, ``(tasks, 3)``: the cpu-work of its
        descendants (sum of ``cpu * work``, core-seconds at speed 1), their number, and the most
        of them at one depth (longest chain of predecessors). PEFT's :meth:`optimistic_cost`
        assumes no server is ever busy; these say how far a server's cores fall short when the
        subtree follows its root there (its data is there)."""
        n = len(self.tasks)
        order = topological_order([t.parents for t in self.tasks])
        depth = self.depth().astype(int)
        kids = self.children()
        below: list[set[int]] = [set() for _ in range(n)]
        for t in reversed(order):
            for c in kids[t]:
                below[t] |= below[c] | {c}
        work = np.array([t.cpu * t.work for t in self.tasks])
        out = np.zeros((n, 3))
        for t, d in enumerate(below):
            if d:
                idx = np.fromiter(d, dtype=int, count=len(d))
                out[t] = work[idx].sum(), len(d), np.bincount(depth[idx]).max()
        return out

    def topological_order(self) -> list[int]:
        """Topological order, highest upward rank first among ready tasks (HEFT's order)."""
        return topological_order([t.parents for t in self.tasks], self.upward_rank())

    def optimistic_cost(self) -> np.ndarray:
        """PEFT's optimistic cost table (Arabnejad & Barbosa, "List scheduling algorithm for
        heterogeneous systems by an optimistic cost table", IEEE TPDS 2014), ``(tasks,
        servers)``: ``oct[t, s]`` is the shortest time from ``t``'s finish on ``s`` to the end
        of its longest path, every later task on the server that suits it best and no server
        ever busy::

            oct[t, s] = max over children c of
                        min over servers j that can host c of
                        oct[c, j] + exec_time(c, j) + trans_time(t, s, j) + back(c, j)

        where ``back(c, j)`` is a sink child's output return to the origin (0 for other
        children), so the table counts the return that completes the workflow; a sink's own
        entry is 0 (its return is already in its finish estimate, ``done``). Image pulls and
        queueing are left out (optimistic). PEFT places a task on the server of least
        ``finish + oct``: HEFT's earliest finish, looking down the rest of the DAG."""
        n, m = len(self.tasks), len(self.servers)
        per_mb = np.asarray(self.adj, dtype=float) / self.bandwidth
        lat = np.zeros((m, m)) if self.latency is None else np.asarray(self.latency, float)
        off_diag = ~np.eye(m, dtype=bool)
        speed = np.array([s.speed for s in self.servers])
        o = self.origin
        kids = self.children()
        host = np.array([[self.can_host(t, j) for j in range(m)] for t in range(n)])
        table = np.zeros((n, m))
        for t in reversed(topological_order([t.parents for t in self.tasks])):
            if not kids[t]:
                continue
            trans = (self.tasks[t].data * per_mb + lat) * off_diag  # (s, j)
            best = np.full(m, -np.inf)
            for c in kids[t]:
                task = self.tasks[c]
                tail = table[c] + task.work / speed
                if not kids[c]:
                    ret = task.data * per_mb[:, o] + lat[:, o]
                    ret[o] = 0.0
                    tail = tail + ret
                tail = np.where(host[c], tail, np.inf)
                best = np.maximum(best, (trans + tail[None, :]).min(axis=1))
            table[t] = best
        return table


@dataclass
class Schedule:
    """Per task: server index, start, finish (pull included) and whether it paid the pull.

    ``complete`` is the absolute time the workflow completes (every sink's output back at the
    origin, :meth:`OffloadInstance.completion_time`); when None the last finish stands in.
    """

    server: np.ndarray
    start: np.ndarray
    finish: np.ndarray
    pulled: np.ndarray
    arrival: float = 0.0
    complete: float | None = None

    @property
    def makespan(self) -> float:
        if len(self.finish) == 0:
            return 0.0
        end = float(np.max(self.finish)) if self.complete is None else float(self.complete)
        return end - self.arrival


#: point-run pairs from which :func:`_peak` sums with numpy (below: a Python loop is faster)
_VECTOR_PAIRS = 256


def _peak(
    intervals: list[tuple[float, float, float, float]], t0: float, t1: float
) -> tuple[float, float]:
    """Peak cpu and memory of ``intervals`` (``(start, end, cpu, mem)``) during ``[t0, t1)``:
    their sums at ``t0`` and at each start inside the span."""
    # only runs overlapping the span can be running at a point of it; kept in their order,
    # so each point's sums add the same numbers in the same order as over all runs
    live = [iv for iv in intervals if iv[0] < t1 and iv[1] > t0]
    points = [t0] + [iv[0] for iv in live if iv[0] > t0]
    if len(points) * len(live) >= _VECTOR_PAIRS:
        # the same sums as the loop below: a running sum along each point's row adds the runs
        # in their order (np.add.accumulate is sequential), a run not running there adds 0.0
        a = np.array(live)
        xs = np.array(points)[:, None]
        on = (a[:, 0] <= xs) & (xs < a[:, 1])
        cs = np.add.accumulate(np.where(on, a[:, 2], 0.0), axis=1)[:, -1]
        ms = np.add.accumulate(np.where(on, a[:, 3], 0.0), axis=1)[:, -1]
        return max(0.0, float(cs.max())), max(0.0, float(ms.max()))
    pc = pm = 0.0
    for x in points:
        c = m = 0.0
        for s, e, cpu, mem in live:
            if s <= x < e:
                c += cpu
                m += mem
        if c > pc:  # max(pc, c), without the call
            pc = c
        if m > pm:
            pm = m
    return pc, pm


#: runs from which ``earliest_fit`` screens its candidates with numpy (:func:`_clear_fits`)
_VECTOR_RUNS = 24


def _clear_fits(
    intervals: list[tuple[float, float, float, float]],
    cand: list[float],
    span: float,
    cpu: float,
    mem: float,
    cap_c: float,
    cap_m: float,
) -> np.ndarray | None:
    """Per candidate start: 1 where a task of ``cpu`` / ``mem`` for ``span`` surely fits under
    the caps, -1 where it surely does not, 0 where the sums' rounding could decide (None: too
    few runs to be worth it). The peaks are :func:`_peak`'s, summed in numpy's order; a margin
    far above any rounding of those sums keeps every decision the exact sums would take."""
    if len(intervals) < _VECTOR_RUNS:
        return None
    a = np.array(intervals)
    s, e = a[:, 0], a[:, 1]
    t = np.array(cand)

    def at(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # reserved at each point x
        on = ((s <= x[:, None]) & (x[:, None] < e)).astype(float)
        return on @ a[:, 2], on @ a[:, 3]

    ct, mt = at(t)
    cs, ms = at(s)
    inside = (s > t[:, None]) & (s < (t + span)[:, None])  # the starts within each span
    pc = np.maximum(ct, np.where(inside, cs, 0.0).max(axis=1))
    pm = np.maximum(mt, np.where(inside, ms, 0.0).max(axis=1))
    tol_c = 1e-6 * (1.0 + float(a[:, 2].sum()) + abs(cap_c))
    tol_m = 1e-6 * (1.0 + float(a[:, 3].sum()) + abs(cap_m))
    over_c, over_m = pc + cpu - cap_c, pm + mem - cap_m
    fits = (over_c <= -tol_c) & (over_m <= -tol_m)
    fails = (over_c > tol_c) | (over_m > tol_m)
    return fits.astype(np.int8) - fails.astype(np.int8)


@dataclass
class ServerState:
    """The time-varying state of one server: reserved intervals and the image cache.

    ``intervals`` holds ``(start, end, cpu, mem)`` of placed runs; ``cache`` maps an image
    pulled here to the time its pull ends (LRU order, most recent last).
    """

    server: Server
    cache_size: int | None = None
    intervals: list[tuple[float, float, float, float]] = field(default_factory=list)
    cache: OrderedDict[str, float] = field(default_factory=OrderedDict)

    def __deepcopy__(self, memo: dict[int, Any]) -> ServerState:
        # what an env snapshot copies at every rollout: the server is frozen and the intervals
        # are tuples of floats, so two shallow copies are a deep one
        new = ServerState(self.server, self.cache_size, list(self.intervals), self.cache.copy())
        memo[id(self)] = new  # a state referenced twice stays one state in the copy
        return new

    def image_ready(self, image: str) -> float | None:
        """When ``image`` is usable here: ``-inf`` if held, the pull's end if cached, else None."""
        if self.server.holds(image):
            return -np.inf
        return self.cache.get(image)

    def usage(self, t0: float, t1: float) -> tuple[float, float]:
        """Peak cpu and memory reserved during ``[t0, t1)``."""
        return _peak(self.intervals, t0, t1)

    def earliest_fit(self, lower: float, dur: float, cpu: float, mem: float) -> float:
        """Earliest ``t >= lower`` with ``cpu`` / ``mem`` free during ``[t, t + dur)``."""
        if self.server.is_cloud:
            return lower
        # runs ended by ``lower`` reserve nothing at any candidate's span
        later = [iv for iv in self.intervals if iv[1] > lower]
        cand = sorted({lower, *(iv[1] for iv in later)})
        cap_c, cap_m = self.server.cpu + _EPS, self.server.mem + _EPS
        span = max(dur, _EPS)
        clear = _clear_fits(later, cand, span, cpu, mem, cap_c, cap_m)
        for j, t in enumerate(cand):
            if clear is not None and clear[j] != 0:  # decided beyond any rounding of the sums
                if clear[j] > 0:
                    return t
                continue
            c, m = _peak(later, t, t + span)
            if c + cpu <= cap_c and m + mem <= cap_m:
                return t
        return cand[-1]  # unreachable for a hostable task: after every interval all is free

    def plan(
        self, ready: float, dur: float, cpu: float, mem: float, image: str, pull_time: float
    ) -> tuple[float, float, bool]:
        """``(start, finish, pulled)`` of a task ready at ``ready``; changes nothing."""
        avail = self.image_ready(image)
        pulled = avail is None
        lower = ready if avail is None else max(ready, avail)
        run = dur + (pull_time if pulled else 0.0)
        start = self.earliest_fit(float(lower), run, cpu, mem)
        return start, start + run, pulled

    def commit(
        self,
        start: float,
        finish: float,
        cpu: float,
        mem: float,
        image: str,
        pulled: bool,
        pull_time: float,
    ) -> str | None:
        """Reserve the run and update the cache; returns an evicted image, if any."""
        if not self.server.is_cloud:
            self.intervals.append((start, finish, cpu, mem))
        evicted = None
        if pulled:
            self.cache[image] = start + pull_time
            if self.cache_size is not None and len(self.cache) > self.cache_size:
                evicted, _ = self.cache.popitem(last=False)
        elif image in self.cache:
            self.cache.move_to_end(image)
        return evicted

    def prune(self, now: float) -> None:
        """Forget intervals that ended by ``now`` (no later task can start before ``now``)."""
        self.intervals = [iv for iv in self.intervals if iv[1] > now]


def ready_time(
    inst: OffloadInstance, t: int, s: int, server: Sequence[int] | np.ndarray, finish: Any
) -> float:
    """When task ``t``'s inputs are all on server ``s`` (parents placed in ``server``); a
    source task's input comes from the origin (:meth:`OffloadInstance.input_time`)."""
    parents = inst.tasks[t].parents
    r = inst.arrival
    if not parents:
        return r + inst.input_time(s)
    for p in parents:
        r = max(r, float(finish[p]) + inst.trans_time(p, int(server[p]), s))
    return r


def simulate(
    inst: OffloadInstance,
    server: Sequence[int],
    order: Sequence[int] | None = None,
    cache_size: int | None = None,
) -> Schedule:
    """Schedule ``inst`` with task ``t`` on ``server[t]``, placing tasks in ``order``.

    Validates the assignment (hostable servers, a topological order) and checks the result
    (dependencies and capacity); raises ``ValueError`` on any violation.
    """
    n, m = len(inst.tasks), len(inst.servers)
    server = [int(s) for s in server]
    if len(server) != n:
        raise ValueError(f"need {n} server indices, got {len(server)}")
    for t, s in enumerate(server):
        if not 0 <= s < m:
            raise ValueError(f"task {t}: server {s} out of range")
        if not inst.can_host(t, s):
            raise ValueError(f"task {t} does not fit on server {inst.servers[s].name}")
    order = inst.topological_order() if order is None else [int(t) for t in order]
    if sorted(order) != list(range(n)):
        raise ValueError("order must be a permutation of the tasks")
    states = [ServerState(sv, None if sv.is_cloud else cache_size) for sv in inst.servers]
    start, finish = np.full(n, np.nan), np.full(n, np.nan)
    pulled = np.zeros(n, dtype=bool)
    done = np.zeros(n, dtype=bool)
    for t in order:
        task = inst.tasks[t]
        if not all(done[p] for p in task.parents):
            raise ValueError(f"order places task {t} before a parent")
        s = server[t]
        ready = ready_time(inst, t, s, server, finish)
        st, fi, pu = states[s].plan(
            ready, inst.exec_time(t, s), task.cpu, task.mem, task.image, inst.pull_time
        )
        states[s].commit(st, fi, task.cpu, task.mem, task.image, pu, inst.pull_time)
        start[t], finish[t], pulled[t], done[t] = st, fi, pu, True
    sched = Schedule(
        np.asarray(server),
        start,
        finish,
        pulled,
        inst.arrival,
        inst.completion_time(server, finish),
    )
    check_schedule(inst, sched)
    return sched


def check_schedule(inst: OffloadInstance, sched: Schedule, tol: float = 1e-6) -> None:
    """Raise ``ValueError`` if ``sched`` breaks a dependency or a server's capacity."""
    n = len(inst.tasks)
    for t in range(n):
        s = int(sched.server[t])
        run = inst.exec_time(t, s) + (inst.pull_time if sched.pulled[t] else 0.0)
        if abs(sched.finish[t] - sched.start[t] - run) > tol:
            raise ValueError(f"task {t}: finish - start != run time")
        ready = ready_time(inst, t, s, sched.server, sched.finish)
        if sched.start[t] < ready - tol:
            raise ValueError(f"task {t} starts before its inputs arrive")
    for s, srv in enumerate(inst.servers):
        if srv.is_cloud:
            continue
        ts = [t for t in range(n) if sched.server[t] == s]
        for t in ts:
            x = sched.start[t]
            live = [u for u in ts if sched.start[u] <= x + tol and sched.finish[u] > x + tol]
            cpu = sum(inst.tasks[u].cpu for u in live)
            mem = sum(inst.tasks[u].mem for u in live)
            if cpu > srv.cpu + tol or mem > srv.mem + tol:
                raise ValueError(f"server {srv.name} over capacity at t={x:.3f}")
    if sched.complete is not None and n:
        want = inst.completion_time(sched.server, sched.finish)
        if abs(sched.complete - want) > tol:
            raise ValueError("schedule's completion != last sink output back at the origin")


#: The worked example's numbers (the patent gives them only in a figure; these are ours).
PATENT_WORK = (0.4, 0.5, 0.3, 0.6, 0.4, 0.3)
PATENT_DATA = (0.2, 0.3, 0.1, 0.2, 0.3, 0.1)
PATENT_EDGES = ((1, 2), (1, 3), (2, 4), (2, 5), (3, 5), (4, 6), (5, 6))


def patent_example(
    work: Sequence[float] = PATENT_WORK,
    data: Sequence[float] = PATENT_DATA,
    pull_time: float = 0.5,
    cpu: float = 1.0,
    mem: float = 1.0,
    bandwidth: float = 1.0,
    speeds: Sequence[float] = (1.0, 1.0, 0.8),
) -> OffloadInstance:
    """The issue's worked example: 3 edge servers, no cloud, six tasks.

    Servers ``es1 = (6 cpu, 3 GB, {a})``, ``es2 = (3, 2, {b})``, ``es3 = (2, 1, {a})``;
    ``adj = [[0, 1, 1.2], [1, 0, 0.2], [1.2, 0.2, 0]]``; tasks 1..6 (indices 0..5) with images
    ``a, b, a, b, a, b`` and edges ``1->2, 1->3, 2->4, 2->5, 3->5, 4->6, 5->6``. The patent's
    execution times, demands and data sizes are only in its figure, so we choose: work
    ``(0.4, 0.5, 0.3, 0.6, 0.4, 0.3)`` s, data ``(0.2, 0.3, 0.1, 0.2, 0.3, 0.1)`` MB, cpu 1 and
    mem 1 GB per task, bandwidth 1 MB/s per unit distance, pull 0.5 s, speeds ``(1, 1, 0.8)``
    (es3, the smallest server, is also the slowest; with equal speeds es3 ties es1 for task 1
    and the look-ahead prefers es3, which is closer to es2). The workflow arrives at es1
    (``origin`` 0) with no input to move (``input_data`` 0); its sink, task 6, sends its
    0.1 MB back to es1 (0.1 s from es2).
    """
    servers = (
        Server("es1", 6.0, 3.0, float(speeds[0]), frozenset({"a"})),
        Server("es2", 3.0, 2.0, float(speeds[1]), frozenset({"b"})),
        Server("es3", 2.0, 1.0, float(speeds[2]), frozenset({"a"})),
    )
    adj = np.array([[0.0, 1.0, 1.2], [1.0, 0.0, 0.2], [1.2, 0.2, 0.0]])
    images = "ababab"
    parents: dict[int, list[int]] = {i: [] for i in range(6)}
    for a, b in PATENT_EDGES:
        parents[b - 1].append(a - 1)
    tasks = tuple(
        OffloadTask(
            f"task{i + 1}",
            images[i],
            cpu,
            mem,
            float(work[i]),
            float(data[i]),
            tuple(parents[i]),
        )
        for i in range(6)
    )
    return OffloadInstance(
        servers, adj, bandwidth, pull_time, tasks, 0.0, "patent-example", origin=0, input_data=0.0
    )


def eft_order(done: np.ndarray, transfer: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The valid servers in earliest-finish order: by ``done`` (finish, plus a sink's return to
    the origin), then less ``transfer``, then lower index. Its first is HEFT's server; the env's
    ``candidates`` keeps its first few (a policy anchored to HEFT)."""
    valid = np.flatnonzero(mask)
    return valid[np.lexsort((valid, np.asarray(transfer)[valid], np.asarray(done)[valid]))]
