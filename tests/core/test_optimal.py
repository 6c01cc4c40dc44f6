"""CP-SAT solver, lower bound and brute force for static workflow offloading."""

from __future__ import annotations

import numpy as np
import pytest

from rlsched.core.offloading import (
    OffloadInstance,
    OffloadTask,
    Server,
    check_schedule,
    patent_example,
    simulate,
)
from rlsched.core.optimal import (
    brute_force,
    critical_path,
    greedy_assignment,
    lower_bound,
    random_instance,
    solve,
    topological_orders,
)

TICK = 1e-3


def test_patent_example_optimum_is_proven_and_matches_brute_force():
    inst = patent_example()
    res = solve(inst, time_limit=10, workers=1)
    assert res.proven_optimal and res.status == "OPTIMAL"
    # the example's numbers are ours (the patent gives them only in a figure), so the optimum
    # is checked against enumeration, not a constant
    assert res.sim_makespan == pytest.approx(res.makespan, abs=TICK)
    assert res.bound == pytest.approx(res.makespan, abs=TICK)
    assert brute_force(inst) == pytest.approx(res.makespan, abs=TICK)
    check_schedule(inst, res.schedule)
    g_server, g_order = greedy_assignment(inst)
    assert res.makespan <= simulate(inst, g_server, g_order).makespan + TICK
    assert lower_bound(inst) <= res.makespan + 1e-9


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("cloud", [False, True])
def test_cpsat_equals_brute_force_on_tiny_dags(seed, cloud):
    inst = random_instance(5, n_edge=3 if not cloud else 2, cloud=cloud, seed=seed)
    res = solve(inst, time_limit=10, workers=1)
    assert res.proven_optimal
    bf = brute_force(inst)
    assert res.makespan == pytest.approx(bf, abs=TICK)
    assert res.sim_makespan == pytest.approx(bf, abs=TICK)
    check_schedule(inst, res.schedule)
    lb = lower_bound(inst)
    assert lb <= bf + 1e-9
    assert lb <= res.bound + 1e-9 <= res.makespan + 2e-9


def test_cpsat_equals_brute_force_six_tasks_three_servers():
    inst = random_instance(6, n_edge=3, cloud=False, seed=11)
    res = solve(inst, time_limit=10, workers=1)
    assert res.proven_optimal
    assert res.makespan == pytest.approx(brute_force(inst), abs=TICK)


def _contention_instance(pull_time: float) -> OffloadInstance:
    """A source and three children of one image; a 1-cpu edge lacking it and a slow, far cloud."""
    servers = (
        Server("edge", 1.0, 4.0, 1.0, frozenset()),
        Server("cloud", 1e9, 1e9, 0.1, frozenset({"a"}), is_cloud=True),
    )
    adj = np.array([[0.0, 10.0], [10.0, 0.0]])
    tasks = (
        OffloadTask("src", "a", 1.0, 1.0, 0.1, 1.0, ()),
        *(OffloadTask(f"t{i}", "a", 1.0, 1.0, 1.0, 0.0, (0,)) for i in range(3)),
    )
    return OffloadInstance(servers, adj, 1.0, pull_time, tasks, 5.0, "contention")


def test_pulls_capacity_and_arrival_are_modelled():
    # everything on the 1-cpu edge: pull once (0.5) then run serially: 0.5 + 0.1 + 3 = 3.6;
    # the cloud is 10x slower (all there: 1 + 10) and 10 s away
    inst = _contention_instance(0.5)
    res = solve(inst, time_limit=10)
    assert res.proven_optimal
    assert res.makespan == pytest.approx(3.6, abs=TICK)
    assert int(res.schedule.pulled.sum()) == 1
    assert res.schedule.arrival == 5.0
    assert res.makespan == pytest.approx(brute_force(inst), abs=TICK)
    # a slow pull sends everything to the cloud, which runs the children in parallel
    slow = _contention_instance(20.0)
    res = solve(slow, time_limit=10)
    assert res.makespan == pytest.approx(11.0, abs=TICK)
    assert set(res.schedule.server.tolist()) == {1}


def test_lower_bound_never_exceeds_any_schedule():
    rng = np.random.default_rng(0)
    for seed in range(8):
        inst = random_instance(7, n_edge=3, cloud=bool(seed % 2), seed=100 + seed)
        lb = lower_bound(inst)
        assert lb >= critical_path(inst) - 1e-12
        orders = list(topological_orders(inst))
        for _ in range(20):
            server = [
                int(rng.choice([s for s in range(len(inst.servers)) if inst.can_host(t, s)]))
                for t in range(len(inst.tasks))
            ]
            order = orders[int(rng.integers(len(orders)))]
            assert lb <= simulate(inst, server, order).makespan + 1e-9


