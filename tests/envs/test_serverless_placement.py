"""ServerlessPlacement-v0: spaces, the time model, cost, cold starts, injection, rendering."""

import itertools

import gymnasium as gym
import numpy as np
import pytest

import rlsched  # noqa: F401
from rlsched.core.workload import Task, Workflow
from rlsched.envs.serverless_placement import ServerlessPlacementEnv

NOTE_KEYS = {
    "node_utilization": (10, 4),
    "node_capacity": (10, 2),
    "node_price": (10,),
    "node_deployed": (10, 2),
    "node_active": (10,),
    "current_function_request": (2,),
    "current_function_io": (2,),
    "current_function_requests": (1,),
    "current_function_rart": (1,),
    "cluster_function_requests": (5,),
}


def chain(n: int, runtime: float = 10.0, kind: str = "f") -> Workflow:
    return Workflow(
        "chain",
        [
            Task(
                f"t{i}", kind, runtime, parents=(i - 1,) if i else (), cpu_usage=1.0, memory_gb=1.0
            )
            for i in range(n)
        ],
    )


def records(n: int, **over):
    base = {
        "cpu_request": 1.0,
        "mem_request": 1.0,
        "io_network": 0.0,
        "io_disk": 0.0,
        "requests": 1,
        "exec_time": 10.0,
        "type": 0,
    }
    for k in range(n):
        yield {**base, "arrival_time": float(k), **over}


def test_observation_has_every_key_of_the_design_note() -> None:
    env = gym.make("rlsched/ServerlessPlacement-v0")
    obs, _ = env.reset(seed=0)
    for key, shape in NOTE_KEYS.items():
        assert obs[key].shape == shape, key
    assert {"current_function_exec", "node_warm", "node_billed_time"} <= set(obs)
    assert env.observation_space.contains(obs)


def test_make_with_many_nodes_after_import() -> None:
    env = gym.make("rlsched/ServerlessPlacement-v0", num_nodes=100)
    obs, _ = env.reset(seed=1)
    assert env.action_space.n == 100
    assert obs["node_capacity"].shape == (100, 2)
    assert env.unwrapped.action_masks().shape == (100,)


def test_mask_is_active_and_enough_cpu_and_memory() -> None:
    env = ServerlessPlacementEnv(num_nodes=4, dataset=list(records(50, exec_time=1e4)))
    env.cluster.active[1] = False
    obs, _ = env.reset(seed=0)
    mask = env.action_masks()
    free = obs["node_capacity"] - obs["node_deployed"]
    expect = (obs["node_active"] == 1) & np.all(free >= obs["current_function_request"], axis=1)
    assert not mask[1]
    np.testing.assert_array_equal(mask, expect)


def test_invalid_action_ends_episode_with_default_penalty_of_instances_left() -> None:
    env = ServerlessPlacementEnv(
        num_nodes=3, episode_length=20, dataset=list(records(20, exec_time=1e4))
    )
    env.cluster.active[2] = False
    env.reset(seed=0)
    env.step(0)
    _, reward, terminated, _, info = env.step(2)
    assert terminated and info["invalid_action"]
    assert reward == -19.0
    assert info["metrics"]["invalid_actions"] == 1
    with pytest.raises(RuntimeError):
        env.step(0)


def test_invalid_action_penalty_is_configurable() -> None:
    env = ServerlessPlacementEnv(num_nodes=3, invalid_action_penalty=10.0, dataset=list(records(5)))
    env.cluster.active[0] = False
    env.reset(seed=0)
    _, reward, terminated, _, _ = env.step(0)
    assert terminated and reward == -10.0


def test_instances_release_resources_when_they_finish() -> None:
    # two instances one second apart, each running 10 s: the second sees the first still there;
    # a third arriving at t=100 sees an empty node
    recs = [
        {"cpu_request": 1.0, "mem_request": 1.0, "exec_time": 10.0, "arrival_time": 0.0},
        {"cpu_request": 1.0, "mem_request": 1.0, "exec_time": 10.0, "arrival_time": 1.0},
        {"cpu_request": 1.0, "mem_request": 1.0, "exec_time": 10.0, "arrival_time": 100.0},
    ]
    env = ServerlessPlacementEnv(num_nodes=2, dataset=recs, episode_length=3)
    env.reset(seed=0)
    obs, *_ = env.step(0)
    assert obs["node_deployed"][0, 0] == pytest.approx(1.0)
    obs, *_ = env.step(0)
    assert obs["node_deployed"][0, 0] == pytest.approx(0.0)  # both finished by t=100
    assert env.metrics()["sim_time"] == pytest.approx(100.0)


def test_response_time_grows_with_node_load_and_cold_start_only_once() -> None:
    recs = [
        {
            "cpu_request": 0.5,
            "mem_request": 0.5,
            "exec_time": 100.0,
            "arrival_time": float(k),
            "type": 0,
        }
        for k in range(6)
    ]
    env = ServerlessPlacementEnv(num_nodes=2, dataset=recs, episode_length=6)
    env.reset(seed=0)
    big = int(np.argmax(env.cluster.capacity[:, 0]))
    rfrts, colds = [], []
    for _ in range(6):
        _, _, _, _, info = env.step(big)
        rfrts.append(info["rfrt"])
        colds.append(info["cold_start"])
    assert colds == [True] + [False] * 5
    warm = rfrts[1:]
    assert all(b > a for a, b in itertools.pairwise(warm))


