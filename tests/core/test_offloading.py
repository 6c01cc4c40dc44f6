"""The offloading timing model: transfers, cold starts, capacity, validation."""

import numpy as np
import pytest

from rlsched.core.offloading import (
    OffloadInstance,
    OffloadTask,
    Server,
    check_schedule,
    eft_order,
    patent_example,
    simulate,
)


def _two_servers(pull: float = 2.0) -> OffloadInstance:
    servers = (
        Server("e0", 2.0, 2.0, 1.0, frozenset({"a"})),
        Server("e1", 2.0, 2.0, 2.0, frozenset()),
    )
    adj = np.array([[0.0, 3.0], [3.0, 0.0]])
    tasks = (
        OffloadTask("t0", "a", 1.0, 1.0, 4.0, 2.0),
        OffloadTask("t1", "a", 1.0, 1.0, 4.0, 1.0, (0,)),
        OffloadTask("t2", "a", 1.0, 1.0, 2.0, 1.0, (0,)),
    )
    return OffloadInstance(servers, adj, 4.0, pull, tasks, arrival=10.0)


def test_transfer_and_cold_start_hand_case() -> None:
    inst = _two_servers()
    assert inst.exec_time(1, 1) == 2.0
    assert inst.trans_time(0, 0, 1) == pytest.approx(2.0 * 3.0 / 4.0)
    assert inst.trans_time(0, 1, 1) == 0.0
    s = simulate(inst, [0, 1, 1], order=[0, 1, 2])
    # t0 on e0 (holds a): 10 -> 14
    assert (s.start[0], s.finish[0], s.pulled[0]) == (10.0, 14.0, False)
    # t1 on e1: ready 14 + 1.5, pulls a (2 s) then runs 4 / 2 = 2 s
    assert s.start[1] == pytest.approx(15.5) and s.finish[1] == pytest.approx(19.5)
    assert s.pulled[1]
    # t2 on e1: ready 15.5, image cached but usable only after the pull ends at 17.5
    assert not s.pulled[2]
    assert s.start[2] == pytest.approx(17.5) and s.finish[2] == pytest.approx(18.5)
    # both sinks' outputs (1 MB each) go back to the origin e0: 1 * 3 / 4 = 0.75 s
    assert s.complete == pytest.approx(19.5 + 0.75)
    assert s.makespan == pytest.approx(10.25)


def test_a_link_latency_is_paid_once_per_transfer() -> None:
    base = _two_servers()
    lat = np.array([[0.0, 0.5], [0.5, 0.0]])
    inst = OffloadInstance(
        base.servers, base.adj, 4.0, 2.0, base.tasks, 10.0, origin=0, input_data=8.0,
        latency=lat,
    )
    assert inst.trans_time(0, 0, 1) == pytest.approx(2.0 * 3.0 / 4.0 + 0.5)
    assert inst.trans_time(0, 1, 1) == 0.0  # nothing crosses a link
    assert inst.input_time(1) == pytest.approx(8.0 * 3.0 / 4.0 + 0.5)
    assert inst.output_time(1, 1) == pytest.approx(1.0 * 3.0 / 4.0 + 0.5)
    assert inst.input_time(0) == 0.0 and inst.output_time(1, 0) == 0.0
    # the latency lengthens the hand case's schedule by exactly one hop per crossing:
    # t0 on e0, t1 and t2 on e1 -> one transfer in, one sink output back (t1 ends last)
    s0, s1 = simulate(base, [0, 1, 1], order=[0, 1, 2]), simulate(inst, [0, 1, 1], order=[0, 1, 2])
    assert s1.makespan == pytest.approx(s0.makespan + 2 * 0.5)
    # HEFT's upward rank counts the mean latency on each edge of the DAG
    assert np.all(inst.upward_rank()[:1] > base.upward_rank()[:1])
    with pytest.raises(ValueError, match="latency must be"):
        OffloadInstance(base.servers, base.adj, 4.0, 2.0, base.tasks, latency=np.ones((3, 3)))
    with pytest.raises(ValueError, match="latency must be >= 0"):
        OffloadInstance(base.servers, base.adj, 4.0, 2.0, base.tasks, latency=-lat)


