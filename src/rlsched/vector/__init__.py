"""Batched vector envs: many sub-envs stepped with array operations in one process.

- :class:`~rlsched.vector.serverless_placement.ServerlessPlacementVectorEnv`: a
  ``gymnasium.vector.VectorEnv`` of ``rlsched/ServerlessPlacement-v0`` (same-step autoreset),
  over the array core :class:`~rlsched.vector.serverless_placement.ServerlessPlacementBatch`.
- :class:`~rlsched.vector.sb3.SB3VecEnv`: a Stable-Baselines3 ``VecEnv`` over such a vector env
  (terminal observations, Monitor episode stats, ``env_method("action_masks")`` for
  sb3-contrib's MaskablePPO); imported lazily, as it imports Stable-Baselines3.

``BATCHED_ENV_IDS`` names the env ids with a batched implementation; :func:`make_vector_env`
and :func:`make_sb3_vec_env` build them by id.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from rlsched.vector.serverless_placement import (
    ServerlessPlacementBatch,
    ServerlessPlacementVectorEnv,
)

if TYPE_CHECKING:
    from rlsched.vector.sb3 import SB3VecEnv

#: Env id -> its batched vector env class.
BATCHED_ENVS: dict[str, type] = {
    "rlsched/ServerlessPlacement-v0": ServerlessPlacementVectorEnv,
}
BATCHED_ENV_IDS: tuple[str, ...] = tuple(BATCHED_ENVS)


def make_vector_env(
    env_id: str, num_envs: int, dataset: str | None = None, **env_kwargs: Any
) -> ServerlessPlacementVectorEnv:
    """The batched vector env of ``env_id`` (a ``KeyError`` naming the supported ids if it has
    none); ``dataset`` and ``env_kwargs`` are the single env's arguments."""
    if env_id not in BATCHED_ENVS:
        raise KeyError(f"{env_id} has no batched vector env; batched: {', '.join(BATCHED_ENV_IDS)}")
    if dataset is not None:
        env_kwargs["dataset"] = dataset
    return BATCHED_ENVS[env_id](num_envs, **env_kwargs)


def make_sb3_vec_env(
    env_id: str,
    num_envs: int,
    dataset: str | None = None,
    monitor_dir: str | Path | None = None,
    **env_kwargs: Any,
) -> SB3VecEnv:
    """:func:`make_vector_env` behind the Stable-Baselines3 ``VecEnv`` adapter."""
    from rlsched.vector.sb3 import SB3VecEnv

    venv = make_vector_env(env_id, num_envs, dataset, **env_kwargs)
    return SB3VecEnv(venv, monitor_dir, env_id=env_id)


def __getattr__(name: str) -> Any:
    if name == "SB3VecEnv":
        from rlsched.vector.sb3 import SB3VecEnv

        return SB3VecEnv
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "BATCHED_ENVS",
    "BATCHED_ENV_IDS",
    "SB3VecEnv",
    "ServerlessPlacementBatch",
    "ServerlessPlacementVectorEnv",
    "make_sb3_vec_env",
    "make_vector_env",
]
