"""VMPlacement-v0: trace replay against a plain-Python reference, masks against brute force,
double-NUMA splits, scenarios, rewards, episode ends, checkers and determinism."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env as gym_check_env
from hypothesis import given
from hypothesis import strategies as st
from stable_baselines3.common.env_checker import check_env as sb3_check_env

import rlsched  # noqa: F401
from rlsched.core.vm import VMRequests
from rlsched.data.synthetic_vm import generate_vm_requests
from rlsched.envs.vm_placement import VMPlacementEnv

SMALL = "synthetic:vm?creations=3000&days=3&seed=0"


def random_trace(seed: int, n: int = 400) -> VMRequests:
    """Creations and deletions over a small pool of ids: ids are reused after deletion, some
    deletions name ids that are not live, demands include fractions."""
    rng = np.random.default_rng(seed)
    live: dict[int, tuple[float, float]] = {}
    rows = []
    for t in range(n):
        if live and (rng.random() < 0.45 or len(live) == 60):
            if rng.random() < 0.1:
                rows.append((int(rng.integers(1000, 1010)), 1, 1, t, 1))  # never created
            else:
                v = int(rng.choice(list(live)))
                rows.append((v, *live.pop(v), t, 1))
        else:
            free = [v for v in range(60) if v not in live]
            v = int(rng.choice(free))
            c = float(rng.choice([0.5, 1, 2, 4, 8, 12]))
            m = float(rng.choice([1, 1.5, 2, 4, 8, 16, 24]))
            live[v] = (c, m)
            rows.append((v, c, m, t, 0))
    return VMRequests.from_rows(rows).validate()


def reference_fits(rem: np.ndarray, cpu: float, mem: float, double: bool) -> np.ndarray:
    """Brute force: ``rem`` (N, 2, 2) remaining (cpu, mem); mask of the 2N actions."""
    n = rem.shape[0]
    mask = np.zeros(2 * n, dtype=bool)
    for s in range(n):
        for k in range(2):
            if double:
                ok = all(rem[s, q, 0] >= cpu / 2 and rem[s, q, 1] >= mem / 2 for q in range(2))
            else:
                ok = rem[s, k, 0] >= cpu and rem[s, k, 1] >= mem
            mask[2 * s + k] = ok
    return mask


def replay_and_check(env: VMPlacementEnv, seed: int, pick: str = "random") -> int:
    """Play one episode choosing valid actions; check each state, mask and the episode end
    against a plain-Python replay of the trace. Returns the number of placements."""
    tr = env.trace
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    N, cc, cm = env.num_nodes, env.numa_cpu, env.numa_mem
    rem = np.empty((N, 2, 2))
    rem[..., 0], rem[..., 1] = cc, cm
    where: dict[int, tuple[int, int, float, float, bool]] = {}  # live vmid -> placement
    i = info["start"]
    while tr.type[i] == 1:  # leading deletions are skipped
        i += 1
    placed = 0
    while True:
        assert tr.type[i] == 0
        c, m = float(tr.cpu[i]), float(tr.mem[i])
        dbl = c >= env.double_threshold
        req = env.current_request
        assert req is not None and req["event"] == i and req["is_double"] == dbl
        np.testing.assert_array_equal(obs["obs"], rem.astype(np.float32))
        mask = env.action_masks()
        np.testing.assert_array_equal(mask, reference_fits(rem, c, m, dbl))
        valid = np.flatnonzero(mask)
        a = int(rng.choice(valid)) if pick == "random" else int(valid[0])
        obs, reward, term, trunc, info = env.step(a)
        assert reward == 1.0 and not trunc
        placed += 1
        s, k = a // 2, a % 2
        if dbl:
            rem[s, :, 0] -= c / 2
            rem[s, :, 1] -= m / 2
        else:
            rem[s, k] -= (c, m)
        where[int(tr.vmid[i])] = (s, k, c, m, dbl)
        i += 1
        while i < len(tr) and tr.type[i] == 1:
            v = int(tr.vmid[i])
            if env.release and v in where:  # ids not placed in this episode are ignored
                s2, k2, c2, m2, d2 = where.pop(v)
                if d2:
                    rem[s2, :, 0] += c2 / 2
                    rem[s2, :, 1] += m2 / 2
                else:
                    rem[s2, k2] += (c2, m2)
            i += 1
        np.testing.assert_array_equal(obs["obs"], rem.astype(np.float32))
        if i >= len(tr):
            assert term and env.current_request is None
            break
        fits = reference_fits(
            rem, float(tr.cpu[i]), float(tr.mem[i]), tr.cpu[i] >= env.double_threshold
        )
        if not fits.any():
            assert term
            break
        assert not term
    m = info["metrics"]
    assert m["placed"] == placed and m["invalid_actions"] == 0
    alloc = 2 * N * cc - rem[..., 0].sum()
    assert m["cpu_util"] == pytest.approx(alloc / (2 * N * cc))
    assert m["alive"] == len(where) if env.release else m["alive"] == placed
    return placed


@given(
    seed=st.integers(0, 10_000),
    n=st.sampled_from([1, 2, 3, 7]),
    scenario=st.sampled_from(["fading", "recovering"]),
)
def test_replay_matches_reference_on_random_traces(seed: int, n: int, scenario: str) -> None:
    env = VMPlacementEnv(
        num_nodes=n,
        scenario=scenario,
        dataset=random_trace(seed),
        numa_cpu=16,
        numa_mem=32,
        double_threshold=8,
    )
    replay_and_check(env, seed)


@pytest.mark.parametrize("scenario", ["fading", "recovering"])
def test_replay_matches_reference_on_synthetic_trace(scenario: str) -> None:
    env = VMPlacementEnv(num_nodes=4, scenario=scenario, dataset=SMALL)
    for seed in range(3):
        replay_and_check(env, seed, pick="first")
        replay_and_check(env, seed)


def hand_trace() -> VMRequests:
    return VMRequests.from_rows(
        [
            (1, 2, 2, 0, 0),  # 0: before the episode start below
            (9, 1, 1, 1, 1),  # 1: leading deletion of an unknown id
            (1, 2, 2, 2, 1),  # 2: deletes vm 1, created before the episode
            (2, 2, 4, 3, 0),  # 3: first request of an episode starting at 1
            (3, 4, 4, 4, 0),  # 4: double (threshold 4): 2 cpu, 2 GB on each NUMA
            (2, 2, 4, 5, 1),  # 5: frees vm 2
            (4, 1, 1, 6, 0),  # 6
        ]
    )


def test_hand_trace_recovering() -> None:
    env = VMPlacementEnv(
        num_nodes=1,
        scenario="recovering",
        dataset=hand_trace(),
        numa_cpu=4,
        numa_mem=8,
        double_threshold=4,
        start=1,
    )
    obs, info = env.reset(seed=0)
    assert info["start"] == 1 and env.current_request["vmid"] == 2
    np.testing.assert_array_equal(obs["obs"], [[[4, 8], [4, 8]]])
    obs, r, term, _, _ = env.step(1)  # vm 2 on NUMA 1
    np.testing.assert_array_equal(obs["obs"], [[[4, 8], [2, 4]]])
    assert env.current_request["is_double"] and not term
    np.testing.assert_array_equal(env.action_masks(), [True, True])
    np.testing.assert_array_equal(obs["feat"], [[[2, 2], [2, 2]], [[2, 2], [2, 2]]])
    obs, r, term, _, _ = env.step(1)  # double: the NUMA bit is ignored, half on each NUMA
    # vm 2 is deleted before the next request: NUMA 1 gets its 2 cpu / 4 GB back
    np.testing.assert_array_equal(obs["obs"], [[[2, 6], [2, 6]]])
    assert env.placements() == {3: (0, -1)}
    np.testing.assert_array_equal(obs["feat"], [[[1, 1], [0, 0]], [[0, 0], [1, 1]]])
    obs, r, term, _, info = env.step(0)
    assert term and r == 1.0 and env.current_request is None  # the trace's end
    assert info["metrics"]["placed"] == 3 and info["metrics"]["alive"] == 2
    np.testing.assert_array_equal(obs["request"], [0, 0, 0])
    np.testing.assert_array_equal(env.action_masks(), [True, True])  # the contract, after the end
    with pytest.raises(RuntimeError):
        env.step(0)


def test_hand_trace_fading_ignores_deletions() -> None:
    env = VMPlacementEnv(
        scenario="fading",
        num_nodes=1, dataset=hand_trace(), numa_cpu=4, numa_mem=8, double_threshold=4
    )
    obs, _ = env.reset(options={"start": 3})
    env.step(1)
    obs, *_ = env.step(0)
    np.testing.assert_array_equal(obs["obs"], [[[2, 6], [0, 2]]])  # vm 2 still there


def test_episode_ends_when_nothing_fits() -> None:
    tr = VMRequests.from_rows([(i, 3, 1, i, 0) for i in range(5)])
    env = VMPlacementEnv(scenario="fading", num_nodes=1, dataset=tr, numa_cpu=4, numa_mem=8)
    env.reset(seed=0, options={"start": 0})
    assert not env.step(0)[2]
    _, r, term, trunc, info = env.step(1)
    assert term and not trunc and r == 1.0 and info["metrics"]["placed"] == 2
    assert info["metrics"]["cpu_util"] == pytest.approx(6 / 8)


def test_oversized_requests_are_dropped() -> None:
    tr = VMRequests.from_rows([(0, 50, 1, 0, 0), (1, 1, 1, 1, 0), (0, 50, 1, 2, 1)])
    env = VMPlacementEnv(scenario="fading", num_nodes=2, dataset=tr, double_threshold=1000)
    assert env.oversized == 1
    env.reset(seed=0, options={"start": 0})
    assert env.current_request["vmid"] == 1


def test_double_split_and_cpu_or_mem() -> None:
    tr = VMRequests.from_rows([(0, 32, 64, 0, 0), (1, 2, 80, 1, 0), (2, 2, 10, 2, 0)])
    env = VMPlacementEnv(scenario="fading", num_nodes=2, dataset=tr, start=0)
    obs, _ = env.reset()
    assert env.double_threshold == 32 and env.current_request["is_double"]
    np.testing.assert_array_equal(obs["request"], np.float32([32 / 40, 64 / 90, 1]))
    obs, *_ = env.step(3)  # server 1 (NUMA bit ignored)
    np.testing.assert_array_equal(obs["obs"][1], [[24, 58], [24, 58]])
    assert not env.current_request["is_double"]  # 80 GB on one NUMA by cpu alone
    env2 = VMPlacementEnv(
        scenario="fading", num_nodes=2, dataset=tr, start=1, double_by="cpu_or_mem"
    )
    assert env2.double_mem_threshold == pytest.approx(32 * 90 / 40)
    env2.reset()
    assert env2.current_request["is_double"]  # 80 GB >= 72 GB
    env2.step(0)
    assert not env2.current_request["is_double"]


def test_node_keys_are_consistent() -> None:
    env = VMPlacementEnv(num_nodes=6, scenario="recovering", dataset=SMALL)
    obs, _ = env.reset(seed=1)
    rng = np.random.default_rng(1)
    cap = np.float32([env.numa_cpu, env.numa_mem])
    for _ in range(60):
        raw = obs["obs"].reshape(-1, 2)
        req = env.current_request
        need = np.float32([req["cpu"], req["mem"]]) / (2 if req["is_double"] else 1)
        np.testing.assert_allclose(obs["node_free"], raw / cap, rtol=1e-6)
        np.testing.assert_array_equal(obs["node_sibling"], obs["node_free"][np.arange(12) ^ 1])
        np.testing.assert_allclose(obs["node_after"], (raw - need) / cap, rtol=1e-5, atol=1e-7)
        np.testing.assert_array_equal(
            (obs["node_after"] >= 0).all(axis=1), raw_fit := (raw >= need).all(axis=1)
        )
        if not req["is_double"]:
            np.testing.assert_array_equal(env.action_masks(), raw_fit)
        assert obs["request"][2] == req["is_double"]
        for k, v in obs.items():
            assert env.observation_space[k].contains(v), k
        kept = {k: v.copy() for k, v in obs.items()}
        old = obs
        obs, _, term, trunc, _ = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        for k in kept:  # returned arrays are the caller's: later steps do not touch them
            np.testing.assert_array_equal(old[k], kept[k])
        if term or trunc:
            obs, _ = env.reset()


def test_fading_vs_recovering() -> None:
    out = {}
    for scenario in ("fading", "recovering"):
        assert VMPlacementEnv(scenario=scenario, dataset=SMALL).double_threshold == (
            32 if scenario == "fading" else 10
        )
        # the same threshold in both, so both see the same requests
        env = VMPlacementEnv(num_nodes=3, scenario=scenario, dataset=SMALL, double_threshold=16)
        placed = []
        for seed in range(4):
            obs, _ = env.reset(seed=seed)
            prev, done = obs["obs"], False
            while not done:
                obs, _, term, trunc, info = env.step(int(env.action_masks().argmax()))
                done = term or trunc
                if scenario == "fading":  # nothing is ever given back
                    assert (obs["obs"] <= prev).all()
                prev = obs["obs"]
            placed.append(info["metrics"]["placed"])
        out[scenario] = placed
    assert all(r >= f for f, r in zip(out["fading"], out["recovering"], strict=True))
    assert sum(out["recovering"]) > sum(out["fading"])


def test_invalid_action_ends_episode() -> None:
    env = VMPlacementEnv(scenario="fading", num_nodes=2, dataset=SMALL)
    env.reset(seed=0)
    env.step(int(env.action_masks().argmax()))
    for bad in (-1, 4):
        env.reset(seed=0)
        _, r, term, trunc, info = env.step(bad)
        assert (r, term, trunc, info["invalid_action"]) == (0.0, True, False, True)
        assert info["metrics"]["invalid_actions"] == 1
    tr = VMRequests.from_rows([(0, 30, 1, 0, 0), (1, 30, 1, 1, 0)])
    env = VMPlacementEnv(scenario="fading", num_nodes=1, dataset=tr, start=0)
    env.reset()
    env.step(0)
    _, r, term, _, info = env.step(0)  # NUMA 0 is full
    assert r == 0.0 and term and info["invalid_action"] and info["metrics"]["placed"] == 1


def test_rewards_and_truncation() -> None:
    env = VMPlacementEnv(num_nodes=3, dataset=SMALL, reward="cpu", episode_length=5)
    env.reset(seed=2)
    rewards, trunc = [], False
    while not trunc:
        cpu = env.current_request["cpu"]
        _, r, term, trunc, info = env.step(int(env.action_masks().argmax()))
        assert r == pytest.approx(cpu / 40) and not term
        rewards.append(r)
    assert len(rewards) == 5 and info["metrics"]["placed"] == 5
    env = VMPlacementEnv(num_nodes=3, dataset=SMALL, reward="fragmentation", frag_cores=16)
    env.reset(seed=2)
    for _ in range(30):
        before = env.fragmentation()
        a = int(env.action_masks().argmax())
        c, dbl = env.current_request["cpu"], env.current_request["is_double"]
        after_state = env._S[0].copy()
        after_state[[a & ~1, a | 1] if dbl else [a]] -= c / 2 if dbl else c
        free = after_state.sum()
        f_after = after_state[after_state < 16].sum() / free if free > 0 else 0.0
        _, r, term, _, _ = env.step(a)
        assert r == pytest.approx(1.0 - (f_after - before))
        if term:
            break


def test_start_range_and_options() -> None:
    env = VMPlacementEnv(num_nodes=2, dataset=SMALL, start_range=(0.5, 0.75))
    n = len(env.trace)
    starts = [env.reset(seed=s)[1]["start"] for s in range(30)]
    assert all(0.5 * n <= s < 0.75 * n for s in starts) and len(set(starts)) > 20
    assert env.reset(seed=0, options={"start": 7})[1]["start"] == 7
    with pytest.raises(ValueError):
        env.reset(options={"start": n})
    with pytest.raises(ValueError):
        VMPlacementEnv(dataset=SMALL, start_range=(0.5, 0.5))
    with pytest.raises(ValueError, match="scenario"):
        VMPlacementEnv(dataset=SMALL, scenario="expand")
    with pytest.raises(ValueError, match="VM request trace"):
        VMPlacementEnv(dataset="synthetic:placement?workflows=2")


@pytest.mark.parametrize(
    "kwargs",
    [
        {"scenario": "recovering", "num_nodes": 3},
        {"double_by": "cpu_or_mem", "reward": "fragmentation", "num_nodes": 2},
        {"reward": "cpu", "episode_length": 10, "render_mode": "ansi"},
    ],
)
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_checkers(kwargs) -> None:
    env = VMPlacementEnv(dataset=SMALL, **kwargs)
    gym_check_env(env, skip_render_check=False)
    sb3_check_env(VMPlacementEnv(dataset=SMALL, **kwargs), warn=True)


def test_deterministic_under_seed() -> None:
    def play(seed: int) -> list:
        env = VMPlacementEnv(num_nodes=4, scenario="recovering", dataset=SMALL)
        obs, _ = env.reset(seed=seed)
        rng, out = np.random.default_rng(0), []
        for _ in range(300):
            a = int(rng.choice(np.flatnonzero(env.action_masks())))
            obs, r, term, trunc, _ = env.step(a)
            out.append((a, r, term, obs["obs"].tobytes(), obs["node_after"].tobytes()))
            if term or trunc:
                obs, _ = env.reset()
        return out

    assert play(3) == play(3) and play(3) != play(4)


def test_gym_make_100_servers_and_render() -> None:
    env = gym.make("rlsched/VMPlacement-v0", num_nodes=100, render_mode="ansi")
    obs, _ = env.reset(seed=0)
    assert env.action_space.n == 200
    assert obs["obs"].shape == (100, 2, 2) and obs["node_after"].shape == (200, 2)
    assert obs["feat"].shape == (2, 2, 2) and obs["request"].shape == (3,)
    assert env.unwrapped.dataset_name == "synthetic:vm?creations=125430&days=30&seed=0"
    obs, *_ = env.step(int(env.unwrapped.action_masks().argmax()))
    text = env.render()
    assert text.count("\n") == 101 and "next: vm" in text
    assert env.unwrapped.leaderboard_metrics[0] == "placed"


def test_generated_trace_object_as_dataset() -> None:
    env = VMPlacementEnv(num_nodes=2, dataset=generate_vm_requests(200, 1, seed=0))
    assert env.dataset_name == "vm-requests"
    assert replay_and_check(env, 0) > 0


def test_grid_obs_false_leaves_only_per_numa_keys_of_any_size() -> None:
    """Without VMAgent's fixed-size grid the other keys are unchanged and only `feat` and
    `request` are not per NUMA, so the observation layout does not depend on the server count."""
    full = VMPlacementEnv(num_nodes=6, scenario="recovering", dataset=SMALL)
    lean = VMPlacementEnv(num_nodes=6, scenario="recovering", dataset=SMALL, grid_obs=False)
    assert set(full.observation_space.spaces) - set(lean.observation_space.spaces) == {"obs"}
    a, _ = full.reset(seed=3)
    b, _ = lean.reset(seed=3)
    rng = np.random.default_rng(3)
    for _ in range(40):
        assert "obs" not in b and lean.observation_space.contains(b)
        for k, v in b.items():
            np.testing.assert_array_equal(v, a[k])
        act = int(rng.choice(np.flatnonzero(full.action_masks())))
        a, ra, ta, *_ = full.step(act)
        b, rb, tb, *_ = lean.step(act)
        assert (ra, ta) == (rb, tb)
        if ta:
            break
    big = VMPlacementEnv(num_nodes=50, scenario="recovering", dataset=SMALL, grid_obs=False)
    for k, s in lean.observation_space.spaces.items():
        t = big.observation_space.spaces[k]
        assert (s.shape[1:] == t.shape[1:]) if k.startswith("node_") else s.shape == t.shape