def test_origin_input_and_return_transfers() -> None:
    base = _two_servers()
    inst = OffloadInstance(
        base.servers, base.adj, 4.0, 2.0, base.tasks, 10.0, origin=1, input_data=8.0
    )
    assert inst.input_time(1) == 0.0 and inst.input_time(0) == pytest.approx(8.0 * 3.0 / 4.0)
    assert inst.sinks() == [1, 2] and not inst.is_sink(0)
    assert inst.output_time(1, 0) == pytest.approx(0.75) and inst.output_time(1, 1) == 0.0
    # t0 on e0, far from the origin e1: waits 6 s for its input
    s = simulate(inst, [0, 0, 0], order=[0, 1, 2])
    assert s.start[0] == pytest.approx(16.0) and s.finish[0] == pytest.approx(20.0)
    # t1 and t2 run concurrently on e0 (2 cpu), then ship 1 MB each back to e1
    assert s.finish[1] == pytest.approx(24.0) and s.finish[2] == pytest.approx(22.0)
    assert s.makespan == pytest.approx(24.0 + 0.75 - 10.0)
    # at the origin nothing moves from or to it; e1 pulls image a once (2 s)
    s = simulate(inst, [1, 1, 1], order=[0, 1, 2])
    assert s.start[0] == 10.0 and s.finish[0] == pytest.approx(14.0)
    assert s.makespan == pytest.approx(s.finish.max() - 10.0)
    with pytest.raises(ValueError):
        OffloadInstance(base.servers, base.adj, 4.0, 2.0, base.tasks, origin=2)


def test_capacity_delays_start() -> None:
    servers = (Server("e0", 1.0, 4.0, 1.0, frozenset({"a"})),)
    tasks = tuple(OffloadTask(f"t{i}", "a", 1.0, 1.0, 1.0, 0.0) for i in range(3))
    inst = OffloadInstance(servers, np.zeros((1, 1)), 1.0, 0.0, tasks)
    s = simulate(inst, [0, 0, 0], order=[0, 1, 2])
    assert list(s.start) == [0.0, 1.0, 2.0]


def test_bounded_cache_evicts_lru() -> None:
    servers = (Server("e0", 4.0, 4.0, 1.0, frozenset()),)
    tasks = tuple(
        OffloadTask(f"t{i}", img, 1.0, 1.0, 1.0, 0.0, (i - 1,) if i else ())
        for i, img in enumerate("abca")
    )
    inst = OffloadInstance(servers, np.zeros((1, 1)), 1.0, 1.0, tasks)
    assert list(simulate(inst, [0] * 4).pulled) == [True, True, True, False]
    assert list(simulate(inst, [0] * 4, cache_size=2).pulled) == [True, True, True, True]


def test_validation() -> None:
    inst = _two_servers()
    with pytest.raises(ValueError):
        simulate(inst, [0, 1])
    with pytest.raises(ValueError):
        simulate(inst, [0, 1, 1], order=[1, 0, 2])
    big = OffloadInstance(
        inst.servers, inst.adj, 1.0, 1.0, (OffloadTask("x", "a", 9.0, 1.0, 1.0, 0.0),)
    )
    assert not big.can_host(0, 0)
    with pytest.raises(ValueError):
        simulate(big, [0])
    s = simulate(inst, [0, 1, 1])
    s.start[2] -= 1.0
    with pytest.raises(ValueError):
        check_schedule(inst, s)


def test_random_assignments_respect_dependencies_and_capacity() -> None:
    rng = np.random.default_rng(0)
    for _ in range(30):
        m = int(rng.integers(1, 4))
        edges = [
            Server(f"e{k}", 2.0, 2.0, float(rng.uniform(0.5, 2)), frozenset({"a"}))
            for k in range(m)
        ]
        servers = (*edges, Server("cloud", np.inf, np.inf, 2.0, frozenset(), True))
        d = rng.uniform(0.5, 2, (m + 1, m + 1))
        adj = np.triu(d, 1) + np.triu(d, 1).T
        n = int(rng.integers(1, 10))
        tasks = tuple(
            OffloadTask(
                f"t{i}",
                str(rng.choice(["a", "b"])),
                float(rng.choice([0.5, 1, 2])),
                float(rng.choice([0.5, 1])),
                float(rng.uniform(0.1, 3)),
                float(rng.uniform(0, 2)),
                tuple(int(p) for p in rng.choice(i, size=min(i, 2), replace=False)) if i else (),
            )
            for i in range(n)
        )
        inst = OffloadInstance(servers, adj, 1.0, 0.7, tasks)
        server = [int(rng.integers(0, m + 1)) for _ in range(n)]
        s = simulate(inst, server, cache_size=1)  # validates internally
        check_schedule(inst, s)
        assert s.makespan >= max(inst.exec_time(t, server[t]) for t in range(n)) - 1e-9