def test_work_term_is_capacity_aware():
    # two 1-cpu tasks of work 1 on one 2-cpu server run concurrently: makespan 1, not 2
    servers = (Server("e", 2.0, 2.0, 1.0, frozenset({"a"})),)
    tasks = tuple(OffloadTask(f"t{i}", "a", 1.0, 1.0, 1.0, 0.0, ()) for i in range(2))
    inst = OffloadInstance(servers, np.zeros((1, 1)), 1.0, 0.0, tasks)
    assert lower_bound(inst) == pytest.approx(1.0)
    assert solve(inst, time_limit=5).makespan == pytest.approx(1.0)
    # three of them need two rounds; the bound sees 3 cpu-seconds over 2 cpu
    inst3 = OffloadInstance(servers, np.zeros((1, 1)), 1.0, 0.0, (*tasks, tasks[0]))
    assert lower_bound(inst3) == pytest.approx(1.5)
    assert solve(inst3, time_limit=5).makespan == pytest.approx(2.0)


def test_twenty_task_instance_solves_within_limit():
    inst = random_instance(20, seed=1)
    res = solve(inst, time_limit=8, workers=1)
    assert res.status in {"OPTIMAL", "FEASIBLE"}
    check_schedule(inst, res.schedule)
    assert res.sim_makespan <= res.makespan + TICK
    assert lower_bound(inst) <= res.bound + 1e-9 <= res.makespan + 2e-9
    assert res.makespan <= res.hint_makespan + TICK
    assert res.wall_s < 15


def _perturbed(seed: int) -> OffloadInstance:
    """A tiny instance whose times are not whole ticks."""
    inst = random_instance(5, n_edge=2, cloud=True, seed=seed)
    rng = np.random.default_rng(seed)
    tasks = tuple(
        OffloadTask(
            t.name,
            t.image,
            t.cpu,
            t.mem,
            t.work * float(rng.uniform(0.9, 1.1)),
            t.data * float(rng.uniform(0.9, 1.1)),
            t.parents,
        )
        for t in inst.tasks
    )
    return OffloadInstance(inst.servers, inst.adj, 1.2345, 0.4321, tasks, 0.0, "perturbed")


@pytest.mark.parametrize("seed", range(3))
def test_non_tick_times_are_within_rounding(seed):
    inst = _perturbed(seed)
    res = solve(inst, time_limit=10)
    bf = brute_force(inst)
    n = len(inst.tasks)
    # CP-SAT rounds each of <= 2n durations to the nearest tick
    assert res.makespan == pytest.approx(bf, abs=n * TICK)
    assert bf - 1e-9 <= res.sim_makespan <= bf + 2 * n * TICK
    check_schedule(inst, res.schedule)


def test_time_out_falls_back_to_the_warm_start():
    inst = random_instance(25, seed=0)
    res = solve(inst, time_limit=1e-4, hint=False)
    assert not res.proven_optimal
    check_schedule(inst, res.schedule)
    assert res.makespan <= res.hint_makespan + TICK


def test_a_work_limit_stops_the_search_at_the_same_place_whatever_the_clock():
    """CP-SAT's deterministic time with one worker: a search the work limit stops returns the
    same schedule on every run, where a wall-clock limit stops it wherever the machine's load
    lets it get to."""
    inst = random_instance(25, seed=0)
    runs = [solve(inst, time_limit=60, work_limit=0.05) for _ in range(3)]
    assert not runs[0].proven_optimal  # stopped by the work limit, not by a proof
    assert {r.makespan for r in runs} == {runs[0].makespan}
    assert {tuple(r.schedule.server) for r in runs} == {tuple(runs[0].schedule.server)}
    check_schedule(inst, runs[0].schedule)
    # a larger work limit never finds worse
    assert solve(inst, time_limit=60, work_limit=0.5).makespan <= runs[0].makespan + TICK


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("origin", [0, 1])
def test_cpsat_equals_brute_force_with_origin_transfers(seed, origin):
    """Source inputs from the origin and sink outputs back to it, in CP-SAT and enumeration."""
    inst = random_instance(5, n_edge=2, cloud=True, seed=seed, origin=origin, input_data=0.7)
    assert inst.input_time(origin) == 0.0 and inst.input_time(2) > 0
    res = solve(inst, time_limit=10, workers=1)
    assert res.proven_optimal
    bf = brute_force(inst)
    assert res.makespan == pytest.approx(bf, abs=TICK)
    assert res.sim_makespan == pytest.approx(bf, abs=TICK)
    check_schedule(inst, res.schedule)
    lb = lower_bound(inst)
    assert lb <= bf + 1e-9
    assert lb >= critical_path(inst) - 1e-12


def test_lower_bound_counts_cheapest_input_and_output():
    # one task, the origin lacks capacity for it: it must run elsewhere and pay both ways
    servers = (
        Server("o", 0.5, 4.0, 1.0, frozenset({"a"})),
        Server("e", 2.0, 4.0, 1.0, frozenset({"a"})),
    )
    adj = np.array([[0.0, 2.0], [2.0, 0.0]])
    tasks = (OffloadTask("t", "a", 1.0, 1.0, 1.0, 0.5),)
    inst = OffloadInstance(servers, adj, 1.0, 0.0, tasks, 0.0, "io", origin=0, input_data=1.0)
    # input 1 * 2 / 1 = 2, exec 1, output 0.5 * 2 = 1
    assert lower_bound(inst) == pytest.approx(4.0)
    assert brute_force(inst) == pytest.approx(4.0)
    assert solve(inst, time_limit=5).makespan == pytest.approx(4.0)
