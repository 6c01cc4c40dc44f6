"""Every registered env passes both env checkers and replays identically under a seed.

Parametrised over ``rlsched.envs.ENV_IDS``, so envs added later join automatically.
"""

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env as gym_check_env
from stable_baselines3.common.env_checker import check_env as sb3_check_env

import rlsched  # noqa: F401
from rlsched.envs import ENV_IDS

ENVS = sorted(ENV_IDS)


@pytest.mark.parametrize("env_id", ENVS)
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_gymnasium_check_env(env_id: str) -> None:
    env = gym.make(env_id, disable_env_checker=True)
    gym_check_env(env.unwrapped, skip_render_check=False)


@pytest.mark.parametrize("env_id", ENVS)
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_sb3_check_env(env_id: str) -> None:
    sb3_check_env(gym.make(env_id, disable_env_checker=True).unwrapped, warn=True)


def _rollout(env_id: str, seed: int, steps: int = 300) -> list[tuple]:
    env = gym.make(env_id, disable_env_checker=True)
    obs, _ = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    trace = []
    for _ in range(steps):
        mask = env.unwrapped.action_masks()
        valid = np.flatnonzero(mask)
        action = int(rng.choice(valid)) if len(valid) else 0
        obs, reward, terminated, truncated, _ = env.step(action)
        flat = (
            np.concatenate([np.asarray(v, dtype=np.float64).ravel() for v in obs.values()])
            if isinstance(obs, dict)
            else np.asarray(obs, dtype=np.float64).ravel()
        )
        trace.append((action, float(reward), terminated, truncated, flat.tobytes()))
        if terminated or truncated:
            obs, _ = env.reset()
    return trace


@pytest.mark.parametrize("env_id", ENVS)
def test_deterministic_under_seed(env_id: str) -> None:
    a, b = _rollout(env_id, seed=7), _rollout(env_id, seed=7)
    assert a == b
    assert a != _rollout(env_id, seed=8)


@pytest.mark.parametrize("env_id", ENVS)
def test_masked_random_play_never_invalid(env_id: str) -> None:
    env = gym.make(env_id, disable_env_checker=True)
    env.reset(seed=3)
    rng = np.random.default_rng(3)
    for _ in range(500):
        valid = np.flatnonzero(env.unwrapped.action_masks())
        assert len(valid) > 0
        _, _, term, trunc, info = env.step(int(rng.choice(valid)))
        assert not info.get("invalid_action", False)
        if term or trunc:
            env.reset()