def test_cost_follows_billing_and_keepalive() -> None:
    recs = [{"cpu_request": 1.0, "mem_request": 1.0, "exec_time": 50.0, "arrival_time": 0.0}]
    env = ServerlessPlacementEnv(
        num_nodes=2,
        dataset=recs,
        episode_length=1,
        node_keepalive=100.0,
        cold_start=0.0,
        cold_start_per_gb=0.0,
    )
    env.reset(seed=0)
    _, _, done, _, info = env.step(0)
    assert done
    run = info["response_time"]
    expected = env.cluster.price[0] / 3600.0 * (run + 100.0)
    assert info["metrics"]["cost"] == pytest.approx(expected)
    assert info["cost_delta"] == pytest.approx(expected)


def test_placing_on_a_billed_node_costs_less_than_waking_an_idle_one() -> None:
    recs = [
        {"cpu_request": 0.25, "mem_request": 0.25, "exec_time": 10.0, "arrival_time": float(k)}
        for k in range(2)
    ]
    env = ServerlessPlacementEnv(num_nodes=3, dataset=recs, episode_length=2)
    env.reset(seed=0)
    _, _, _, _, first = env.step(0)
    env2 = ServerlessPlacementEnv(num_nodes=3, dataset=recs, episode_length=2)
    env2.reset(seed=0)
    env2.step(0)
    _, _, _, _, same = env.step(0)
    _, _, _, _, other = env2.step(1)
    assert same["cost_delta"] < other["cost_delta"]
    assert first["cost_delta"] > 0


def test_generator_injection_cycles_or_ends() -> None:
    env = ServerlessPlacementEnv(num_nodes=4, episode_length=10, on_exhausted="cycle")
    env.set_dataset(records(4))
    env.reset(seed=0)
    steps, done = 0, False
    while not done:
        _, _, done, _, _ = env.step(int(np.argmax(env.action_masks())))
        steps += 1
    assert steps == 10  # 4 drawn, then replayed

    env = ServerlessPlacementEnv(num_nodes=4, episode_length=10, on_exhausted="end")
    env.set_dataset(records(4))
    env.reset(seed=0)
    steps, done = 0, False
    while not done:
        _, _, done, _, _ = env.step(int(np.argmax(env.action_masks())))
        steps += 1
    assert steps == 4


def test_generator_without_required_field_is_refused() -> None:
    env = ServerlessPlacementEnv(num_nodes=2)
    env.set_dataset([{"mem_request": 1.0}])
    with pytest.raises(ValueError, match="cpu_request"):
        env.reset(seed=0)


def test_workflow_dataset_and_poisson_load() -> None:
    env = ServerlessPlacementEnv(
        num_nodes=5, dataset=[chain(5), chain(5)], episode_length=10, on_exhausted="end"
    )
    env.reset(seed=0)
    arrivals = env._arrival.copy()
    assert len(arrivals) == 10 and np.all(np.diff(arrivals) >= 0)


def test_queueing_when_nothing_fits_adds_wait() -> None:
    # every node gets a long instance of its full size, then one more arrives
    env = ServerlessPlacementEnv(
        num_nodes=2,
        episode_length=3,
        dataset=[
            {"cpu_request": 2.0, "mem_request": 4.0, "exec_time": 100.0, "arrival_time": 0.0},
            {"cpu_request": 2.0, "mem_request": 4.0, "exec_time": 100.0, "arrival_time": 0.0},
            {"cpu_request": 2.0, "mem_request": 4.0, "exec_time": 10.0, "arrival_time": 1.0},
        ],
        cluster_seed=0,
    )
    env.cluster.capacity[:, :2] = [2.0, 4.0]
    env._set_cluster_constants()
    env.reset(seed=0)
    env.step(0)
    env.step(1)
    assert env.action_masks().any()  # freed by waiting for the first finish
    _, _, _, _, info = env.step(int(np.argmax(env.action_masks())))
    assert info["response_time"] > 100.0 - 1.0


def test_render_ansi_lists_nodes() -> None:
    env = gym.make("rlsched/ServerlessPlacement-v0", render_mode="ansi", num_nodes=3)
    env.reset(seed=0)
    text = env.render()
    assert "cpu req/cap" in text and len(text.splitlines()) >= 5


def test_slo_cost_reward_and_beta_change_rewards() -> None:
    kw = {"num_nodes": 5, "dataset": [chain(8)], "episode_length": 8}
    r = {}
    for name, extra in [("lat", {}), ("slo", {"reward": "slo_cost"}), ("b1", {"beta": 1.0})]:
        env = ServerlessPlacementEnv(**kw, **extra)
        env.reset(seed=0)
        total, done = 0.0, False
        while not done:
            _, rew, done, _, _ = env.step(int(np.argmax(env.action_masks())))
            assert rew <= 0
            total += rew
        r[name] = total
    assert len({round(v, 9) for v in r.values()}) == 3


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="reward"):
        ServerlessPlacementEnv(reward="speed")
    with pytest.raises(ValueError, match="beta"):
        ServerlessPlacementEnv(beta=2.0)
