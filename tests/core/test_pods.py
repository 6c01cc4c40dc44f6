"""The pod window model: serial vs parallel time axes, BestEffort shares, shortest job first."""

import numpy as np
import pytest

from rlsched.core.pods import (
    PodWorkload,
    WindowRequests,
    assigned_resources,
    draw_requests,
    greedy_candidates,
    simulate_window,
)


def _reqs(counts, cpu, mem=None) -> WindowRequests:
    cpu = np.asarray(cpu, dtype=float)
    mem = np.full(len(cpu), 0.1) if mem is None else np.asarray(mem, dtype=float)
    return WindowRequests(np.asarray(counts), cpu, mem)


def _run(pod_node, req_cpu, node_cpu, reqs, mode="serial", slots=3, req_mem=None, node_mem=None):
    P = len(pod_node)
    return simulate_window(
        np.asarray(pod_node),
        np.asarray(req_cpu, dtype=float),
        np.asarray(req_mem if req_mem is not None else [1.0] * P, dtype=float),
        np.asarray(node_cpu, dtype=float),
        np.asarray(node_mem if node_mem is not None else [100.0] * len(node_cpu), dtype=float),
        reqs,
        mode,
        slots,
    )


# pod A: 3 requests of 1.5 cores, pod B: 1 request of 1 core; both request 1 core of a 2-core node
TWO_PODS = _reqs([3, 1], [1.5, 1.5, 1.5, 1.0])


def test_serial_lines_pods_up_by_request_index() -> None:
    res = _run([0, 0], [1.0, 1.0], [2.0], TWO_PODS, "serial", slots=3)
    # position 0: A 1.5 + B 1.0 = 2.5 > 2. B fits its share (1), A does not and the node's
    # unused 1 core is too little; positions 1, 2: A alone, 1.5 <= 2
    assert res.violated.tolist() == [True, False, False, False]
    assert res.pod_violations.tolist() == [1, 0]
    assert res.axis.tolist() == [3]
    np.testing.assert_allclose(res.node_series[0, :, 0], [2.5, 1.5, 1.5])
    np.testing.assert_allclose(res.pod_series[:, :, 0], [[1.5, 1.5, 1.5], [1.0, 0.0, 0.0]])


def test_parallel_spreads_requests_over_slots() -> None:
    res = _run([0, 0], [1.0, 1.0], [2.0], TWO_PODS, "parallel", slots=3)
    # A's requests arrive at 1/6, 3/6, 5/6 of the window (slots 0, 1, 2), B's at 1/2 (slot 1)
    assert res.violated.tolist() == [False, True, False, False]
    np.testing.assert_allclose(res.node_series[0, :, 0], [1.5, 2.5, 1.5])


def test_parallel_adds_concurrent_demand_serial_does_not() -> None:
    two = _reqs([2], [1.0, 1.0])
    serial = _run([0], [1.0], [1.5], two, "serial", slots=1)
    parallel = _run([0], [1.0], [1.5], two, "parallel", slots=1)
    assert serial.violations == 0 and serial.node_series[0, 0, 0] == pytest.approx(1.0)
    assert parallel.violations == 1 and parallel.node_series[0, 0, 0] == pytest.approx(2.0)
    # 4 requests over 2 slots: two per slot, run together
    four = _run([0], [1.0], [10.0], _reqs([4], [1.0, 2.0, 3.0, 4.0]), "parallel", slots=2)
    np.testing.assert_allclose(four.node_series[0, :, 0], [3.0, 7.0])


def test_shortest_job_first_under_contention() -> None:
    # three pods with equal shares (1 core each) on 3 cores; demands 1.8, 0.5, 1.6
    res = _run([0, 0, 0], [1.0, 1.0, 1.0], [3.0], _reqs([1, 1, 1], [1.8, 0.5, 1.6]))
    # 0.5 fits its share; the unused 2.5 cores go to 1.6 (smaller) before 1.8
    assert res.violated.tolist() == [True, False, False]
    # within one pod (parallel): 0.5 and 1.0 served, 2.0 is not
    one = _run([0], [1.0], [2.0], _reqs([3], [2.0, 0.5, 1.0]), "parallel", slots=1)
    assert one.violated.tolist() == [True, False, False]


def test_best_effort_share_protects_pods_in_proportion_to_requests() -> None:
    reqs = _reqs([1, 1], [2.0, 3.0])
    # requests 1 : 3 of 4 cores -> shares 1 and 3: B (3 cores) is protected, A (2) is not,
    # although A is the shorter job
    res = _run([0, 0], [1.0, 3.0], [4.0], reqs)
    np.testing.assert_allclose(res.assigned_cpu, [1.0, 3.0])
    assert res.violated.tolist() == [True, False]
    # equal requests -> shares 2 and 2: A fits, B (3) does not fit in the 2 cores left
    res = _run([0, 0], [2.0, 2.0], [4.0], reqs)
    assert res.violated.tolist() == [False, True]


def test_no_contention_no_violation() -> None:
    rng = np.random.default_rng(0)
    counts = rng.integers(0, 20, 12)
    reqs = draw_requests(counts, rng.uniform(0.1, 2, 12), rng.uniform(0.1, 2, 12), 0.5, rng)
    node = rng.integers(0, 3, 12)
    for mode in ("serial", "parallel"):
        res = _run(node, rng.uniform(0.1, 1, 12), [1e6] * 3, reqs, mode, 5, node_mem=[1e6] * 3)
        assert res.violations == 0
        assert res.requests == counts.sum()
        assert res.node_requests.sum() == counts.sum()


