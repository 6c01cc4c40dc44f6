"""PodRebalancing-v0: conservation, masks, determinism, the note's cluster dict, rewards."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env as gym_check_env
from stable_baselines3.common.env_checker import check_env as sb3_check_env

import rlsched  # noqa: F401
from rlsched.data import load_dataset
from rlsched.envs.pod_rebalancing import PodRebalancingEnv

FIXTURE = Path(__file__).parents[1] / "data" / "fixtures" / "pod_requests_sample.csv"
SMALL = "synthetic:pods?nodes=3&pods=12&windows=48&seed=1"


def _env(**kw) -> PodRebalancingEnv:
    kw.setdefault("dataset", SMALL)
    kw.setdefault("max_pods_per_node", 12)
    return PodRebalancingEnv(**kw)


def _brute_force_mask(env: PodRebalancingEnv) -> np.ndarray:
    N, K = env.num_nodes, env.max_pods_per_node
    node_of = env.pod_node
    res_c = np.zeros(N)
    res_m = np.zeros(N)
    count = np.zeros(N, dtype=int)
    for p, n in enumerate(node_of):
        res_c[n] += env.workload.request_cpu[p]
        res_m[n] += env.workload.request_mem[p]
        count[n] += 1
    mask = np.zeros(env.action_space.n, dtype=bool)
    mask[0] = True
    for src in range(N):
        for slot in range(K):
            p = env._pod_at[src * K + slot]
            if p < 0:
                continue
            for dst in range(N):
                ok = (
                    dst != src
                    and count[dst] < K
                    and res_c[dst] + env.workload.request_cpu[p] <= env.node_cpu[dst] + 1e-9
                    and res_m[dst] + env.workload.request_mem[p] <= env.node_mem[dst] + 1e-9
                )
                mask[env.encode_action(src, slot, dst)] = ok
    return mask


def _check_placement(env: PodRebalancingEnv) -> None:
    K = env.max_pods_per_node
    at = env._pod_at
    # every pod in exactly one slot, and that slot is on its node
    placed = np.sort(at[at >= 0])
    np.testing.assert_array_equal(placed, np.arange(env.num_pods))
    np.testing.assert_array_equal(at[env._slot_of], np.arange(env.num_pods))
    np.testing.assert_array_equal(env._slot_of // K, env.pod_node)
    N = env.num_nodes
    np.testing.assert_allclose(
        env._res_cpu, np.bincount(env.pod_node, weights=env.workload.request_cpu, minlength=N)
    )
    np.testing.assert_array_equal(env._count, np.bincount(env.pod_node, minlength=N))


def test_conservation_and_masks_under_random_moves() -> None:
    env = _env()
    wl = env.workload
    rng = np.random.default_rng(0)
    for ep in range(3):
        obs, info = env.reset(seed=ep)
        start = info["window"]
        _check_placement(env)
        total = 0
        done = False
        while not done:
            mask = env.action_masks()
            np.testing.assert_array_equal(mask, _brute_force_mask(env))
            valid = np.flatnonzero(mask)
            a = int(rng.choice(valid[1:])) if len(valid) > 1 else 0
            obs, _, term, trunc, info = env.step(a)
            assert env.observation_space.contains(obs)
            assert not term and not info["invalid_action"]
            assert (info["moved"] is not None) == (a != 0)
            # requests dispatched = requests in the data for that window
            assert info["requests"] == wl.requests[info["window"]].sum()
            assert info["window"] == (start + env._t) % wl.num_windows
            total += info["requests"]
            _check_placement(env)
            np.testing.assert_array_equal(obs["pod_mask"].ravel() > 0, env._pod_at >= 0)
            done = trunc
        assert info["metrics"]["requests"] == total
        assert env._t == env.episode_length


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_registered_env_passes_both_checkers() -> None:
    env = gym.make("rlsched/PodRebalancing-v0", disable_env_checker=True, max_pods_per_node=30)
    gym_check_env(env.unwrapped, skip_render_check=True)
    sb3_check_env(env.unwrapped, warn=False)


def test_deterministic_under_seed() -> None:
    def run(seed: int) -> list:
        env = _env()
        obs, _ = env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        out = []
        for _ in range(30):
            valid = np.flatnonzero(env.action_masks())
            a = int(rng.choice(valid))
            obs, r, _, trunc, info = env.step(a)
            out.append((a, r, info["violations"], obs["pod_series"].tobytes()))
            if trunc:
                env.reset()
        return out

    assert run(5) == run(5)
    assert run(5) != run(6)


def test_observation_layout() -> None:
    env = _env(slots=4)
    obs, _ = env.reset(seed=0)
    N, K = 3, 12
    assert obs["load"].shape == (N, 4, 2) and obs["pod_series"].shape == (N, K, 4, 2)
    assert obs["pod_request"].shape == (N, K, 2) and obs["pod_mask"].shape == (N, K)
    # no node_* keys: policy_net auto must pick the flat MLP (the node axis is not the action's)
    assert not any(k.startswith("node_") for k in obs)
    # series of a pod sit in its slot; the node load is the sum over its pods
    unit = env._unit
    per_node = (
        obs["pod_series"].sum(axis=1) * unit / np.stack([env.node_cpu, env.node_mem], 1)[:, None, :]
    )
    np.testing.assert_allclose(obs["load"], per_node, rtol=1e-5, atol=1e-6)
    res = env._last
    traffic = obs["pod_traffic"].ravel()[env._slot_of] / env._traffic_unit
    np.testing.assert_allclose(traffic, res.pod_requests, rtol=1e-5)
    assert env.action_space.n == 1 + N * K * N


def test_action_encoding_roundtrip() -> None:
    env = _env()
    for src, slot, dst in [(0, 0, 1), (2, 11, 0), (1, 5, 2)]:
        a = env.encode_action(src, slot, dst)
        assert env.decode_action(a) == (src, slot, dst)
    assert env.decode_action(0) is None


def test_cluster_state_has_the_notes_shape() -> None:
    env = _env()
    env.reset(seed=0)
    state = env.cluster_state()
    assert list(state) == list(env.node_names)
    pods = [p["pod_name"] for node in state.values() for p in node["pods"]]
    assert sorted(pods) == sorted(env.workload.pod_names)
    for n, node in enumerate(state.values()):
        assert set(node) == {"total_cpu", "total_mem", "remain_cpu", "remain_mem", "pods"}
        for p in node["pods"]:
            assert set(p) == {
                "pod_name",
                "request_cpu",
                "request_mem",
                "assigned_cpu",
                "assigned_mem",
            }
            assert p["assigned_mem"] == pytest.approx(p["request_mem"])
        if node["pods"]:
            # all of the node's cpu is shared out in proportion to the requests
            assert sum(p["assigned_cpu"] for p in node["pods"]) == pytest.approx(node["total_cpu"])
            assert node["remain_cpu"] == pytest.approx(0.0, abs=1e-9)
            p0 = node["pods"][0]
            share = p0["request_cpu"] / sum(p["request_cpu"] for p in node["pods"])
            assert p0["assigned_cpu"] == pytest.approx(share * env.node_cpu[n])
        used = sum(p["request_mem"] for p in node["pods"])
        assert node["remain_mem"] == pytest.approx(node["total_mem"] - used)


def test_migration_cost_and_invalid_actions() -> None:
    rewards = {}
    for cost in (0.0, 0.05):
        env = _env(migration_cost=cost)
        env.reset(seed=2)
        a = int(np.flatnonzero(env.action_masks())[1])
        _, r, _, _, info = env.step(a)
        assert info["moved"] is not None
        rewards[cost] = (r, info["violations"])
    assert rewards[0.0][1] == rewards[0.05][1]
    assert rewards[0.0][0] - rewards[0.05][0] == pytest.approx(0.05)
    assert rewards[0.0][0] == pytest.approx(-info["violations"] / info["requests"])

    env = _env()
    env.reset(seed=2)
    before = env.pod_node
    mask = env.action_masks()
    bad = int(np.flatnonzero(~mask)[0])
    env.step(0)  # one window played: 23 of the default 24 left
    _, r, term, trunc, info = env.step(bad)
    # the contract's rule (rlsched.envs.base): nothing moves, the episode ends, and the
    # default penalty is the most the windows left could cost
    assert info["invalid_action"] and info["moved"] is None and term and not trunc
    np.testing.assert_array_equal(env.pod_node, before)
    assert r == pytest.approx(-23 * 1.05)
    assert info["metrics"]["invalid_actions"] == 1 and info["metrics"]["migrations"] == 0
    assert env.action_masks().all()
    with pytest.raises(RuntimeError):
        env.step(0)
    env = _env(invalid_action_penalty=2.0)
    env.reset(seed=2)
    assert env.step(bad)[1] == -2.0


def test_episode_metrics_and_truncation() -> None:
    env = _env(episode_length=5)
    env.reset(seed=0, options={"start_window": 46})
    total_v = total_r = 0
    for i in range(5):
        _, _, term, trunc, info = env.step(0)
        total_v += info["violations"]
        total_r += info["requests"]
        assert not term and trunc == (i == 4)
    assert info["window"] == (46 + 5) % 48  # wraps around the data
    m = info["metrics"]
    assert m["violations"] == total_v and m["requests"] == total_r
    assert m["violation_rate"] == pytest.approx(total_v / total_r)
    assert PodRebalancingEnv.leaderboard_metrics[0] == "violations"
    with pytest.raises(RuntimeError):
        env.step(0)


def test_datasets_modes_and_extra_nodes() -> None:
    env = PodRebalancingEnv(dataset=f"pod-requests:{FIXTURE}", num_nodes=4, mode="parallel")
    assert env.num_nodes == 4 and env.mode == "parallel"
    assert env.node_names[2:] == ("node3", "node4")
    obs, _ = env.reset(seed=0)
    assert obs["capacity"].shape == (4, 2)
    # the empty extra nodes take moves
    mask = env.action_masks()
    assert mask[env.encode_action(0, 0, 3)]
    ds = load_dataset(SMALL)
    assert PodRebalancingEnv(dataset=ds).num_pods == 12
    assert PodRebalancingEnv(dataset=ds.trace).num_pods == 12
    with pytest.raises(ValueError, match="pod-requests"):
        PodRebalancingEnv(dataset="synthetic:placement?workflows=2&tasks=3")
    with pytest.raises(ValueError, match="num_nodes"):
        PodRebalancingEnv(dataset=SMALL, num_nodes=2)
    with pytest.raises(ValueError, match="max_pods_per_node"):
        PodRebalancingEnv(dataset=SMALL, max_pods_per_node=2)


def test_render_ansi() -> None:
    env = _env(render_mode="ansi")
    env.reset(seed=0)
    env.step(int(np.flatnonzero(env.action_masks())[1]))
    text = env.render()
    assert isinstance(text, str) and "node1" in text and "moved" in text


def test_action_feature_rows_describe_their_move() -> None:
    from rlsched.envs.pod_rebalancing import ACTION_FEATURES

    env = PodRebalancingEnv(max_pods_per_node=30, action_features=True)
    gym_check_env(env, skip_render_check=True)
    obs, _ = env.reset(seed=4)
    for _ in range(3):  # a few windows and moves, then check every row against the state
        legal = np.flatnonzero(env.action_masks()[1:]) + 1
        obs, *_ = env.step(int(legal[0]))
    rows = obs["node_action"]
    col = {name: i for i, name in enumerate(ACTION_FEATURES)}
    N, K = env.num_nodes, env.max_pods_per_node
    assert rows.shape == (1 + N * K * N, len(ACTION_FEATURES))
    assert rows[0, col["is_noop"]] == 1 and not rows[1:, col["is_noop"]].any()
    rc = env._rc
    res_cpu = np.bincount(env.pod_node, weights=rc, minlength=N)
    checked = 0
    for a in range(1, 1 + N * K * N):
        src, slot, dst = env.decode_action(a)
        pod = int(env._pod_at[src * K + slot])
        r = rows[a]
        if pod < 0:
            assert not r.any()
            continue
        checked += 1
        assert r[col["pod_violations"]] == pytest.approx(obs["pod_violations"][src, slot])
        assert r[col["pod_cpu_request"]] == pytest.approx(obs["pod_request"][src, slot, 0])
        assert r[col["src_violation_rate"]] == pytest.approx(obs["violations"][src])
        assert r[col["dst_violation_rate"]] == pytest.approx(obs["violations"][dst])
        want = (res_cpu[dst] + rc[pod]) / env.node_cpu[dst]
        assert r[col["dst_cpu_reserved_after"]] == pytest.approx(want, rel=1e-5)
    assert checked == env.num_pods * N


def test_candidates_keep_greedy_migrations_first_moves() -> None:
    from rlsched.policies.pods import GreedyMigrationPolicy

    full, few = _env(), _env(candidates=3)
    greedy = GreedyMigrationPolicy()
    acted_on = 0
    for seed in (0, 1):
        obs, _ = full.reset(seed=seed)
        obs_few, _ = few.reset(seed=seed)
        for _ in range(full.episode_length):
            m_full, m_few = full.action_masks(), few.action_masks()
            assert m_few[0] and not (m_few & ~m_full).any()  # a subset, doing nothing kept
            assert m_few.sum() == 1 + min(3, m_full.sum() - 1)
            a = greedy.act(obs, m_full)
            assert greedy.act(obs_few, m_few) == a  # greedy's own move is among them
            acted_on += a != 0
            obs, *_ = full.step(a)
            obs_few, *_ = few.step(a)
    assert acted_on > 0  # the check saw greedy move pods, not only do nothing
    # a feasible move outside the candidates is an invalid action there
    full.reset(seed=0)
    few.reset(seed=0)
    outside = np.flatnonzero(full.action_masks() & ~few.action_masks())
    assert len(outside) and few.step(int(outside[0]))[4]["invalid_action"]


@pytest.mark.parametrize("bad", [0, -2, True])
def test_candidates_must_be_a_positive_count(bad) -> None:
    with pytest.raises(ValueError, match="candidates"):
        _env(candidates=bad)


def test_greedy_rank_is_greedy_migrations_order_of_preference() -> None:
    """``greedy_rank``: every valid action's place in greedy_migration's order (its own choice
    0, moves of pods with violations, then noop, then the rest), the valid count elsewhere; with
    ``candidates`` the same order among the moves kept."""
    from rlsched.policies.pods import GreedyMigrationPolicy

    greedy = GreedyMigrationPolicy()
    rng = np.random.default_rng(0)
    assert "node_greedy_rank" not in _env().observation_space.spaces
    for kw in ({}, {"candidates": 3}):
        env = _env(greedy_rank=True, **kw)
        obs, _ = env.reset(seed=1)
        moved = 0
        for _ in range(env.episode_length):
            mask, rank = env.action_masks(), obs["node_greedy_rank"]
            valid = np.flatnonzero(mask)
            assert sorted(rank[valid]) == list(range(len(valid)))  # a ranking of the valid ones
            assert (rank[~mask] == len(valid)).all()
            a = greedy.act(obs, mask)
            assert rank[a] == 0
            # moves of pods with violations rank above noop, the others below it
            v = (obs["pod_violations"] * obs["pod_mask"]).ravel()
            pod_of = (valid[1:] - 1) // env.num_nodes if valid[0] == 0 else None
            assert pod_of is not None
            above = v[pod_of] > 0
            assert (rank[valid[1:]][above] < rank[0]).all()
            assert (rank[valid[1:]][~above] > rank[0]).all()
            moved += a != 0
            obs, *_ = env.step(int(rng.choice(valid)) if rng.random() < 0.5 else a)
        assert moved > 0


def _day_excess(env: PodRebalancingEnv, node_of: np.ndarray, node: int) -> float:
    """A node's mean cpu excess over its allocatable on the data's day, pod by pod (serial
    mode: one request's size in each window the pod has requests), every 3rd of 288 windows."""
    wl = env.workload
    total = 0.0
    windows = range(0, wl.num_windows, 3)
    for w in windows:
        demand = sum(
            wl.demand_cpu[w, p]
            for p in range(env.num_pods)
            if node_of[p] == node and wl.requests[w, p] > 0
        )
        total += max(demand / env.node_cpu[node] - 1.0, 0.0)
    return total / len(windows)


def test_history_features_are_each_moves_day_excess_before_and_after() -> None:
    from rlsched.envs.pod_rebalancing import ACTION_FEATURES, HISTORY_FEATURES
    from rlsched.policies.pods import GreedyMigrationPolicy

    kw = {"max_pods_per_node": 30, "action_features": True, "candidates": 8}
    plain, hist = PodRebalancingEnv(**kw), PodRebalancingEnv(**kw, history_features=True)
    assert hist.observation_space["node_action"].shape[1] == 25
    gym_check_env(hist, skip_render_check=True)
    greedy = GreedyMigrationPolicy()
    obs_p, _ = plain.reset(seed=3)
    obs_h, _ = hist.reset(seed=3)
    for _ in range(4):  # the features draw nothing: greedy plays the same episode in both
        a = greedy.act(obs_h, hist.action_masks())
        assert a == greedy.act(obs_p, plain.action_masks())
        obs_p, r_p, *_ = plain.step(a)
        obs_h, r_h, *_ = hist.step(a)
        assert r_p == r_h
    F = len(ACTION_FEATURES)
    np.testing.assert_array_equal(obs_h["node_action"][:, :F], obs_p["node_action"])
    col = {n: F + i for i, n in enumerate(HISTORY_FEATURES)}
    rows = obs_h["node_action"]
    assert not rows[0, F:].any()  # doing nothing changes nothing
    checked = 0
    K = hist.max_pods_per_node
    for a in np.flatnonzero(hist.action_masks()[1:]) + 1:
        src, slot, dst = hist.decode_action(int(a))
        pod = int(hist._pod_at[src * K + slot])
        after = hist.pod_node.copy()
        after[pod] = dst
        want = {
            "src_day_excess": _day_excess(hist, hist.pod_node, src),
            "src_day_excess_after": _day_excess(hist, after, src),
            "dst_day_excess": _day_excess(hist, hist.pod_node, dst),
            "dst_day_excess_after": _day_excess(hist, after, dst),
        }
        for name, value in want.items():
            assert rows[a, col[name]] == pytest.approx(value, rel=1e-4, abs=1e-6), name
        change = sum(want[n] for n in want if n.endswith("after")) - want["src_day_excess"]
        change -= want["dst_day_excess"]
        assert rows[a, col["day_excess_change"]] == pytest.approx(change, rel=1e-4, abs=1e-6)
        checked += 1
    assert checked >= 1
    assert (rows[1:, col["day_excess_change"]] != 0).any()  # the check saw moves that matter


def test_history_features_need_action_features() -> None:
    with pytest.raises(ValueError, match="history_features=True needs action_features"):
        _env(history_features=True)


def test_history_rows_follow_every_move_and_restore() -> None:
    """The history columns are kept per placement (computed when a pod moves): after moves and
    restores they are what the placement gives, computed afresh."""
    from rlsched.envs.pod_rebalancing import ACTION_FEATURES
    from rlsched.policies.pods import GreedyMigrationPolicy

    env = PodRebalancingEnv(
        max_pods_per_node=30, action_features=True, candidates=8, history_features=True
    )
    greedy = GreedyMigrationPolicy()
    obs, _ = env.reset(seed=5)
    snap = env.snapshot()
    F, K = len(ACTION_FEATURES), env.max_pods_per_node

    def fresh(e: PodRebalancingEnv) -> np.ndarray:
        slots = np.flatnonzero(e._pod_at >= 0)
        return e._history_rows(e._pod_at[slots], slots // K)

    first, moves = obs, 0
    for _ in range(12):
        a = greedy.act(obs, env.action_masks())
        moves += a != 0
        obs, *_ = env.step(a)
        np.testing.assert_array_equal(env._history_cols, fresh(env))
    assert moves >= 1
    env.restore(snap)
    np.testing.assert_array_equal(env._history_cols, fresh(env))
    np.testing.assert_array_equal(env._observation()["node_action"][:, F:],
                                  first["node_action"][:, F:])  # fmt: skip
