"""The compiled ranking of greedy_migration's moves gives the numpy path's actions exactly."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

pytest.importorskip("numba")

from rlsched.policies import pods
from rlsched.policies.pods import GreedyMigrationPolicy, anchored_and_greedy


def _numpy(fn: Any, *args: Any) -> Any:
    """``fn(*args)`` on the numpy path."""
    pods.COMPILED = False
    try:
        return fn(*args)
    finally:
        pods.COMPILED = True


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
