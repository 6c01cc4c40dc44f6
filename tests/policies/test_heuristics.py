"""Heuristics: each rule on a hand-made node view, the mask respected, seeded tie-breaking."""

import numpy as np
import pytest

import rlsched  # noqa: F401
from rlsched.core.cluster import NodeView
from rlsched.evaluate import make_env
from rlsched.policies import HEURISTICS, applicable_heuristics, expand_policies, make_policy
from rlsched.policies.heuristics import (
    BestFitPolicy,
    CheapestPolicy,
    K8sBalancedAllocation,
    K8sLeastAllocated,
    K8sMostAllocated,
    LeastLoadedPolicy,
    RoundRobinPolicy,
    WorstFitPolicy,
)

# three nodes: a big empty one, a half-full one, a nearly full small one
VIEW = NodeView(
    capacity=np.array([[16.0, 64.0], [8.0, 32.0], [4.0, 8.0]]),
    requested=np.array([[0.0, 0.0], [4.0, 8.0], [3.0, 2.0]]),
    demand=np.array([1.0, 2.0]),
    price=np.array([0.7, 0.3, 0.2]),
    load=np.array([0.1, 0.6, 0.9]),
)
ALL = np.ones(3, dtype=bool)


def pick(cls, mask=ALL):
    return cls(lambda _obs: VIEW, seed=0).act({}, mask)


def test_fit_rules() -> None:
    # fraction after placement: node0 (1/16+2/64)/2=.047, node1 (5/8+10/32)/2=.47, node2 (1+.5)/2
    assert pick(BestFitPolicy) == 2
    assert pick(WorstFitPolicy) == 0
    assert pick(CheapestPolicy) == 2
    assert pick(LeastLoadedPolicy) == 0


def test_kubernetes_scores_match_upstream_formulas() -> None:
    pol = K8sLeastAllocated(lambda _o: VIEW)
    # node1: cpu (8-5)*100/8 = 37 (int), mem (32-10)*100/32 = 68 -> (37+68)//2 = 52
    np.testing.assert_array_equal(pol.score(VIEW), [(93 + 96) // 2, 52, (0 + 50) // 2])
    most = K8sMostAllocated(lambda _o: VIEW)
    # node1: cpu 5*100/8 = 62, mem 10*100/32 = 31 -> 46
    np.testing.assert_array_equal(most.score(VIEW), [(6 + 3) // 2, 46, (100 + 50) // 2])
    bal = K8sBalancedAllocation(lambda _o: VIEW)
    # node2: fractions 1.0 and 0.5 -> std 0.25 -> 75
    assert bal.score(VIEW)[2] == 75
    assert pick(K8sLeastAllocated) == 0
    assert pick(K8sMostAllocated) == 2


def test_heuristics_respect_the_mask() -> None:
    mask = np.array([False, True, False])
    for cls in (
        BestFitPolicy,
        WorstFitPolicy,
        CheapestPolicy,
        LeastLoadedPolicy,
        K8sLeastAllocated,
        K8sMostAllocated,
        K8sBalancedAllocation,
    ):
        assert pick(cls, mask) == 1, cls.__name__


def test_round_robin_cycles_over_valid_nodes() -> None:
    rr = RoundRobinPolicy()
    mask = np.array([True, False, True, True])
    assert [rr.act({}, mask) for _ in range(4)] == [0, 2, 3, 0]


def test_round_robin_takes_the_next_valid_action_after_the_last_cyclically() -> None:
    rng = np.random.default_rng(0)
    rr = RoundRobinPolicy()
    for _ in range(500):
        mask = rng.random(int(rng.integers(1, 9))) < 0.3  # some with no valid action
        last = rr.last
        n = len(mask)
        ring = [(last + 1 + i) % n for i in range(n)]
        want = next((a for a in ring if mask[a]), (last + 1) % n)
        assert rr.act({}, mask) == want


def test_ties_are_broken_by_a_seeded_rng() -> None:
    tie = NodeView(capacity=np.ones((6, 2)), requested=np.zeros((6, 2)), demand=np.zeros(2))
    picks = {K8sLeastAllocated(lambda _o: tie, seed=s).act({}, np.ones(6, bool)) for s in range(30)}
    assert len(picks) > 1
    a = K8sLeastAllocated(lambda _o: tie, seed=4)
    b = K8sLeastAllocated(lambda _o: tie, seed=4)
    assert [a.act({}, np.ones(6, bool)) for _ in range(5)] == [
        b.act({}, np.ones(6, bool)) for _ in range(5)
    ]


@pytest.mark.parametrize("name", sorted(HEURISTICS))
def test_every_heuristic_plays_a_full_episode_without_invalid_actions(name: str) -> None:
    env = make_env("rlsched/ServerlessPlacement-v0", "wfinstances:blast-43", episode_length=60)
    pol = make_policy(name, env, seed=0)
    obs, _ = env.reset(seed=1)
    pol.reset(1)
    done = False
    while not done:
        obs, _, done, _, info = env.step(pol.act(obs, env.unwrapped.action_masks()))
        assert not info.get("invalid_action")
    assert info["metrics"]["placed"] == 60


def test_all_expands_to_every_applicable_heuristic() -> None:
    env = make_env("rlsched/ServerlessPlacement-v0")
    assert applicable_heuristics(env) == list(HEURISTICS)
    assert expand_policies("first_fit,all", env)[0] == "first_fit"
    assert len(expand_policies("all", env)) == len(HEURISTICS)


def test_plain_expands_to_the_heuristics_that_do_not_search() -> None:
    env = make_env("rlsched/WorkflowOffloading-v0")
    every, plain = expand_policies("all", env), expand_policies("plain,heft", env)
    # the searching ones (CP-SAT `optimal`, `mdp_rollout`) are left out, the order kept
    assert "mdp_rollout" in every and "mdp_rollout" not in plain
    assert plain == [n for n in every if make_policy(n, env, seed=0).category == "heuristic"]
