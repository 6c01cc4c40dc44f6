"""snapshot() / restore() on every registered env: the same actions after a restore give
bit-identical observations, rewards, terminations and infos (random generators included)."""

from __future__ import annotations

import pickle
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import rlsched  # noqa: F401
from rlsched.envs import ENV_IDS
from rlsched.envs.base import EnvSnapshot

ENVS = sorted(ENV_IDS)


def _actions(env: gym.Env, n: int, seed: int) -> list[Any]:
    """``n`` actions drawn in advance (masked-random for Discrete, uniform for Box)."""
    rng = np.random.default_rng(seed)
    space = env.action_space
    if isinstance(space, gym.spaces.Discrete):
        return [int(x) for x in rng.integers(0, 1 << 30, size=n)]
    return [rng.uniform(space.low, space.high).astype(space.dtype) for _ in range(n)]


def _play(env: gym.Env, actions: list[Any]) -> list[bytes]:
    """Step the unwrapped env through ``actions`` (a Discrete draw picks among the valid
    actions at that step); every output pickled, so equality is bit-identity."""
    base = env.unwrapped
    out = []
    for a in actions:
        if isinstance(env.action_space, gym.spaces.Discrete):
            valid = np.flatnonzero(base.action_masks())
            a = int(valid[a % len(valid)]) if len(valid) else 0
        step = base.step(a)
        out.append(pickle.dumps(step, protocol=5))
        if step[2] or step[3]:
            break
    return out


@pytest.mark.parametrize("env_id", ENVS)
def test_restore_replays_bit_identically(env_id: str) -> None:
    env = gym.make(env_id, disable_env_checker=True)
    base = env.unwrapped
    env.reset(seed=3)
    _play(env, _actions(env, 7, seed=0))  # somewhere inside an episode
    snap = base.snapshot()
    assert isinstance(snap, EnvSnapshot)
    actions = _actions(env, 400, seed=1)
    first = _play(env, actions)
    assert len(first) > 1
    base.restore(snap)
    assert _play(env, actions) == first
    # steps after a snapshot never change it: it restores any number of times, also after
    # the episode ended
    base.restore(snap)
    assert _play(env, actions) == first
    # and other actions really lead elsewhere (the check above can fail)
    base.restore(snap)
    assert _play(env, _actions(env, 400, seed=2)) != first


def test_restore_refuses_another_envs_snapshot() -> None:
    a = gym.make("rlsched/VMPlacement-v0", disable_env_checker=True).unwrapped
    b = gym.make("rlsched/PodRebalancing-v0", disable_env_checker=True).unwrapped
    a.reset(seed=0)
    with pytest.raises(TypeError, match="VMPlacementEnv"):
        b.restore(a.snapshot())


@pytest.mark.parametrize("env_id", ENVS)
def test_advance_is_step_without_its_observation(env_id: str) -> None:
    env = gym.make(env_id, disable_env_checker=True)
    base = env.unwrapped
    env.reset(seed=5)
    actions = _actions(env, 30, seed=3)
    for a in actions:
        if isinstance(env.action_space, gym.spaces.Discrete):
            valid = np.flatnonzero(base.action_masks())
            a = int(valid[a % len(valid)]) if len(valid) else 0
        snap = base.snapshot()
        advanced = pickle.dumps(base.advance(a), protocol=5)
        base.restore(snap)
        _, r, term, trunc, info = base.step(a)
        assert advanced == pickle.dumps((float(r), bool(term), bool(trunc), info), protocol=5)
        if term or trunc:
            break
