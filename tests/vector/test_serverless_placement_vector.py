"""The batched ServerlessPlacement-v0 equals N single envs step for step under the same seeds.

Equality is exact (``==`` on every float), not approximate: the batched core does the single
env's IEEE double operations in the same order (see :mod:`rlsched.vector.serverless_placement`),
and float32 observation values are the same float64 values rounded once. An approximate check
would hide an order-of-operations slip that a long run could amplify.
"""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode
from hypothesis import given
from hypothesis import strategies as st

import rlsched  # noqa: F401
from rlsched.core.workload import Task, Workflow
from rlsched.envs.serverless_placement import ServerlessPlacementEnv
from rlsched.vector import ServerlessPlacementBatch, ServerlessPlacementVectorEnv, make_vector_env


def _workflows() -> list[Workflow]:
    """Chains and fans of small tasks plus one task larger than every node (unplaceable)."""
    out = []
    for k in range(6):
        tasks = [
            Task(
                f"a{i}",
                f"f{i % 3}",
                5.0 + 3 * i + k,
                parents=(i - 1,) if i else (),
                cores=1.0 + (i % 3),
                memory_gb=0.5 + i % 4,
                read_bytes=2e8 * i,
            )
            for i in range(8)
        ]
        tasks += [
            Task(f"b{i}", "g", 7.0, parents=(0,), cores=2.0, memory_gb=2.0, write_bytes=1e8)
            for i in range(5)
        ]
        if k == 2:
            tasks.append(Task("huge", "h", 3.0, cores=64.0, memory_gb=1.0))
        out.append(Workflow(f"wf{k}", tasks))
    return out


CONFIGS: dict[str, dict[str, Any]] = {
    "default": {},
    "slo-cost-queueing": {"reward": "slo_cost", "num_nodes": 5, "load": 2.5, "beta": 0.3},
    "montage-random-cluster": {
        "dataset": "wfinstances:montage-58",
        "episode_length": 60,
        "randomize_cluster": True,
        "num_nodes": 7,
    },
    "workflows-unplaceable-end": {
        "dataset": _workflows(),
        "num_nodes": 3,
        "load": 3.0,
        "on_exhausted": "end",
        "episode_length": 90,
        "invalid_action_penalty": 5.0,
        "num_functions": 3,
    },
}


def _row(obs: dict[str, np.ndarray], b: int) -> dict[str, np.ndarray]:
    return {k: v[b] for k, v in obs.items()}


def _assert_obs_equal(got: dict[str, np.ndarray], want: dict[str, np.ndarray], where: str) -> None:
    assert set(got) == set(want), where
    for k, w in want.items():
        g = got[k]
        assert g.dtype == w.dtype and g.shape == w.shape, f"{where}: {k}"
        assert np.array_equal(g, w), f"{where}: {k}\n{g}\n!=\n{w}"


def _assert_metrics_equal(got: dict[str, float], want: dict[str, float], where: str) -> None:
    assert set(got) == set(want), where
    for k, w in want.items():
        g = got[k]
        assert g == w or (math.isnan(g) and math.isnan(w)), f"{where}: {k} {g} != {w}"


