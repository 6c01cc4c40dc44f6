"""``make_env``: a registered env by id (``gym.make`` without the checker), with a dataset."""

from __future__ import annotations

from typing import Any

import gymnasium as gym

import rlsched.envs  # noqa: F401  (registers the envs)


def make_env(env_id: str, dataset: str | None = None, **kwargs: Any) -> gym.Env:
    """``gym.make(env_id, dataset=dataset, **kwargs)`` (no env checker; ``dataset`` only when
    given)."""
    if dataset is not None:
        kwargs["dataset"] = dataset
    return gym.make(env_id, disable_env_checker=True, **kwargs)
