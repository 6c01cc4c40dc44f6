"""The envs a training run plays in: training (single, vectorised, mixed workloads),
evaluation and the imitation teacher's, each seeded apart from the others."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecEnv

from rlsched.envs.make import make_env
from rlsched.errors import ConfigError, PolicyError
from rlsched.policies.registry import make_policy
from rlsched.policies.residual import ResidualAction, gate_index
from rlsched.train.config import TrainConfig

#: Offsets of the evaluation env's and the imitation teacher's seeds from the training seed;
#: expert iteration round k labels episodes from ``seed + EXPERT_SEED + k * episodes``.
EVAL_SEED, TEACHER_SEED, EXPERT_SEED = 10_000, 20_000, 40_000


def single_env(cfg: TrainConfig, dataset: str | None, seed: int) -> gym.Env:
    """One training or evaluation env; with ``residual_policy``, wrapped so that it plays the
    heuristic's action plus the model's scaled correction (:mod:`rlsched.policies.residual`)."""
    env = make_env(cfg.env_id, dataset, **cfg.env_kwargs)
    if cfg.residual_policy is None:
        return env
    try:
        base = make_policy(cfg.residual_policy, env, seed=seed)
        wrapped = ResidualAction(env, base, cfg.residual_scale, tuple(cfg.residual_range))
    except PolicyError as e:
        raise ConfigError(f"residual_policy of {cfg.env_id}: {e}") from None
    try:  # the gate plays only in the saved model, but a feature this env lacks fails now
        gate_index(env, cfg.residual_play_gate, f"residual_play_gate of {cfg.env_id}")
    except PolicyError as e:
        raise ConfigError(str(e)) from None
    return wrapped


def vec_env(
    cfg: TrainConfig,
    dataset: str | None,
    n_envs: int,
    seed: int,
    monitor_dir: Path | None,
    subproc: bool = False,
) -> VecEnv:
    """``n_envs`` single envs in SB3's DummyVecEnv (``subproc``: SubprocVecEnv, one process
    each), each in a Monitor (CSV ``monitor_dir/RANK`` when given); sub-env ``r``'s action
    space and first reset are seeded with ``seed + r``."""
    return make_vec_env(
        lambda: single_env(cfg, dataset, seed),
        n_envs=n_envs,
        seed=seed,
        monitor_dir=None if monitor_dir is None else str(monitor_dir),
        monitor_kwargs={"info_keywords": ()},
        vec_env_cls=SubprocVecEnv if subproc else DummyVecEnv,
    )


def mixed_vec_env(cfg: TrainConfig, monitor_dir: Path) -> VecEnv:
    """:func:`vec_env` with ``cfg.train_datasets``: sub-env ``r`` on the ``r``-th workload of
    ``[dataset, *train_datasets]`` (cyclically), seeded, monitored and stepped as there
    (``make_vec_env`` builds every sub-env from the same arguments, so not with it)."""
    datasets = [cfg.dataset, *cfg.train_datasets]

    def thunk(rank: int) -> Any:
        def init() -> gym.Env:
            env = single_env(cfg, datasets[rank % len(datasets)], cfg.seed + rank)
            env.action_space.seed(cfg.seed + rank)  # as make_vec_env: the reset seeds the rest
            monitor_dir.mkdir(parents=True, exist_ok=True)
            return Monitor(env, filename=str(monitor_dir / str(rank)), info_keywords=())

        return init

    cls = SubprocVecEnv if cfg.vec_env == "subproc" else DummyVecEnv
    venv = cls([thunk(r) for r in range(cfg.n_envs)])
    venv.seed(cfg.seed)
    return venv


def teacher_envs(cfg: TrainConfig) -> list[Callable[[], gym.Env]]:
    """The envs the imitation teacher plays in: ``dataset``'s, or with
    ``imitation_every_dataset`` one per workload of ``[dataset, *train_datasets]``."""
    datasets = [cfg.dataset, *cfg.train_datasets] if cfg.imitation_every_dataset else [cfg.dataset]
    return [functools.partial(teacher_env, cfg, d) for d in datasets]


def teacher_env(cfg: TrainConfig, dataset: str | None) -> gym.Env:
    """A single env the imitation teacher plays in (seeded apart from training and
    evaluation)."""
    vec = vec_env(cfg, dataset, 1, cfg.seed + TEACHER_SEED, None)
    assert isinstance(vec, DummyVecEnv)
    env = vec.envs[0]
    env.reset(seed=cfg.seed + TEACHER_SEED)
    return env