def _play(kwargs: dict[str, Any], n_envs: int, seed: int, steps: int) -> dict[str, int]:
    """Step the vector env and ``n_envs`` single envs with the same random valid actions (and
    the odd invalid one); compare everything. Returns what was exercised."""
    venv = ServerlessPlacementVectorEnv(n_envs, **kwargs)
    envs = [ServerlessPlacementEnv(**kwargs) for _ in range(n_envs)]
    obs, _ = venv.reset(seed=seed)
    singles = [env.reset(seed=seed + b)[0] for b, env in enumerate(envs)]
    for b in range(n_envs):
        _assert_obs_equal(_row(obs, b), singles[b], f"reset env {b}")
    rng = np.random.default_rng(seed)
    seen = {"episodes": 0, "invalid": 0, "unplaceable": 0, "waits": 0}
    for t in range(steps):
        masks = venv.action_masks()
        assert masks.dtype == bool and masks.shape == (n_envs, venv.single_action_space.n)
        actions = (rng.random(masks.shape) * masks).argmax(axis=1)
        if rng.random() < 0.02:  # now and then an action that may be invalid
            actions[rng.integers(n_envs)] = rng.integers(-1, masks.shape[1] + 1)
        obs, rewards, terms, truncs, infos = venv.step(actions)
        for b, env in enumerate(envs):
            np.testing.assert_array_equal(masks[b], env.action_masks(), f"mask t={t} env {b}")
            # the clock passed the instance's arrival: it waited for a release to fit
            seen["waits"] += env._now > env._arrival_l[env._i]
            o, r, term, trunc, info = env.step(int(actions[b]))
            where = f"t={t} env {b}"
            assert rewards[b] == r, f"{where}: reward {rewards[b]} != {r}"
            assert bool(terms[b]) == term and bool(truncs[b]) == trunc, where
            if not info.get("invalid_action"):
                assert infos["_rfrt"][b]
                for key in (
                    "node",
                    "rfrt",
                    "response_time",
                    "cold_start",
                    "cost_delta",
                    "slo_violated",
                    "time",
                ):
                    assert infos[key][b] == info[key], f"{where}: {key}"
            if term or trunc:
                seen["episodes"] += 1
                _assert_obs_equal(infos["final_obs"][b], o, f"final obs {where}")
                _assert_metrics_equal(infos["final_info"]["metrics"][b], info["metrics"], where)
                seen["invalid"] += int(info["metrics"]["invalid_actions"])
                seen["unplaceable"] += int(info["metrics"]["unplaceable"])
                o, _ = env.reset()
            _assert_obs_equal(_row(obs, b), o, where)
    return seen


@pytest.mark.parametrize("name", list(CONFIGS))
@pytest.mark.parametrize("seed", [0, 7])
def test_vector_env_equals_single_envs_step_for_step(name: str, seed: int) -> None:
    seen = _play(CONFIGS[name], n_envs=4, seed=seed, steps=500)
    assert seen["episodes"] >= 4  # episode ends and same-step autoresets are covered
    if name == "workflows-unplaceable-end":
        assert seen["unplaceable"] > 0
    if name == "slo-cost-queueing":
        assert seen["waits"] > 0


instance = st.fixed_dictionaries(
    {
        "cpu_request": st.floats(0.1, 8.0),
        "mem_request": st.floats(0.1, 16.0),
        "io_network": st.floats(0.0, 500.0),
        "io_disk": st.floats(0.0, 500.0),
        "requests": st.integers(1, 50),
        "exec_time": st.floats(0.01, 300.0),
        "type": st.integers(0, 7),
        "arrival_time": st.floats(0.0, 600.0),
    }
)


@given(
    workload=st.lists(instance, min_size=1, max_size=40),
    nodes=st.integers(1, 8),
    seed=st.integers(0, 10_000),
    reward=st.sampled_from(["latency_cost", "slo_cost"]),
)
def test_random_workloads_are_equal(workload, nodes, seed, reward) -> None:
    # instance lists replay every episode; odd sizes queue, wait and skip unplaceable ones
    kw = {
        "num_nodes": nodes,
        "dataset": workload,
        "episode_length": len(workload),
        "on_exhausted": "end",
        "cluster_seed": seed % 7,
        "reward": reward,
    }
    _play(kw, n_envs=3, seed=seed, steps=2 * len(workload) + 5)


def test_instance_lists_with_poisson_arrivals_on_random_clusters_are_equal() -> None:
    # no arrival times: Poisson at `load` of each sub-env's own (redrawn) cluster
    rng = np.random.default_rng(2)
    workload = [
        {"cpu_request": float(rng.uniform(0.25, 4)), "mem_request": 1.0, "exec_time": 20.0}
        for _ in range(30)
    ]
    kw = {"num_nodes": 4, "dataset": workload, "episode_length": 30, "randomize_cluster": True}
    _play(kw, n_envs=3, seed=4, steps=120)


