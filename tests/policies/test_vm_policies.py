"""Policies of VMPlacement-v0: the fit rules on hand-made states, registry wiring, episodes."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import rlsched  # noqa: F401
from rlsched.evaluate import compare
from rlsched.policies.registry import env_policy_factories, expand_policies, make_policy
from rlsched.policies.vm import (
    POLICY_FACTORIES,
    BestFitPolicy,
    FirstFitPolicy,
    RandomFitPolicy,
    WorstFitPolicy,
    left_after,
)

SMALL = "synthetic:vm?creations=3000&days=3&seed=0"


def _obs(after: list[list[float]], double: bool) -> dict[str, np.ndarray]:
    return {
        "node_after": np.asarray(after, dtype=np.float32),
        "request": np.float32([0.1, 0.1, float(double)]),
    }


# rows 2s + k: (cpu, mem) fraction left on NUMA k of server s after placing the request there
AFTER = [[0.5, 0.5], [0.1, 0.3], [0.9, 0.9], [0.2, 0.0], [0.6, 0.8], [-0.1, 0.4]]


def test_single_request_fits() -> None:
    mask = np.array([True, True, True, True, True, False])
    obs = _obs(AFTER, double=False)
    np.testing.assert_allclose(left_after(obs), [0.5, 0.2, 0.9, 0.1, 0.7, 0.15], rtol=1e-6)
    assert BestFitPolicy().act(obs, mask) == 3  # 0.1 left: the tightest NUMA
    assert WorstFitPolicy().act(obs, mask) == 2  # 0.9 left
    assert FirstFitPolicy().act(obs, mask) == 0
    mask[[2, 3]] = False
    assert BestFitPolicy().act(obs, mask) == 1 and WorstFitPolicy().act(obs, mask) == 4
    assert FirstFitPolicy().act(obs, np.array([False, False, False, True, True, False])) == 3


def test_double_request_scores_both_numa_nodes() -> None:
    obs = _obs(AFTER, double=True)
    # per server: mean of its two NUMA nodes = 0.35, 0.5, 0.425
    np.testing.assert_allclose(left_after(obs), [0.35, 0.35, 0.5, 0.5, 0.425, 0.425], rtol=1e-6)
    mask = np.array([True, True, True, True, False, False])
    assert BestFitPolicy().act(obs, mask) == 0  # ties between a server's bits: the lower one
    assert WorstFitPolicy().act(obs, mask) == 2
    mask = np.array([False, False, True, True, True, True])
    assert BestFitPolicy().act(obs, mask) == 4


def test_ties_go_to_lowest_index_and_empty_mask() -> None:
    obs = _obs([[0.5, 0.5]] * 4, double=False)
    mask = np.array([False, True, True, True])
    assert BestFitPolicy().act(obs, mask) == 1 and WorstFitPolicy().act(obs, mask) == 1
    none = np.zeros(4, dtype=bool)
    assert BestFitPolicy().act(obs, none) == 0 and RandomFitPolicy(0).act(obs, none) == 0


def test_random_is_uniform_over_valid_and_seeded() -> None:
    obs = _obs(AFTER, double=False)
    mask = np.array([True, False, True, False, True, False])
    pol = RandomFitPolicy(seed=1)
    picks = [pol.act(obs, mask) for _ in range(3000)]
    counts = np.bincount(picks, minlength=6)
    assert counts[[1, 3, 5]].sum() == 0 and counts[[0, 2, 4]].min() > 900
    pol.reset(7)
    a = [pol.act(obs, mask) for _ in range(20)]
    pol.reset(7)
    assert a == [pol.act(obs, mask) for _ in range(20)]


def test_registry_wiring() -> None:
    env = gym.make("rlsched/VMPlacement-v0", dataset=SMALL, disable_env_checker=True)
    assert list(env_policy_factories(env)) == list(POLICY_FACTORIES)
    names = expand_policies("all", env)
    assert names[:4] == ["first_fit", "best_fit", "worst_fit", "random"]
    # generic node heuristics need a NodeView the env does not offer: only round_robin joins
    assert names[4:] == ["round_robin"]
    assert isinstance(make_policy("best_fit", env, seed=0), BestFitPolicy)


@pytest.mark.parametrize("name", list(POLICY_FACTORIES))
@pytest.mark.parametrize("scenario", ["fading", "recovering"])
def test_policies_play_valid_episodes(name: str, scenario: str) -> None:
    env = gym.make(
        "rlsched/VMPlacement-v0", num_nodes=4, scenario=scenario, dataset=SMALL
    ).unwrapped
    pol = make_policy(name, env, seed=0)
    obs, _ = env.reset(seed=0)
    done = False
    while not done:
        mask = env.action_masks()
        a = pol.act(obs, mask)
        assert mask[a]
        if name == "best_fit":  # nothing valid leaves less
            left = left_after(obs)
            assert left[a] <= left[mask].min() + 1e-6
        obs, _, term, trunc, info = env.step(a)
        done = term or trunc
    assert info["metrics"]["placed"] > 0 and info["metrics"]["invalid_actions"] == 0


def test_compare_all() -> None:
    out = compare(
        "rlsched/VMPlacement-v0",
        SMALL,
        "all",
        episodes=4,
        seed=0,
        env_kwargs={"num_nodes": 10},
    )
    res = {r["policy"]: r for r in out["results"]}
    assert set(res) == {"first_fit", "best_fit", "worst_fit", "random", "round_robin"}
    placed = {k: v["metrics"]["placed"] for k, v in res.items()}
    # spreading VMs thinly leaves no room for large ones: worst fit places the fewest
    assert placed["worst_fit"] < min(placed["first_fit"], placed["best_fit"])
