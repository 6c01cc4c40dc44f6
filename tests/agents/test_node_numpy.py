"""The numpy node-scoring actor computes the torch network's logits and picks its actions."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rlsched.agents.networks import node_logits
from rlsched.agents.node_numpy import NodeScorer
from rlsched.evaluate import make_env
from rlsched.policies.learned import LearnedPolicy
from rlsched.policies.registry import make_policy
from rlsched.splits import WF_TEST

ROOT = Path(__file__).resolve().parents[2]

ZOO = "zoo/serverless-edge-maskable-ppo"


@pytest.mark.parametrize("num_nodes", [10, 20, 100])
def test_numpy_logits_equal_the_torch_networks_at_any_node_count(num_nodes: int) -> None:
    env = make_env("rlsched/ServerlessPlacement-v0", WF_TEST, scenario="edge",
                   num_nodes=num_nodes, episode_length=30)  # fmt: skip
    pol = make_policy(f"learned:{ZOO}", env, seed=0)
    assert isinstance(pol, LearnedPolicy) and pol._scorer is not None
    scorer = NodeScorer.from_policy(pol.model.policy)
    obs, _ = env.reset(seed=3)
    other = make_policy("random", env, seed=1)
    done, n = False, 0
    while not done:
        z = scorer.logits(obs)
        assert z.shape == (num_nodes,) and z.dtype == np.float32
        np.testing.assert_allclose(z, node_logits(pol.model.policy, obs), rtol=1e-4, atol=1e-4)
        obs, _, term, trunc, _ = env.step(other.act(obs, env.unwrapped.action_masks()))
        done, n = term or trunc, n + 1
    assert n == 30


def test_the_learned_policy_acts_as_sb3_predict_does() -> None:
    env = make_env("rlsched/ServerlessPlacement-v0", WF_TEST, scenario="edge", episode_length=60)
    pol = make_policy(f"learned:{ZOO}", env, seed=0)
    assert isinstance(pol, LearnedPolicy)
    obs, _ = env.reset(seed=5)
    done = False
    while not done:
        mask = env.unwrapped.action_masks()
        a = pol.act(obs, mask)
        ref, _ = pol.model.predict(obs, action_masks=mask, deterministic=True)
        assert a == int(ref) and mask[a]
        obs, _, term, trunc, _ = env.step(a)
        done = term or trunc


def test_scorer_weights_are_a_copy() -> None:
    env = make_env("rlsched/ServerlessPlacement-v0", WF_TEST, scenario="edge", episode_length=5)
    pol = make_policy(f"learned:{ZOO}", env, seed=0)
    assert isinstance(pol, LearnedPolicy)
    scorer = NodeScorer.from_policy(pol.model.policy)
    obs, _ = env.reset(seed=0)
    before = scorer.logits(obs)
    for p in pol.model.policy.parameters():
        p.data.add_(1.0)  # training on: the scorer made before keeps its weights
    np.testing.assert_array_equal(scorer.logits(obs), before)


def test_scoring_only_the_valid_moves_picks_what_scoring_all_does() -> None:
    """PodRebalancing masks most moves: act() scores the valid rows alone, to the same choice."""
    env = make_env("rlsched/PodRebalancing-v0", "synthetic:pods?seed=2", scenario="today",
                   max_pods_per_node=30, action_features=True, migration_cost=0.003,
                   num_nodes=10, episode_length=12)  # fmt: skip
    # the retired full model (configs/zoo/start): it scores every valid move, not a few
    pol = make_policy(f"learned:{ROOT}/configs/zoo/start/pod-rebalancing-today-ppo", env, seed=0)
    assert isinstance(pol, LearnedPolicy) and pol._scorer is not None
    scorer = pol._scorer
    obs, _ = env.reset(seed=1)
    done, subset_used, moves = False, 0, 0
    while not done:
        mask = env.unwrapped.action_masks()
        valid = np.flatnonzero(mask)
        full = scorer.logits(obs)
        np.testing.assert_allclose(scorer.logits(obs, valid), full[valid], rtol=1e-5, atol=1e-5)
        a = scorer.act(obs, mask)
        assert mask[a] and full[a] >= full[valid].max() - 1e-5
        subset_used += len(valid) <= len(mask) // 2
        moves += a != 0
        obs, _, term, trunc, _ = env.step(a)
        done = term or trunc
    assert subset_used == 12 and moves > 0
