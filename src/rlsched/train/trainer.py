"""Train SB3 / sb3-contrib agents on rlsched envs into a self-describing run folder.

Run folder layout::

    RUN/config.yaml      the TrainConfig
    RUN/run.json         seed, versions, git commit, timings, env steps/s
    RUN/metrics.json     final evaluation of the kept model on the eval dataset
    RUN/model/           the kept (best on evaluation) model: model.zip, vecnormalize.pkl, meta.json
    RUN/final/           the model at the end of training, same layout
    RUN/monitor/         per-env episode logs (SB3 Monitor CSV: reward, length, time, metrics)
    RUN/eval/            evaluations.npz (timesteps, rewards) of the periodic evaluation
    RUN/tb/              TensorBoard logs
    RUN/progress.json    env steps done / planned and seconds, rewritten while training
"""

from __future__ import annotations

import json
import shutil
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from sb3_contrib.common.maskable.callbacks import MaskableEvalCallback
from sb3_contrib.common.maskable.evaluation import evaluate_policy
from stable_baselines3.common.callbacks import BaseCallback, EvalCallback
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.utils import set_random_seed
from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize

from rlsched.agents import networks
from rlsched.agents.models import MASKED_ALGOS, MODEL_FORMAT, algo_class
from rlsched.envs.make import make_env
from rlsched.errors import ConfigError
from rlsched.optional import available, install_hint
from rlsched.runtime import git_commit, set_torch_threads, versions
from rlsched.train import imitation
from rlsched.train.config import TrainConfig
from rlsched.train.progress import TrainProgress, planned_steps
from rlsched.vector import make_sb3_vec_env

#: Offsets of the evaluation env's and the imitation teacher's seeds from the training seed.
EVAL_SEED, TEACHER_SEED = 10_000, 20_000


def float_box_keys(space: gym.Space) -> list[str] | None:
    """Dict keys VecNormalize may normalise: every Box (binary flags are left as they are)."""
    if not isinstance(space, spaces.Dict):
        return None
    return [k for k, s in space.spaces.items() if isinstance(s, spaces.Box)]


def _tensorboard(cfg: TrainConfig) -> bool:
    """``cfg.tensorboard``, and TensorBoard installed (else one warning names the extra)."""
    if cfg.tensorboard and not available("tensorboard"):
        warnings.warn(
            "TensorBoard logs skipped: tensorboard is not installed: "
            + install_hint("tensorboard"),
            stacklevel=2,
        )
        return False
    return cfg.tensorboard


def _vec_env(
    cfg: TrainConfig, dataset: str | None, n_envs: int, seed: int, monitor_dir: Path | None
) -> DummyVecEnv:
    """``n_envs`` single envs in SB3's DummyVecEnv, each in a Monitor (CSV ``monitor_dir/RANK``
    when given); sub-env ``r``'s action space and first reset are seeded with ``seed + r``."""
    vec = make_vec_env(
        lambda: make_env(cfg.env_id, dataset, **cfg.env_kwargs),
        n_envs=n_envs,
        seed=seed,
        monitor_dir=None if monitor_dir is None else str(monitor_dir),
        monitor_kwargs={"info_keywords": ()},
        vec_env_cls=DummyVecEnv,
    )
    assert isinstance(vec, DummyVecEnv)
    return vec


def _teacher_env(cfg: TrainConfig) -> gym.Env:
    """The single env the imitation teacher plays in (seeded apart from training and
    evaluation)."""
    env = _vec_env(cfg, cfg.dataset, 1, cfg.seed + TEACHER_SEED, None).envs[0]
    env.reset(seed=cfg.seed + TEACHER_SEED)
    return env


@dataclass
class TrainResult:
    run_dir: Path
    model_dir: Path
    steps: int
    seconds: float
    steps_per_second: float
    eval_mean_reward: float | None


