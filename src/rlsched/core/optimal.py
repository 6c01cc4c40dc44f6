"""Exact solver and lower bound for static workflow offloading (edge servers + cloud).

The CP-SAT model follows the timing model of :func:`rlsched.core.offloading.simulate`:

* task ``t`` on server ``s`` starts no earlier than ``finish_p + trans_time(p, server_p, s)`` for
  every parent ``p`` (sources: ``arrival + input_time(s)``, their input comes from the origin);
* cold start: on a server lacking ``t``'s image, the *first* task of that image runs
  ``pull_time + exec_time`` (holding its cpu and mem), and every later task of the image on that
  server starts no earlier than ``start_first + pull_time``;
* every edge server's cpu and mem capacity holds at every instant (the cloud is unlimited);
* the makespan is at least ``end_t + output_time(t, s)`` for every sink ``t`` on server ``s``
  (its output goes back to the origin).

Times are integer *ticks* (``tick`` seconds, 1 ms by default): each duration is rounded to the
nearest tick, so the CP-SAT optimum is exact for instances whose times are whole ticks and within
a few ticks of the continuous optimum otherwise. The returned :class:`SolveResult` carries both the
CP-SAT makespan and the makespan of the same assignment and order re-timed by ``simulate``
(float arithmetic, list scheduling in CP-SAT start order). The re-timed schedule is never later
than the CP-SAT one up to rounding (list scheduling in start order places every task at or
before its CP-SAT start) and the two agree exactly for whole-tick instances.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from rlsched.core.offloading import (
    OffloadInstance,
    OffloadTask,
    Schedule,
    Server,
    ServerState,
    ready_time,
    simulate,
)
from rlsched.optional import require

__all__ = [
    "SolveResult",
    "brute_force",
    "critical_path",
    "greedy_assignment",
    "lower_bound",
    "random_instance",
    "solve",
    "topological_orders",
]


# ----------------------------------------------------------------------------- helpers


def _pull(inst: OffloadInstance, image: str) -> float:
    """Pull time of an image (one value per instance)."""
    return float(inst.pull_time)


def _lacks(inst: OffloadInstance, s: int, image: str) -> bool:
    """Does server ``s`` have to pull ``image`` before its first task of it runs?"""
    return not inst.servers[s].holds(image)


def _limited(inst: OffloadInstance, s: int) -> bool:
    srv = inst.servers[s]
    return not srv.is_cloud and math.isfinite(srv.cpu) and math.isfinite(srv.mem)


def _hosts(inst: OffloadInstance, t: int) -> list[int]:
    return [s for s in range(len(inst.servers)) if inst.can_host(t, s)]


def critical_path(inst: OffloadInstance) -> float:
    """Longest source-to-sink path, each task at its fastest feasible execution time, plus the
    cheapest input / output transfers to and from the origin (transfers between tasks and pulls
    ignored).

    Per task, a lower bound on its finish over every server ``s`` it may run on:
    ``min_s max(P_t, input_time(s) if t is a source) + exec(t, s)`` with ``P_t`` the parents'
    bounds; a sink adds ``output_time(t, s)`` inside the min. Valid whatever the assignment,
    since on the server it does run on a task waits at least that long.
    """
    n = len(inst.tasks)
    best = [0.0] * n
    sinks = set(inst.sinks())
    out = 0.0
    for t in inst.topological_order():
        hosts = _hosts(inst, t)
        parents = inst.tasks[t].parents
        ready = max((best[p] for p in parents), default=0.0)

        def at(s: int, ready: float = ready, t: int = t, parents: tuple = parents) -> float:
            r = ready if parents else max(ready, inst.input_time(s))
            return r + inst.exec_time(t, s)

        best[t] = min((at(s) for s in hosts), default=ready)
        if t in sinks:
            done = min((at(s) + inst.output_time(t, s) for s in hosts), default=best[t])
            out = max(out, done)
    return max(out, max(best, default=0.0))


def lower_bound(inst: OffloadInstance) -> float:
    """A makespan no schedule of ``inst`` can beat (relative to its arrival).

    The maximum of

    * the critical path with every task at its fastest feasible execution time, plus the
      cheapest input transfer from the origin into each source and output transfer from each
      sink back to it (:func:`critical_path`; no transfers between tasks, no pulls): the
      textbook "critical path on the fastest server" term, tightened per task;
    * a resource-work term: server ``s`` processes at most ``cap_s * speed_s`` units of
      ``demand * work`` per second, so ``sum_t cpu_t * work_t / sum_s cpu_s * speed_s`` (and the
      same for mem). With ``cpu_t == cap_s == 1`` this is the textbook "total work over total
      speed"; that naive form is *not* valid here, because a server runs tasks concurrently while
      its cpu and mem allow. With an unlimited cloud the term is vacuous (the cloud can run
      everything at once) and only the critical path remains.
    """
    cp = critical_path(inst)
    if any(not _limited(inst, s) for s in range(len(inst.servers))):
        return cp
    terms = [cp]
    for attr in ("cpu", "mem"):
        demand = sum(getattr(t, attr) * t.work for t in inst.tasks)
        supply = sum(getattr(s, attr) * s.speed for s in inst.servers)
        if supply > 0:
            terms.append(demand / supply)
    return max(terms)


# ----------------------------------------------------------------------------- greedy


def greedy_assignment(inst: OffloadInstance) -> tuple[list[int], list[int]]:
    """HEFT-like warm start: tasks in HEFT order (decreasing upward rank), each on the server
    giving the earliest finish under the simulator's rules (insertion, pulls, capacities).

    Returns ``(server_per_task, order)``; ``simulate(inst, server, order)`` reproduces it.
    """
    n = len(inst.tasks)
    states = [ServerState(sv) for sv in inst.servers]
    server = [-1] * n
    start = [0.0] * n
    finish = [0.0] * n
    topo = inst.topological_order()
    sinks = set(inst.sinks())
    for t in topo:
        task = inst.tasks[t]
        best: tuple[float, int, float, bool, float] | None = None
        for s in _hosts(inst, t):
            ready = ready_time(inst, t, s, server, finish)
            st, fi, pu = states[s].plan(
                ready, inst.exec_time(t, s), task.cpu, task.mem, task.image, inst.pull_time
            )
            done = fi + (inst.output_time(t, s) if t in sinks else 0.0)
            if best is None or done < best[4] - 1e-12:
                best = (fi, s, st, pu, done)
        if best is None:
            raise ValueError(f"task {t} ({task.name}) fits on no server")
        fi, s, st, pu, _ = best
        states[s].commit(st, fi, task.cpu, task.mem, task.image, pu, inst.pull_time)
        server[t], start[t], finish[t] = s, st, fi
    return server, topo


# ----------------------------------------------------------------------------- CP-SAT


@dataclass(frozen=True)
class SolveResult:
    """Outcome of :func:`solve`.

    ``makespan`` is CP-SAT's (ticks converted to seconds; the warm start's when CP-SAT found
    nothing in time, status ``UNKNOWN``); ``schedule`` is the same assignment
    and order re-timed by ``simulate`` and ``sim_makespan`` its makespan (equal for whole-tick
    instances, never larger otherwise up to rounding). ``bound`` is the best proven lower bound
    (CP-SAT's, or :func:`lower_bound`, whichever is larger). ``status`` is CP-SAT's status name.
    """

    schedule: Schedule
    makespan: float
    proven_optimal: bool
    status: str
    bound: float
    wall_s: float
    sim_makespan: float = float("nan")
    hint_makespan: float = float("nan")


def _ticks(x: float, tick: float) -> int:
    return round(x / tick)


def _units(x: float) -> int:
    """Capacities and demands as integers (exact for up to 3 decimals)."""
    return round(x * 1000)


def solve(
    inst: OffloadInstance,
    time_limit: float = 10.0,
    workers: int = 1,
    tick: float = 1e-3,
    hint: bool = True,
    seed: int = 0,
    work_limit: float | None = None,
) -> SolveResult:
    """Minimum-makespan schedule of ``inst`` by CP-SAT (see the module docstring).

    ``time_limit``: wall-clock seconds. ``work_limit``: CP-SAT's deterministic time (its
    ``max_deterministic_time``, units of work of about a second each on this kind of machine):
    with one worker and a fixed ``seed`` the search, and so the schedule returned when the
    limit stops it, is the same on a busy machine as on an idle one, where a wall-clock limit
    stops it earlier the busier the machine is. With both, the first reached stops it."""
    cp_model = require("ortools.sat.python.cp_model", extra="solver", what="the CP-SAT solver")

    t0 = time.perf_counter()
    n, m = len(inst.tasks), len(inst.servers)
    tasks = inst.tasks
    hosts = [_hosts(inst, t) for t in range(n)]
    for t in range(n):
        if not hosts[t]:
            raise ValueError(f"task {t} ({tasks[t].name}) fits on no server")
    children: list[list[int]] = [[] for _ in range(n)]
    for c in range(n):
        for p in tasks[c].parents:
            children[p].append(c)

    exec_tk = {(t, s): _ticks(inst.exec_time(t, s), tick) for t in range(n) for s in hosts[t]}
    pull_tk = {t: _ticks(_pull(inst, tasks[t].image), tick) for t in range(n)}
    trans_tk = {
        (p, i, j): _ticks(inst.trans_time(p, i, j), tick)
        for p in range(n)
        if children[p]
        for i in hosts[p]
        for j in range(m)
    }
    sinks = [t for t in range(n) if not children[t]]
    in_tk = {s: _ticks(inst.input_time(s), tick) for s in range(m)}
    out_tk = {(t, s): _ticks(inst.output_time(t, s), tick) for t in sinks for s in hosts[t]}
    # a trivially feasible horizon: everything one after the other, slowest choices
    horizon = sum(max(exec_tk[t, s] for s in hosts[t]) + pull_tk[t] for t in range(n))
    horizon += max(in_tk.values(), default=0) + max(out_tk.values(), default=0)
    horizon += sum(
        max((trans_tk[p, i, j] for i in hosts[p] for j in hosts[c]), default=0)
        for c in range(n)
        for p in tasks[c].parents
    )
    horizon = max(horizon, 1)

    md = cp_model.CpModel()
    x = {(t, s): md.NewBoolVar(f"x_{t}_{s}") for t in range(n) for s in hosts[t]}
    start = [md.NewIntVar(0, horizon, f"start_{t}") for t in range(n)]
    end = [md.NewIntVar(0, horizon, f"end_{t}") for t in range(n)]
    first: dict[tuple[int, int], Any] = {}  # cp_model.IntVar
    for t in range(n):
        md.AddExactlyOne(x[t, s] for s in hosts[t])
        for s in hosts[t]:
            if _lacks(inst, s, tasks[t].image) and pull_tk[t] > 0:
                first[t, s] = md.NewBoolVar(f"first_{t}_{s}")
                md.AddImplication(first[t, s], x[t, s])
        dur = sum(exec_tk[t, s] * x[t, s] for s in hosts[t])
        dur += sum(pull_tk[t] * first[t, s] for s in hosts[t] if (t, s) in first)
        md.Add(end[t] == start[t] + dur)

    # cold starts: exactly one first task per (image, lacking server) used, the rest wait
    by_image: dict[tuple[str, int], list[int]] = {}
    for t, s in first:
        by_image.setdefault((tasks[t].image, s), []).append(t)
    for (_, s), group in by_image.items():
        md.AddAtMostOne(first[t, s] for t in group)
        for u in group:
            md.Add(sum(first[t, s] for t in group) >= 1).OnlyEnforceIf(x[u, s])
        for t, u in itertools.permutations(group, 2):
            md.Add(start[u] >= start[t] + pull_tk[t]).OnlyEnforceIf([first[t, s], x[u, s]])

    # capacities of the edge servers
    for s in range(m):
        if not _limited(inst, s):
            continue
        on = [t for t in range(n) if s in hosts[t]]
        if not on:
            continue
        ivs, cpu, mem = [], [], []
        for t in on:
            size = md.NewIntVar(0, horizon, f"size_{t}_{s}")
            md.Add(size == end[t] - start[t])
            ivs.append(md.NewOptionalIntervalVar(start[t], size, end[t], x[t, s], f"iv_{t}_{s}"))
            cpu.append(_units(tasks[t].cpu))
            mem.append(_units(tasks[t].mem))
        srv = inst.servers[s]
        if any(cpu):
            md.AddCumulative(ivs, cpu, _units(srv.cpu))
        if any(mem):
            md.AddCumulative(ivs, mem, _units(srv.mem))

    # precedences with communication: if p runs on i, c starts after end_p + trans(p, i, j(c))
    for c in range(n):
        for p in tasks[c].parents:
            md.Add(start[c] >= end[p])
            for i in hosts[p]:
                terms = [(trans_tk[p, i, j], x[c, j]) for j in hosts[c] if trans_tk[p, i, j] > 0]
                if terms:
                    md.Add(start[c] >= end[p] + sum(k * v for k, v in terms)).OnlyEnforceIf(x[p, i])

    # sources wait for their input from the origin
    for t in range(n):
        if not tasks[t].parents:
            terms = [(in_tk[s], x[t, s]) for s in hosts[t] if in_tk[s] > 0]
            if terms:
                md.Add(start[t] >= sum(k * v for k, v in terms))

    # the workflow completes when every sink's output is back at the origin
    makespan = md.NewIntVar(0, horizon, "makespan")
    for t in sinks:
        terms = [(out_tk[t, s], x[t, s]) for s in hosts[t] if out_tk[t, s] > 0]
        md.Add(makespan >= end[t] + sum(k * v for k, v in terms))
    # rounding slack (a path has <= n + 2 rounded durations): never cut optima
    lb_tk = math.floor(lower_bound(inst) / tick + 1e-9) - n - 2
    if lb_tk > 0:
        md.Add(makespan >= lb_tk)
    md.Minimize(makespan)

    g_server, g_order = greedy_assignment(inst)
    g = simulate(inst, g_server, order=g_order)
    hint_mk = float(g.makespan)
    if hint:
        for t in range(n):
            for s in hosts[t]:
                md.AddHint(x[t, s], int(g_server[t] == s))
            st = _ticks(g.start[t] - inst.arrival, tick)
            md.AddHint(start[t], st)
            for s in hosts[t]:
                if (t, s) in first:
                    md.AddHint(first[t, s], int(bool(g.pulled[t]) and g_server[t] == s))

    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = float(time_limit)
    if work_limit is not None:
        solver.parameters.max_deterministic_time = float(work_limit)
    solver.parameters.num_workers = int(workers)
    solver.parameters.random_seed = int(seed)
    status = solver.Solve(md)
    name = solver.StatusName(status)
    if status == cp_model.INFEASIBLE or status == cp_model.MODEL_INVALID:
        raise RuntimeError(f"CP-SAT: {name} model for {inst.name!r} (a bug: greedy is feasible)")
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):  # out of time before any solution
        return SolveResult(
            schedule=g,
            makespan=hint_mk,
            proven_optimal=False,
            status=name,
            bound=lower_bound(inst),
            wall_s=time.perf_counter() - t0,
            sim_makespan=hint_mk,
            hint_makespan=hint_mk,
        )

    server = [next(s for s in hosts[t] if solver.Value(x[t, s])) for t in range(n)]
    starts = [solver.Value(start[t]) for t in range(n)]
    order = sorted(range(n), key=lambda t: (starts[t], solver.Value(end[t]), t))
    sched = simulate(inst, server, order=order)
    mk = round(solver.ObjectiveValue() * tick, 9)
    bound = max(round(solver.BestObjectiveBound() * tick, 9), lower_bound(inst))
    optimal = status == cp_model.OPTIMAL
    if optimal:
        bound = max(bound, mk)
    return SolveResult(
        schedule=sched,
        makespan=mk,
        proven_optimal=optimal,
        status=name,
        bound=min(bound, mk),
        wall_s=time.perf_counter() - t0,
        sim_makespan=float(sched.makespan),
        hint_makespan=hint_mk,
    )


# ----------------------------------------------------------------------------- brute force


def topological_orders(inst: OffloadInstance) -> Iterator[list[int]]:
    """Every topological order of the DAG (exponentially many: tiny DAGs only)."""
    n = len(inst.tasks)
    indeg = [len(t.parents) for t in inst.tasks]
    children: list[list[int]] = [[] for _ in range(n)]
    for c, t in enumerate(inst.tasks):
        for p in t.parents:
            children[p].append(c)
    order: list[int] = []

    def rec() -> Iterator[list[int]]:
        if len(order) == n:
            yield list(order)
            return
        for t in range(n):
            if indeg[t] == 0 and t not in order:
                order.append(t)
                for c in children[t]:
                    indeg[c] -= 1
                yield from rec()
                for c in children[t]:
                    indeg[c] += 1
                order.pop()

    yield from rec()


def brute_force(inst: OffloadInstance, max_tasks: int = 7) -> float:
    """Optimal makespan by enumeration: every assignment x every topological order, timed by
    ``simulate`` (so with the source inputs from the origin and the sinks' outputs back to it).
    Exact because list scheduling in the start order of an optimal schedule places every task
    no later than that schedule does (input and output transfers depend only on the
    assignment). Tiny instances only."""
    n = len(inst.tasks)
    if n > max_tasks:
        raise ValueError(f"brute force is for <= {max_tasks} tasks, got {n}")
    orders = list(topological_orders(inst))
    best = math.inf
    for server in itertools.product(*(_hosts(inst, t) for t in range(n))):
        for order in orders:
            best = min(best, float(simulate(inst, list(server), order=order).makespan))
    return best


# ----------------------------------------------------------------------------- instances


def random_instance(
    n_tasks: int,
    n_edge: int = 3,
    cloud: bool = True,
    seed: int = 0,
    n_images: int = 3,
    pull_time: float = 0.5,
    origin: int = 0,
    input_data: float = 0.0,
) -> OffloadInstance:
    """A random layered DAG on ``n_edge`` edge servers (+ a cloud), for tests and benchmarks.

    The workflow arrives at server ``origin``; each source receives ``input_data`` MB from it
    and each sink's output (its ``data``) goes back to it.

    Every time is a whole multiple of 0.1 s (works and data in tenths, speeds 1 or 2 on the
    edge and 1 in the cloud, integer distances, bandwidth 1), so CP-SAT's millisecond ticks are
    exact. Edge capacities are small (2-4 cpu, 2-4 GB) against task demands of 1-2, so they bind;
    the cloud is far (distance 3-5) and holds every image.
    """
    rng = np.random.default_rng(seed)
    images = [chr(ord("a") + i) for i in range(n_images)]
    width = max(1, round(math.sqrt(n_tasks)))
    layers: list[list[int]] = []
    t = 0
    while t < n_tasks:
        k = int(min(n_tasks - t, rng.integers(1, width + 1) if layers else 1))
        layers.append(list(range(t, t + k)))
        t += k
    parents: list[tuple[int, ...]] = [()]
    for li in range(1, len(layers)):
        prev = layers[li - 1]
        for _ in layers[li]:
            k = int(rng.integers(1, min(2, len(prev)) + 1))
            parents.append(tuple(sorted(int(p) for p in rng.choice(prev, k, replace=False))))
    tasks = tuple(
        OffloadTask(
            f"t{i}",
            images[int(rng.integers(n_images))],
            float(rng.integers(1, 3)),
            float(rng.integers(1, 3)),
            float(rng.integers(2, 11)) / 10,
            float(rng.integers(1, 6)) / 10,
            parents[i],
        )
        for i in range(n_tasks)
    )
    servers = [
        Server(
            f"es{j + 1}",
            float(rng.integers(2, 5)),
            float(rng.integers(2, 5)),
            float(rng.choice([1.0, 2.0])),
            frozenset(x for x in images if rng.random() < 0.5),
        )
        for j in range(n_edge)
    ]
    m = n_edge + int(cloud)
    adj = np.zeros((m, m))
    for i in range(n_edge):
        for j in range(i + 1, n_edge):
            adj[i, j] = adj[j, i] = float(rng.integers(1, 3))
    if cloud:
        servers.append(Server("cloud", 1e9, 1e9, 1.0, frozenset(images), is_cloud=True))
        for i in range(n_edge):
            adj[i, -1] = adj[-1, i] = float(rng.integers(3, 6))
    return OffloadInstance(
        tuple(servers),
        adj,
        1.0,
        pull_time,
        tasks,
        0.0,
        f"random-{n_tasks}-s{seed}",
        origin,
        input_data,
    )