def test_negative_amounts_release_one_event_per_node_per_round() -> None:
    # an injected list may hold negative usages; then clamping once is not clamping each time
    rng = np.random.default_rng(5)
    workload = [
        {
            "cpu_request": float(rng.choice([1.0, 2.0])),
            "mem_request": 1.0,
            "io_network": float(rng.choice([-50.0, 30.0, 0.0])),
            "io_disk": float(rng.uniform(-10.0, 500.0)),
            "exec_time": float(rng.choice([1.0, 2.0])),
            "type": int(rng.integers(0, 3)),
            "arrival_time": float(k // 3),
        }
        for k in range(40)
    ]
    kw = {"num_nodes": 2, "dataset": workload, "episode_length": 40, "on_exhausted": "end"}
    _play(kw, n_envs=3, seed=3, steps=150)
    core = ServerlessPlacementBatch(2, **kw)
    core.reset([0, 1])
    assert not core._nonneg


def test_invalid_actions_end_episodes_identically() -> None:
    seen = {"invalid": 0}
    for seed in range(3):
        seen["invalid"] += _play(CONFIGS["default"], n_envs=3, seed=seed, steps=300)["invalid"]
    assert seen["invalid"] > 0


def test_gymnasium_vector_api() -> None:
    venv = make_vector_env("rlsched/ServerlessPlacement-v0", 3, num_nodes=6, episode_length=20)
    assert isinstance(venv, gym.vector.VectorEnv)
    assert venv.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    assert venv.single_observation_space == ServerlessPlacementEnv(num_nodes=6).observation_space
    assert venv.action_space.shape == (3,)
    obs, info = venv.reset(seed=5)
    assert venv.observation_space.contains(obs)
    assert obs["node_capacity"].shape == (3, 6, 2) and info["_time"].all()
    # reset(seed=int) seeds s, s + 1, ...; a list seeds each env
    obs2, _ = venv.reset(seed=[5, 6, 7])
    _assert_obs_equal(obs2, obs, "seed list")
    # reset_mask resets only the chosen envs
    venv.step(venv.action_masks().argmax(axis=1))
    before = venv.core.observe()
    obs3, _ = venv.reset(seed=[None, 6, None], options={"reset_mask": np.array([0, 1, 0], bool)})
    _assert_obs_equal(_row(obs3, 1), _row(obs, 1), "reset_mask row 1")
    _assert_obs_equal(_row(obs3, 0), _row(before, 0), "reset_mask row 0 untouched")
    ended = 0
    for _ in range(60):
        obs, rew, term, trunc, infos = venv.step(venv.action_masks().argmax(axis=1))
        assert venv.observation_space.contains(obs) and rew.shape == (3,)
        assert not trunc.any()
        if term.any():
            ended += int(term.sum())
            assert infos["_final_obs"].tolist() == term.tolist()
            b = int(np.flatnonzero(term)[0])
            assert venv.single_observation_space.contains(infos["final_obs"][b])
            assert infos["final_info"]["metrics"][b]["placed"] > 0
    assert ended >= 3
    assert len(venv.call("metrics")) == 3 and venv.get_attr("num_nodes") == (6, 6, 6)
    venv.close()


def test_generators_and_unknown_ids_are_refused() -> None:
    with pytest.raises(ValueError, match="generator"):
        ServerlessPlacementBatch(2, dataset=iter([{"cpu_request": 1.0, "mem_request": 1.0}]))
    with pytest.raises(KeyError, match="batched"):
        make_vector_env("rlsched/KubeScheduling-v0", 2)


def test_stepping_a_finished_sub_env_is_an_error() -> None:
    core = ServerlessPlacementBatch(2, episode_length=3)
    core.reset([0, 1], [0, 1])
    for _ in range(3):
        core.step(core.action_masks().argmax(axis=1))
    assert core.done.all()
    with pytest.raises(RuntimeError, match="finished"):
        core.step(np.zeros(2, np.int64))