def _save_model_dir(model: Any, normalizer: Any, cfg: TrainConfig, dest: Path, name: str) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    model.save(dest / "model.zip")
    if normalizer is not None:
        normalizer.save(dest / "vecnormalize.pkl")  # the statistics (the env is not pickled)
    meta = {
        "format": MODEL_FORMAT,
        "name": name,
        "algo": cfg.algo,
        "env_id": cfg.env_id,
        "env_kwargs": cfg.env_kwargs,
        "dataset": cfg.dataset,
        "normalized_obs": normalizer is not None,
        "seed": cfg.seed,
        "versions": versions(),
        "git_commit": git_commit(),
        "saved_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    (dest / "meta.json").write_text(json.dumps(meta, indent=2))


def train(cfg: TrainConfig, out: str | Path, progress: bool = True) -> TrainResult:
    """Train ``cfg.algo`` on ``cfg.env_id`` and write the run folder ``out``."""
    cfg.validate()
    set_torch_threads(cfg.torch_threads)
    run = Path(out)
    run.mkdir(parents=True, exist_ok=True)
    cfg.save(run / "config.yaml")
    set_random_seed(cfg.seed)

    if cfg.vec_env == "batched":
        # all n_envs in one array-stepped env; sub-env r meets the episodes env r would
        venv: Any = make_sb3_vec_env(
            cfg.env_id, cfg.n_envs, cfg.dataset, monitor_dir=run / "monitor", **cfg.env_kwargs
        )
    else:
        venv = _vec_env(cfg, cfg.dataset, cfg.n_envs, cfg.seed, run / "monitor")
    keys = float_box_keys(venv.observation_space)
    obs_space = venv.observation_space
    has_nodes = isinstance(obs_space, spaces.Dict) and any(
        k.startswith("node_") for k in obs_space.spaces
    )
    if cfg.policy_net == "node" and not has_nodes:
        raise ConfigError(
            f"policy_net 'node' needs a Dict observation with node_* keys; {cfg.env_id} has "
            f"{type(obs_space).__name__}: use policy_net 'mlp' or 'auto'"
        )
    if cfg.algo == "dqn":
        use_node_net = False
    elif cfg.algo == "masked_dqn":  # as dqn (mlp) unless the node head is asked for
        use_node_net = cfg.policy_net == "node"
    else:
        use_node_net = cfg.policy_net == "node" or (cfg.policy_net == "auto" and has_nodes)
    normalizer = None
    if cfg.normalize_obs and not use_node_net:
        venv = normalizer = VecNormalize(
            venv, norm_obs=True, norm_reward=False, norm_obs_keys=keys, clip_obs=10.0
        )

    policy: Any = (
        "MultiInputPolicy" if isinstance(venv.observation_space, spaces.Dict) else "MlpPolicy"
    )
    if cfg.algo == "dqn":
        policy_kwargs: dict[str, Any] = {"net_arch": list(cfg.net_arch)}
    elif cfg.algo == "masked_dqn":
        policy_kwargs = {"net_arch": list(cfg.net_arch)}
        if use_node_net:
            policy_kwargs.update(
                features_extractor_class=networks.NodeSetExtractor,
                features_extractor_kwargs={"hidden": cfg.node_hidden},
                node_scoring=True,
            )
    elif use_node_net:
        policy = networks.MaskableNodePolicy if cfg.algo == "maskable_ppo" else networks.NodePolicy
        policy_kwargs = networks.node_policy_kwargs(
            cfg.node_hidden, list(cfg.net_arch), pooled_value=cfg.node_value == "pooled"
        )
    else:
        policy_kwargs = {"net_arch": {"pi": list(cfg.net_arch), "vf": list(cfg.net_arch)}}
    if cfg.log_std_init is not None and isinstance(venv.action_space, spaces.Box):
        policy_kwargs["log_std_init"] = float(cfg.log_std_init)
    cls = algo_class(cfg.algo)
    common: dict[str, Any] = {
        "learning_rate": cfg.learning_rate,
        "gamma": cfg.gamma,
        "seed": cfg.seed,
        "device": "cpu",
        "verbose": 0,
        "tensorboard_log": str(run / "tb") if _tensorboard(cfg) else None,
    }
    if cfg.algo == "dqn":
        model = cls(
            policy,
            venv,
            buffer_size=cfg.buffer_size,
            learning_starts=cfg.learning_starts,
            batch_size=cfg.batch_size,
            exploration_fraction=cfg.exploration_fraction,
            policy_kwargs=policy_kwargs,
            **common,
        )
    elif cfg.algo == "masked_dqn":
        model = cls(
            policy,
            venv,
            buffer_size=cfg.buffer_size,
            learning_starts=cfg.learning_starts,
            batch_size=cfg.batch_size,
            target_update_interval=cfg.target_update_interval,
            train_freq=cfg.train_freq,
            gradient_steps=cfg.gradient_steps,
            epsilon_points=list(cfg.epsilon_points),
            epsilon_values=list(cfg.epsilon_values),
            policy_kwargs=policy_kwargs,
            **common,
        )
    else:
        model = cls(
            policy,
            venv,
            n_steps=cfg.n_steps,
            batch_size=cfg.batch_size,
            n_epochs=cfg.n_epochs,
            gae_lambda=cfg.gae_lambda,
            ent_coef=cfg.ent_coef,
            clip_range=cfg.clip_range,
            policy_kwargs=policy_kwargs,
            **common,
        )

    class EpisodeMetrics(BaseCallback):
        """Log the env's own episode metrics (cost, RFRT, ...) to TensorBoard and a CSV."""

        def __init__(self) -> None:
            super().__init__()
            self.rows: list[dict[str, float]] = []

        def _on_step(self) -> bool:
            for info in self.locals.get("infos", []):
                m = info.get("metrics")
                if m:
                    for k, v in m.items():
                        self.logger.record_mean(f"env/{k}", v)
                    self.rows.append({"timestep": float(self.num_timesteps), **m})
            return True

    class SaveNormalizer(BaseCallback):
        """On a new best evaluation, keep the normalisation statistics beside the model."""

        def _on_step(self) -> bool:
            _save_model_dir(self.model, normalizer, cfg, run / "model", "best")
            return True

    metrics_cb = EpisodeMetrics()
    callbacks: list[Any] = [metrics_cb, TrainProgress(planned_steps(cfg), progress, run)]
    eval_cb: EvalCallback | None = None
    if cfg.eval_freq > 0:
        eval_venv: Any = _vec_env(
            cfg, cfg.eval_dataset or cfg.dataset, 1, cfg.seed + EVAL_SEED, None
        )
        # the first reset takes the seed; each evaluation then continues the env's own stream
        eval_venv.reset()
        if normalizer is not None:
            eval_venv = VecNormalize(
                eval_venv, training=False, norm_obs=True, norm_reward=False, norm_obs_keys=keys
            )
        eval_kwargs: dict[str, Any] = {
            "n_eval_episodes": cfg.eval_episodes,
            "eval_freq": max(1, cfg.eval_freq // cfg.n_envs),
            "log_path": str(run / "eval"),
            "deterministic": True,
            "callback_on_new_best": SaveNormalizer(),
            "verbose": 0,
        }
        if cfg.algo in MASKED_ALGOS:
            eval_cb = MaskableEvalCallback(eval_venv, **eval_kwargs)
        else:
            eval_cb = EvalCallback(eval_venv, **eval_kwargs)
        callbacks.append(eval_cb)

    imitation: dict[str, Any] | None = None
    if cfg.imitation_policy:
        imitation = _warm_start(cfg, model, eval_cb, run, normalizer, progress)

    t0 = time.perf_counter()
    with warnings.catch_warnings():
        if cfg.vec_env == "batched":  # evaluation deliberately uses DummyVecEnv of single envs
            warnings.filterwarnings("ignore", "Training and eval env are not of the same type")
        model.learn(total_timesteps=cfg.total_steps, callback=callbacks)
    seconds = time.perf_counter() - t0
    steps = int(model.num_timesteps)

    _save_model_dir(model, normalizer, cfg, run / "final", "final")
    if not (run / "model" / "model.zip").exists():
        shutil.copytree(run / "final", run / "model", dirs_exist_ok=True)
    if metrics_cb.rows:
        _write_csv(run / "episode_metrics.csv", metrics_cb.rows)

    best = float(eval_cb.best_mean_reward) if eval_cb is not None else None
    if best is not None and not np.isfinite(best):
        best = None
    record = {
        "config": cfg.to_dict(),
        "seed": cfg.seed,
        "versions": versions(),
        "git_commit": git_commit(),
        "steps": steps,
        "seconds": seconds,
        "steps_per_second": steps / seconds if seconds > 0 else None,
        "best_eval_mean_reward": best,
        "imitation": imitation,
        "finished_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    (run / "run.json").write_text(json.dumps(record, indent=2))
    (run / "metrics.json").write_text(
        json.dumps({"best_eval_mean_reward": best, "steps": steps}, indent=2)
    )
    venv.close()
    return TrainResult(run, run / "model", steps, seconds, steps / max(seconds, 1e-9), best)


def _warm_start(
    cfg: TrainConfig, model: Any, eval_cb: Any, run: Path, normalizer: Any, progress: bool
) -> dict[str, Any]:
    """Behaviour-clone ``cfg.imitation_policy`` into ``model`` (teacher episodes seeded apart
    from training and evaluation); evaluate the result as the first candidate best model."""
    if normalizer is not None:
        raise ConfigError("imitation_policy works with the node network or normalize_obs: false")
    t0 = time.perf_counter()
    demos = imitation.collect(
        lambda: _teacher_env(cfg),
        cfg.imitation_policy or "",
        cfg.imitation_episodes,
        cfg.gamma,
        seed=cfg.seed + TEACHER_SEED,
        progress=progress,
    )
    stats: dict[str, Any] = imitation.pretrain(
        model.policy,
        demos,
        cfg.imitation_epochs,
        batch_size=cfg.batch_size,
        lr=cfg.imitation_lr,
        seed=cfg.seed,
        progress=progress,
    )
    rounds = []
    for k in range(cfg.imitation_dagger_rounds):

        def learner(obs: Any, mask: np.ndarray) -> int:
            kw = {"action_masks": mask} if cfg.algo in MASKED_ALGOS else {}
            action, _ = model.predict(obs, deterministic=True, **kw)
            return int(action)

        demos = demos + imitation.collect(
            lambda: _teacher_env(cfg),
            cfg.imitation_policy or "",
            cfg.imitation_episodes,
            cfg.gamma,
            seed=cfg.seed + 30_000 + k * cfg.imitation_episodes,
            progress=progress,
            behaviour=learner,
        )
        round_stats = imitation.pretrain(
            model.policy,
            demos,
            cfg.imitation_epochs,
            batch_size=cfg.batch_size,
            lr=cfg.imitation_lr,
            seed=cfg.seed + k + 1,
            progress=progress,
        )
        rounds.append(round_stats)
    if rounds:
        stats = {**rounds[-1], "first_fit": stats, "dagger_rounds": len(rounds)}
    stats.update(policy=cfg.imitation_policy, seconds=time.perf_counter() - t0)
    if eval_cb is not None:
        rewards, _ = evaluate_policy(
            model,
            eval_cb.eval_env,
            n_eval_episodes=cfg.eval_episodes,
            deterministic=True,
            return_episode_rewards=True,
            use_masking=cfg.algo in MASKED_ALGOS,
        )
        stats["eval_mean_reward"] = float(np.mean(rewards))
        eval_cb.best_mean_reward = stats["eval_mean_reward"]
        _save_model_dir(model, normalizer, cfg, run / "model", "best")
    return stats


def _write_csv(path: Path, rows: list[dict[str, float]]) -> None:
    keys = list(rows[0])
    lines = [",".join(keys)] + [",".join(f"{r.get(k, '')}" for k in keys) for r in rows]
    path.write_text("\n".join(lines) + "\n")
