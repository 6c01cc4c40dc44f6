"""PodRebalancing-v0 baselines: no_migration, greedy_migration, and how the env exposes them."""

from __future__ import annotations

import numpy as np

from rlsched.envs.pod_rebalancing import PodRebalancingEnv
from rlsched.evaluate import evaluate, make_env
from rlsched.policies import make_policy
from rlsched.policies.pods import GreedyMigrationPolicy, NoMigrationPolicy
from rlsched.policies.registry import expand_policies

N, K, S = 3, 4, 2


def _code(src: int, slot: int, dst: int) -> int:
    return 1 + (src * K + slot) * N + dst


def _obs(viol: dict[tuple[int, int], float], load: list[float]) -> dict[str, np.ndarray]:
    pv = np.zeros((N, K), np.float32)
    for (n, j), v in viol.items():
        pv[n, j] = v
    mask = np.zeros((N, K), np.float32)
    mask[:, :3] = 1.0
    return {
        "pod_violations": pv,
        "pod_mask": mask,
        "load": np.repeat(np.asarray(load, np.float32)[:, None, None], S, 1).repeat(2, 2),
    }


def _mask(moves: list[tuple[int, int, int]]) -> np.ndarray:
    m = np.zeros(1 + N * K * N, dtype=bool)
    m[0] = True
    for mv in moves:
        m[_code(*mv)] = True
    return m


def test_greedy_moves_the_most_violating_pod_to_the_least_loaded_feasible_node() -> None:
    pol = GreedyMigrationPolicy()
    obs = _obs({(0, 1): 0.5, (1, 2): 2.0, (2, 0): 1.0}, load=[0.9, 1.2, 0.1])
    # pod (1, 2) violates most; node 2 is least loaded but not feasible for it, node 0 is
    mask = _mask([(1, 2, 0), (0, 1, 2), (2, 0, 0)])
    assert pol.act(obs, mask) == _code(1, 2, 0)
    # when node 2 is feasible too, it wins
    mask = _mask([(1, 2, 0), (1, 2, 2)])
    assert pol.act(obs, mask) == _code(1, 2, 2)


def test_greedy_skips_pods_without_a_feasible_move_and_idles_without_violations() -> None:
    pol = GreedyMigrationPolicy()
    obs = _obs({(1, 2): 2.0, (2, 0): 1.0}, load=[0.5, 1.2, 0.9])
    assert pol.act(obs, _mask([(2, 0, 0), (2, 0, 1)])) == _code(2, 0, 0)
    assert pol.act(obs, _mask([])) == 0
    quiet = _obs({}, load=[0.5, 1.2, 0.9])
    assert pol.act(quiet, _mask([(1, 2, 0)])) == 0
    # a violation count in an empty slot (masked out) does not count
    ghost = _obs({(0, 3): 5.0}, load=[0.5, 1.2, 0.9])
    assert pol.act(ghost, _mask([(1, 2, 0)])) == 0


def test_no_migration_never_moves() -> None:
    assert NoMigrationPolicy().act({}, np.ones(10, dtype=bool)) == 0


def test_env_exposes_its_policies() -> None:
    env = make_env("rlsched/PodRebalancing-v0", "synthetic:pods?nodes=3&pods=12&windows=48")
    names = expand_policies("all", env)
    assert names[:2] == ["no_migration", "greedy_migration"] and "random" in names
    assert make_policy("greedy_migration", env).name == "greedy_migration"


def test_greedy_beats_no_migration_on_the_default_data() -> None:
    env = PodRebalancingEnv(max_pods_per_node=30)
    viol = {}
    for name in ("no_migration", "greedy_migration"):
        res = evaluate(make_policy(name, env, seed=0), env, episodes=2, seed=0)
        viol[name] = sum(e.metrics["violations"] for e in res)
        if name == "greedy_migration":
            assert all(e.metrics["migrations"] > 0 for e in res)
    assert viol["greedy_migration"] < 0.5 * viol["no_migration"]


def test_anchored_mask_is_the_envs_candidates_mask() -> None:
    from rlsched.policies.pods import anchored_mask

    kw = {"dataset": "synthetic:pods?nodes=3&pods=12&windows=48&seed=1", "max_pods_per_node": 12}
    full, few = PodRebalancingEnv(**kw), PodRebalancingEnv(**kw, candidates=4)
    rng = np.random.default_rng(0)
    for seed in (0, 1):
        obs, _ = full.reset(seed=seed)
        few.reset(seed=seed)
        for _ in range(full.episode_length):
            anchored = few.action_masks()
            np.testing.assert_array_equal(anchored_mask(obs, full.action_masks(), 4), anchored)
            a = int(rng.choice(np.flatnonzero(anchored)))  # random: states greedy never visits
            obs, *_ = full.step(a)
            few.step(a)
