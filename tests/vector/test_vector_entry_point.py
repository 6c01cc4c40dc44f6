"""Gymnasium finds the batched ServerlessPlacement env through its ``vector_entry_point``."""

from __future__ import annotations

import gymnasium as gym
import numpy as np

import rlsched  # noqa: F401
from rlsched.envs.serverless_placement import ServerlessPlacementEnv
from rlsched.vector import ServerlessPlacementVectorEnv


def test_make_vec_builds_the_batched_env() -> None:
    venv = gym.make_vec(
        "rlsched/ServerlessPlacement-v0",
        num_envs=4,
        vectorization_mode="vector_entry_point",
        num_nodes=6,
        episode_length=30,
    )
    assert isinstance(venv.unwrapped, ServerlessPlacementVectorEnv)
    assert venv.num_envs == 4
    obs, info = venv.reset(seed=3)
    assert obs["node_capacity"].shape == (4, 6, 2)
    assert "time" in info
    # sub-env 0 is the single env reset with the same seed
    single = ServerlessPlacementEnv(num_nodes=6, episode_length=30)
    o1, _ = single.reset(seed=3)
    for key, value in o1.items():
        assert np.array_equal(obs[key][0], value), key
    masks = venv.unwrapped.action_masks()
    _, reward, _, _, _ = venv.step(masks.argmax(axis=1))
    assert reward.shape == (4,)
    venv.close()


def test_make_vec_defaults_to_the_vector_entry_point() -> None:
    venv = gym.make_vec("rlsched/ServerlessPlacement-v0", num_envs=2)
    assert isinstance(venv.unwrapped, ServerlessPlacementVectorEnv)
    venv.close()