def test_patent_example_and_rank() -> None:
    inst = patent_example()
    assert [t.image for t in inst.tasks] == list("ababab")
    order = inst.topological_order()
    assert order[0] == 0 and order[-1] == 5
    rank = inst.upward_rank()
    assert all(rank[p] > rank[c] for c, t in enumerate(inst.tasks) for p in t.parents)
    assert inst.origin == 0 and inst.input_data == 0.0
    s = simulate(inst, [0, 1, 0, 1, 2, 1], order=[0, 2, 1, 3, 4, 5])
    # task 6 finishes at 2.02 on es2 and sends its 0.1 MB back to es1 (distance 1): 0.1 s
    assert s.finish.max() == pytest.approx(2.02)
    assert s.makespan == pytest.approx(2.12)


def test_eft_order_sorts_valid_servers_by_finish_then_transfer_then_index() -> None:
    """The order HEFT's choice and the env's ``candidates`` come from, against a plain sort
    (ties drawn on purpose: finishes and transfers from a few values)."""
    rng = np.random.default_rng(0)
    for _ in range(300):
        n = int(rng.integers(1, 9))
        done = rng.choice([1.0, 2.0, 3.0, np.inf], n)
        trans = rng.choice([0.0, 0.5, 1.0], n)
        mask = rng.random(n) < 0.7
        want = sorted(np.flatnonzero(mask), key=lambda s: (done[s], trans[s], s))
        assert eft_order(done, trans, mask).tolist() == want


def test_optimistic_cost_hand_case() -> None:
    """PEFT's table on the two-server case: t0's children t1 and t2 are sinks (entries 0);
    each child's tail is its run there plus its output's return to the origin e0 (1 MB x 3 /
    4 = 0.75 s from e1), t0's 2 MB cost 1.5 s to cross the link."""
    oct_ = _two_servers().optimistic_cost()
    assert oct_.shape == (3, 2)
    assert np.array_equal(oct_[1:], np.zeros((2, 2)))
    # on e0: t1 stays (4 s) rather than crossing (1.5 + 2 + 0.75); t2 likewise (2 s)
    # on e1: t1 stays (2 + 0.75) rather than crossing back (1.5 + 4); t2: 1 + 0.75
    assert oct_[0] == pytest.approx([4.0, 2.75])


def test_descendant_load_hand_case() -> None:
    """A diamond t0 -> (t1, t2) -> t3: t0's subtree holds all three (cpu-work 2 x 3 + 1 x 2 +
    1 x 1, two of them at depth 1); t1's and t2's only t3; the sink's nothing."""
    two = _two_servers()
    tasks = (
        OffloadTask("t0", "a", 1.0, 1.0, 4.0, 1.0),
        OffloadTask("t1", "a", 2.0, 1.0, 3.0, 1.0, (0,)),
        OffloadTask("t2", "a", 1.0, 1.0, 2.0, 1.0, (0,)),
        OffloadTask("t3", "a", 1.0, 1.0, 1.0, 1.0, (1, 2)),
    )
    inst = OffloadInstance(two.servers, two.adj, 4.0, 2.0, tasks)
    assert inst.descendant_load() == pytest.approx(
        np.array([[9.0, 3.0, 2.0], [1.0, 1.0, 1.0], [1.0, 1.0, 1.0], [0.0, 0.0, 0.0]])
    )


def test_optimistic_cost_bounds_every_schedule_from_below() -> None:
    """Whatever the placement, the workflow completes no earlier than any task's finish plus
    its table entry on its server: the table is optimistic (no queueing, no pulls, each later
    task on its best server), so it is a lower bound of the rest of the longest path."""
    rng = np.random.default_rng(3)
    for trial in range(20):
        n_srv, n = int(rng.integers(2, 5)), int(rng.integers(3, 10))
        servers = tuple(
            Server(f"e{k}", 2.0, 4.0, float(rng.uniform(0.5, 2.0)), frozenset({"a"}))
            for k in range(n_srv)
        )
        d = rng.uniform(1, 3, (n_srv, n_srv))
        adj = np.triu(d, 1) + np.triu(d, 1).T
        tasks = tuple(
            OffloadTask(
                f"t{i}", "a", 1.0, 1.0, float(rng.uniform(1, 5)), float(rng.uniform(0, 4)),
                tuple(int(p) for p in rng.choice(i, size=min(i, int(rng.integers(0, 3))),
                                                 replace=False)) if i else (),
            )
            for i in range(n)
        )  # fmt: skip
        lat = rng.uniform(0, 0.5, (n_srv, n_srv)) * (1 - np.eye(n_srv))
        inst = OffloadInstance(
            servers, adj, 2.0, 1.0, tasks, origin=int(rng.integers(n_srv)), latency=lat
        )
        table = inst.optimistic_cost()
        assert np.all(table >= 0) and np.all(np.isfinite(table))
        assign = rng.integers(0, n_srv, n)
        s = simulate(inst, assign)
        assert s.complete is not None
        for t in range(n):
            assert s.complete >= s.finish[t] + table[t, assign[t]] - 1e-9, (trial, t)


