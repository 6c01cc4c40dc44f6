"""The compiled ranking of greedy_migration's moves gives the numpy path's actions exactly, and
the compiled window model its windows."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

pytest.importorskip("numba")

from rlsched.core import pods as core_pods
from rlsched.optional import numpy_path
from rlsched.policies import pods
from rlsched.policies.pods import GreedyMigrationPolicy, anchored_and_greedy


def _numpy(fn: Any, *args: Any, module: Any = pods) -> Any:
    """``fn(*args)`` on ``module``'s numpy path (the ranking's, by default)."""
    with numpy_path(module):
        return fn(*args)


def _random_states(rng: np.random.Generator) -> Iterator[tuple[dict[str, np.ndarray], np.ndarray]]:
    for _ in range(400):
        n, per, slots = int(rng.integers(2, 9)), int(rng.integers(1, 6)), int(rng.integers(1, 12))
        obs = {
            # small counts and a few load levels: many ties, which the orders break by index
            "pod_violations": rng.integers(0, 3, (n, per)).astype(np.float32),
            "pod_mask": (rng.random((n, per)) < 0.8).astype(np.float32),
            "load": (rng.integers(0, 4, (n, slots, 2)) / rng.choice([3.0, 7.0])).astype(np.float32),
        }
        mask = rng.random(1 + n * per * n) < rng.choice([0.0, 0.05, 0.5, 1.0])
        yield obs, mask


def test_anchored_ranking_equals_the_numpy_path_on_random_states() -> None:
    rng = np.random.default_rng(11)
    for obs, mask in _random_states(rng):
        for k in (1, 4, int(rng.integers(1, 40))):
            got_valid, got_own = anchored_and_greedy(obs, mask, k)
            ref_valid, ref_own = _numpy(anchored_and_greedy, obs, mask, k)
            assert got_valid.dtype == ref_valid.dtype
            np.testing.assert_array_equal(got_valid, ref_valid)
            assert got_own == ref_own and isinstance(got_own, int)
        greedy = GreedyMigrationPolicy()
        assert greedy.act(obs, mask) == _numpy(greedy.act, obs, mask)


def test_anchored_ranking_equals_the_numpy_path_in_the_env() -> None:
    from rlsched.envs.pod_rebalancing import PodRebalancingEnv

    rng = np.random.default_rng(5)
    for nodes in (4, 10, 20):
        env = PodRebalancingEnv(num_nodes=nodes)
        obs, _ = env.reset(seed=nodes)
        for _ in range(60):
            mask = env.action_masks()
            for k in (1, 8, 64):
                got, own = anchored_and_greedy(obs, mask, k)
                ref, ref_own = _numpy(anchored_and_greedy, obs, mask, k)
                np.testing.assert_array_equal(got, ref)
                assert own == ref_own
            # random moves: states greedy_migration would never visit
            obs, _, term, trunc, _ = env.step(int(rng.choice(np.flatnonzero(mask))))
            if term or trunc:
                obs, _ = env.reset(seed=int(rng.integers(1000)))


# ---------------------------------------------------------------- the window model
_FIELDS = ("violated", "pod_requests", "pod_violations", "node_requests", "node_violations",
           "pod_series", "node_series", "assigned_cpu", "assigned_mem", "axis")  # fmt: skip


def _window_numpy(*args: Any) -> Any:
    """``simulate_window(*args)`` on the numpy path."""
    return _numpy(core_pods.simulate_window, *args, module=core_pods)


def _same_window(got: Any, ref: Any) -> None:
    for name in _FIELDS:
        a, b = getattr(got, name), getattr(ref, name)
        np.testing.assert_array_equal(a, b, err_msg=name)
        # an empty window: numpy's bincount of nothing is int64 zeros, the kernel's float64
        assert a.dtype == b.dtype or ref.requests == 0, name


def test_window_equals_the_numpy_path_on_random_windows() -> None:
    rng = np.random.default_rng(3)
    for trial in range(600):
        n, p = int(rng.integers(1, 8)), int(rng.integers(1, 30))
        big = trial % 3 == 0  # many requests per (pod, slot) and per (node, slot): long sorts
        slots = 2 if big else int(rng.integers(1, 12))
        ties = trial % 2 == 0  # sizes on a grid: equal sizes, sums exactly at a limit
        counts = rng.integers(0, 80 if big else 6, p)
        r = int(counts.sum())

        def sizes(k: int, step: float, ties: bool = ties) -> np.ndarray:
            return rng.integers(0, 5, k) * step if ties else rng.random(k) * 8 * step

        args = (rng.integers(0, n, p), sizes(p, 0.5), sizes(p, 0.5),
                rng.integers(1, 6, n) * 1.0, rng.integers(1, 6, n) * 1.0,
                core_pods.WindowRequests(counts, sizes(r, 0.25), sizes(r, 0.25)))  # fmt: skip
        for mode in core_pods.MODES:
            _same_window(core_pods.simulate_window(*args, mode, slots),
                         _window_numpy(*args, mode, slots))  # fmt: skip


def test_window_with_a_nan_size_is_played_by_the_numpy_path() -> None:
    reqs = core_pods.WindowRequests(np.array([2, 1]), np.array([np.nan, 1.0, 0.5]),
                                    np.array([1.0, 1.0, 1.0]))  # fmt: skip
    args = (np.array([0, 0]), np.ones(2), np.ones(2), np.array([2.0]), np.array([2.0]), reqs)
    kernels = pytest.importorskip("rlsched.core.pods_kernels")
    assert kernels.simulate_window(np.array([0, 0]), np.ones(2), np.ones(2), np.array([2.0]),
                                   np.array([2.0]), reqs.counts, reqs.cpu, reqs.mem, True,
                                   3) is None  # fmt: skip
    got = core_pods.simulate_window(*args, "serial", 3)
    _same_window(got, _window_numpy(*args, "serial", 3))
    assert got.violated.tolist() == [True, False, False]  # a NaN size is never served
    # arrays that do not fit together: not indexed unchecked, numpy's own error
    with pytest.raises(IndexError):
        core_pods.simulate_window(np.array([0, 3]), *args[1:], "serial", 3)
    short = core_pods.WindowRequests(np.array([2, 2]), np.ones(3), np.ones(3))
    with pytest.raises(ValueError):
        core_pods.simulate_window(*args[:5], short, "serial", 3)


def test_window_equals_the_numpy_path_in_the_env() -> None:
    """Two envs from the same seed, one playing its windows on the numpy path: the same
    observations, rewards and metrics at every step of random moves."""
    from rlsched.envs.pod_rebalancing import PodRebalancingEnv

    rng = np.random.default_rng(8)
    for nodes, mode in ((4, "serial"), (10, "parallel"), (20, "serial")):
        envs = [PodRebalancingEnv(num_nodes=nodes, mode=mode) for _ in range(2)]
        for e in envs:
            e.reset(seed=nodes)
        for _ in range(50):
            mask = envs[0].action_masks()
            a = int(rng.choice(np.flatnonzero(mask)))
            got = envs[0].step(a)
            ref = _numpy(envs[1].step, a, module=core_pods)
            for key in got[0]:
                np.testing.assert_array_equal(got[0][key], ref[0][key], err_msg=key)
            assert got[1:4] == ref[1:4] and got[4].get("metrics") == ref[4].get("metrics")
            if got[3]:
                seed = int(rng.integers(1000))
                for e in envs:
                    e.reset(seed=seed)