def test_memory_given_as_requested() -> None:
    # one pod requests 1 GB and asks 1.5: fine while the node has memory to spare ...
    reqs = _reqs([1, 1], [0.1, 0.1], [1.5, 3.0])
    free = _run([0, 0], [1.0, 1.0], [10.0], reqs, req_mem=[1.0, 3.0], node_mem=[5.0])
    assert free.violations == 0
    # ... violated when the other pod uses all of its own and the node has only 1 GB more
    full = _run([0, 0], [1.0, 1.0], [10.0], reqs, req_mem=[1.0, 3.0], node_mem=[4.0])
    assert full.violated.tolist() == [True, False]
    np.testing.assert_allclose(full.assigned_mem, [1.0, 3.0])


def test_assigned_resources_note_example() -> None:
    # the note: one pod requesting 50 of a 100-cpu node is assigned all 100, memory as requested
    cpu, mem = assigned_resources(
        np.array([0, 1, 1]),
        np.array([50.0, 1.0, 3.0]),
        np.array([60.0, 30.0, 90.0]),
        np.array([100.0, 8.0]),
        np.array([100.0, 60.0]),
    )
    np.testing.assert_allclose(cpu, [100.0, 2.0, 6.0])
    # node 1's memory requests (120) exceed its 60: scaled down in proportion
    np.testing.assert_allclose(mem, [60.0, 15.0, 45.0])


def test_series_are_time_averages() -> None:
    rng = np.random.default_rng(1)
    counts = rng.integers(0, 30, 8)
    reqs = draw_requests(counts, rng.uniform(0.1, 2, 8), rng.uniform(0.1, 2, 8), 0.3, rng)
    node = np.array([0, 0, 0, 1, 1, 1, 2, 2])
    S = 7
    res = _run(node, [1.0] * 8, [4.0] * 3, reqs, "serial", S)
    pod = reqs.pod
    # serial: a request holds 1/L of the window, L = its node's axis
    L = res.axis[node[pod]]
    expected = np.bincount(node[pod], weights=reqs.cpu / L, minlength=3)
    np.testing.assert_allclose(res.node_series[:, :, 0].mean(axis=1), expected)
    np.testing.assert_allclose(res.pod_series.sum(axis=0), res.node_series.sum(axis=0))
    par = _run(node, [1.0] * 8, [4.0] * 3, reqs, "parallel", S)
    np.testing.assert_allclose(
        par.node_series[:, :, 1].sum(axis=1), np.bincount(node[pod], weights=reqs.mem)
    )


def test_draw_requests_seeded_and_mean_preserving() -> None:
    counts = np.array([0, 5, 20000])
    a = draw_requests(counts, [1.0, 2.0, 3.0], [0.5, 1.0, 1.5], 0.4, np.random.default_rng(3))
    b = draw_requests(counts, [1.0, 2.0, 3.0], [0.5, 1.0, 1.5], 0.4, np.random.default_rng(3))
    np.testing.assert_array_equal(a.cpu, b.cpu)
    assert len(a.cpu) == counts.sum() and a.pod.tolist()[:5] == [1] * 5
    assert a.cpu[5:].mean() == pytest.approx(3.0, rel=0.02)
    np.testing.assert_allclose(a.mem / a.cpu, 0.5)  # one factor for both resources
    exact = draw_requests(counts, [1.0, 2.0, 3.0], [0.5, 1.0, 1.5], 0.0, np.random.default_rng())
    np.testing.assert_allclose(exact.cpu[:5], 2.0)


def test_workload_validation() -> None:
    ok = dict(
        node_names=("n1",),
        node_cpu=np.array([4.0]),
        node_mem=np.array([8.0]),
        pod_names=("p1",),
        pod_node=np.array([0]),
        request_cpu=np.array([1.0]),
        request_mem=np.array([1.0]),
        requests=np.array([[3], [4]]),
        demand_cpu=np.ones((2, 1)),
        demand_mem=np.ones((2, 1)),
        spread=np.array([0.2]),
    )
    wl = PodWorkload(**ok)
    assert wl.kind == "pod-requests" and wl.num_windows == 2
    assert wl.summary()["requests"] == 7
    with pytest.raises(ValueError, match="demand_cpu"):
        PodWorkload(**{**ok, "demand_cpu": np.ones((3, 1))})
    with pytest.raises(ValueError, match="pod_node"):
        PodWorkload(**{**ok, "pod_node": np.array([1])})
    with pytest.raises(ValueError, match="mode"):
        PodWorkload(**ok, mode="batch")


def test_greedy_candidates_follow_greedy_order() -> None:
    rng = np.random.default_rng(3)
    for _ in range(300):
        # up to 60 slots with few moves each: the first k moves can lie past its first block
        S, N, k = int(rng.integers(1, 60)), int(rng.integers(2, 9)), int(rng.integers(1, 30))
        viol = rng.integers(0, 3, S).astype(float)  # small counts: many ties
        load = rng.integers(0, 3, N) / 2.0
        moves = rng.random((S, N)) < rng.choice([0.05, 0.5])
        got = greedy_candidates(viol, load, moves, k)
        # the reference: every feasible move sorted by (more violations, slot, load, node)
        s, n = np.nonzero(moves)
        ref = sorted(zip(-viol[s], s, load[n], n, strict=True))[:k]
        assert got.tolist() == [int(si) * N + int(ni) for _, si, _, ni in ref]