def test_a_server_states_deep_copy_shares_only_what_never_changes() -> None:
    import copy

    from rlsched.core.offloading import Server, ServerState

    srv = Server("e0", cpu=4.0, mem=8.0, speed=1.0, images=frozenset({"a"}))
    st = ServerState(srv, cache_size=1)
    st.commit(0.0, 2.0, 1.0, 1.0, "b", True, 0.5)
    dup = copy.deepcopy(st)
    assert dup == st and dup.server is srv  # the frozen server is shared
    dup.commit(1.0, 3.0, 2.0, 1.0, "c", True, 0.5)  # evicts "b" from the copy only
    dup.prune(2.5)
    assert st.intervals == [(0.0, 2.0, 1.0, 1.0)] and list(st.cache) == ["b"]
    assert dup.intervals == [(1.0, 3.0, 2.0, 1.0)] and list(dup.cache) == ["c"]


def _usage_over_all_runs(intervals, t0, t1):
    """The reference: each point's sums over every reserved run, in order."""
    pc = pm = 0.0
    for x in [t0] + [s for s, _, _, _ in intervals if t0 < s < t1]:
        c = m = 0.0
        for s, e, cpu, mem in intervals:
            if s <= x < e:
                c += cpu
                m += mem
        pc, pm = max(pc, c), max(pm, m)
    return pc, pm


def test_usage_and_earliest_fit_match_the_sums_over_every_run_to_the_bit() -> None:
    """``usage`` and ``earliest_fit`` look only at the runs that overlap a span, and sum many
    with numpy; their peaks (float sums in the runs' order) and fits are those over all runs."""
    from rlsched.core.offloading import Server, ServerState

    rng = np.random.default_rng(7)
    srv = Server("e0", cpu=4.0, mem=8.0, speed=1.0, images=frozenset())
    for k in range(300):
        st = ServerState(srv)
        # up to 25 runs (summed in a Python loop) or, every third server, up to 150 (numpy)
        for _ in range(int(rng.integers(0, 150 if k % 3 == 0 else 25))):
            s = float(rng.uniform(0, 50))
            # every other server: tenths of a core, whose sums reach the cap within a rounding
            cpu = float(rng.choice([0.1, 0.2, 0.3])) if k % 2 else float(rng.uniform(0.1, 1.3))
            st.intervals.append((s, s + float(rng.exponential(5)), cpu,
                                 float(rng.uniform(0.1, 2.7))))  # fmt: skip
        for _ in range(10):
            t0 = float(rng.uniform(-5, 60))
            t1 = t0 + float(rng.exponential(8))
            assert st.usage(t0, t1) == _usage_over_all_runs(st.intervals, t0, t1)
            dur, mem = float(rng.exponential(4)), 1.0
            cpu = float(rng.choice([0.1, 0.3, 1.2, 2.1])) if k % 2 else float(rng.uniform(0.1, 3))
            cand = sorted({t0, *(e for _, e, _, _ in st.intervals if e > t0)})
            want = next((t for t in cand if (u := _usage_over_all_runs(
                st.intervals, t, t + max(dur, 1e-9)))[0] + cpu <= 4.0 + 1e-9
                and u[1] + mem <= 8.0 + 1e-9), cand[-1])  # fmt: skip
            assert st.earliest_fit(t0, dur, cpu, mem) == want


def test_earliest_fit_screens_with_numpy_only_where_rounding_cannot_decide() -> None:
    """Among many runs ``earliest_fit`` screens its candidates with numpy sums; where those sums
    are within a rounding of the cap (tenths of a core filling it), it leaves the candidate to
    the exact sums."""
    from rlsched.core.offloading import _clear_fits, _peak

    # ten runs of 0.1 core in [0, 10), twenty of 0.2 (the whole server) in [20, 40)
    runs = [(0.0, 10.0, 0.1, 0.5)] * 10 + [(20.0, 40.0, 0.2, 0.5)] * 20
    cand = [0.0, 10.0, 25.0, 40.0]
    clear = _clear_fits(runs, cand, 1.0, 3.0, 1.0, 4.0 + 1e-9, 64.0)
    assert clear is not None and list(clear) == [0, 1, -1, 1]  # at 0: 1.0 + 3.0 at the cap
    for t, c in zip(cand, clear, strict=True):
        if c == 0:
            assert abs(_peak(runs, t, t + 1.0)[0] + 3.0 - 4.0) < 1e-9
    assert _clear_fits(runs[:5], cand, 1.0, 3.0, 1.0, 4.0, 64.0) is None  # few runs: the loop
