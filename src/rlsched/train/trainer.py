"""Train SB3 / sb3-contrib agents on rlsched envs into a self-describing run folder.

Run folder layout::

    RUN/config.yaml      the TrainConfig
    RUN/run.json         seed, versions, git commit, timings, env steps/s, the learned SLO
                         multipliers (slo_dual: table and every step taken)
    RUN/metrics.json     final evaluation of the kept model on the eval dataset
    RUN/model/           the kept (best on evaluation) model: model.zip, vecnormalize.pkl, meta.json
    RUN/final/           the model at the end of training, same layout
    RUN/monitor/         per-env episode logs (SB3 Monitor CSV: reward, length, time, metrics)
    RUN/eval/            evaluations.npz (timesteps, rewards) of the periodic evaluation
    RUN/tb/              TensorBoard logs
    RUN/progress.json    env steps done / planned and seconds, rewritten while training
    RUN/checkpoint/      the latest checkpoint: model.zip (with its optimizer), state.json
                         (steps, phase, best evaluation), demos.npz (expert iteration's
                         labels); ``train(..., resume=True)`` continues from it
"""

from __future__ import annotations

import copy
import json
import shutil
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from gymnasium import spaces
from sb3_contrib.common.maskable.callbacks import MaskableEvalCallback
from sb3_contrib.common.maskable.evaluation import evaluate_policy
from stable_baselines3.common.callbacks import BaseCallback, EvalCallback
from stable_baselines3.common.logger import Logger
from stable_baselines3.common.on_policy_algorithm import OnPolicyAlgorithm
from stable_baselines3.common.utils import set_random_seed
from stable_baselines3.common.vec_env import (
    VecEnv,
    VecNormalize,
    sync_envs_normalization,
)

from rlsched.agents import networks
from rlsched.agents.models import (
    MASKED_ALGOS,
    MODEL_FORMAT,
    algo_class,
    load_model,
    read_meta,
    resolve_model_dir,
)
from rlsched.errors import ConfigError
from rlsched.optional import available, install_hint
from rlsched.policies.registry import make_rollout
from rlsched.policies.residual import range_json
from rlsched.runtime import git_commit, set_torch_threads, versions
from rlsched.train import imitation as imitation_mod
from rlsched.train.config import TrainConfig
from rlsched.train.departures import train_departures
from rlsched.train.envs import (
    EVAL_SEED,
    EXPERT_SEED,
    TEACHER_SEED,
    mixed_vec_env,
    teacher_envs,
    vec_env,
)
from rlsched.train.progress import TrainProgress, planned_steps
from rlsched.vector import make_sb3_vec_env


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


@dataclass
class TrainResult:
    run_dir: Path
    model_dir: Path
    steps: int
    seconds: float
    steps_per_second: float
    eval_mean_reward: float | None
    finished: bool = True
    """False when ``max_seconds`` stopped the run: its checkpoint holds where it stands, and
    ``train(..., resume=True)`` continues it (no ``run.json`` yet)."""
    warm_start_seconds: float | None = None
    """The imitation warm start's seconds (None: none ran), which ``seconds`` leaves out."""


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
        **({"train_datasets": list(cfg.train_datasets)} if cfg.train_datasets else {}),
        **({"split": cfg.split} if cfg.split != "default" else {}),
        "normalized_obs": normalizer is not None,
        "residual": None
        if cfg.residual_policy is None
        else {
            "policy": cfg.residual_policy,
            "scale": cfg.residual_scale,
            "range": range_json(tuple(cfg.residual_play_range or cfg.residual_range)),
            "hold": cfg.residual_play_hold,
            **({} if cfg.residual_play_gate is None else {"gate": cfg.residual_play_gate}),
        },
        "seed": cfg.seed,
        "versions": versions(),
        "git_commit": git_commit(),
        "saved_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    (dest / "meta.json").write_text(json.dumps(meta, indent=2))


class CriticWarmup(BaseCallback):
    """``critic_warmup_steps``: while the steps so far are at most ``steps``, the updates train
    the value network alone. Every parameter outside ``value_net`` and the extractor's value
    branch is frozen (no gradient, so Adam leaves it as it is); a shared feature extractor
    stays frozen too, and the critic fits on its features as they are."""

    def __init__(self, steps: int) -> None:
        super().__init__()
        self.steps = int(steps)
        self.frozen: bool | None = None  # as last set (None: not yet)

    def _set(self) -> None:
        warm = self.model.num_timesteps <= self.steps
        if warm == self.frozen:
            return  # only the two switches touch the parameters
        pol: Any = self.model.policy
        branch: Any = getattr(getattr(pol, "mlp_extractor", None), "value_net", None)
        critic = {id(p) for p in [*pol.value_net.parameters(),
                                  *(branch.parameters() if branch else [])]}  # fmt: skip
        for p in pol.parameters():
            if id(p) not in critic:
                p.requires_grad_(not warm)
        self.frozen = warm

    def _on_training_start(self) -> None:
        self._set()

    def _on_rollout_end(self) -> None:  # before each update
        self._set()

    def _on_step(self) -> bool:
        return True


class DualAscent(BaseCallback):
    """Multipliers learned alongside the policy: for an env with an ``slo_dual``
    (:class:`rlsched.envs.llm_rl.SLODual`), every finished episode's ``info["slo_dual"]``
    (bucket, constraint violation) takes one dual-ascent step of one table shared by all the
    training envs, which is then handed back to each (``set_slo_dual_table``) for its next
    episodes. The table is kept in checkpoints and the run record with every step taken."""

    def __init__(self, dual: Any, saved: dict[str, Any] | None = None) -> None:
        super().__init__()
        self.dual = copy.deepcopy(dual)
        #: [env steps, bucket, violation, the multiplier the episode paid, the new one]
        self.trace: list[list[Any]] = []
        if saved:
            self.dual.table = {str(k): float(v) for k, v in saved["table"].items()}
            self.trace = [list(t) for t in saved.get("trace", [])]

    @staticmethod
    def of(venv: VecEnv, saved: dict[str, Any] | None = None) -> DualAscent | None:
        """The callback for ``venv`` when its envs have an ``slo_dual``, else None."""
        try:  # has_attr first: a subprocess env asked for a missing attribute dies
            if not venv.has_attr("slo_dual"):
                return None
            dual = venv.get_attr("slo_dual", indices=[0])[0]
        except (AttributeError, NotImplementedError):
            return None
        return None if dual is None else DualAscent(dual, saved)

    def _on_training_start(self) -> None:
        self.training_env.env_method("set_slo_dual_table", dict(self.dual.table))

    def _on_step(self) -> bool:
        stepped = False
        for info in self.locals.get("infos", []):
            out = info.get("slo_dual")
            if out:
                lam = self.dual.update(out["bucket"], float(out["violation"]))
                paid, short = float(out["multiplier"]), float(out["violation"])
                self.trace.append([int(self.num_timesteps), out["bucket"], short, paid, lam])
                self.logger.record(f"slo_dual/{out['bucket']}", lam)
                stepped = True
        if stepped:
            self.training_env.env_method("set_slo_dual_table", dict(self.dual.table))
        return True

    def state(self) -> dict[str, Any]:
        return {"table": dict(sorted(self.dual.table.items())), "init": self.dual.init,
                "updates": len(self.trace), "trace": self.trace}  # fmt: skip


def phase_ends(cfg: TrainConfig) -> list[int]:
    """The env step count at which each PPO phase ends (``expert_iterations + 1`` phases)."""
    k = cfg.expert_iterations + 1
    return [round(cfg.total_steps * (i + 1) / k) for i in range(k)]


def train(
    cfg: TrainConfig,
    out: str | Path,
    progress: bool = True,
    resume: bool = False,
    max_seconds: float | None = None,
) -> TrainResult:
    """Train ``cfg.algo`` on ``cfg.env_id`` and write the run folder ``out``; ``resume``
    continues the run in ``out`` from its checkpoint (``out/checkpoint``) instead.

    ``max_seconds``: once this sitting has trained that long, write a checkpoint at the next
    rollout boundary (PPO, MaskablePPO) or step (DQN) and stop, unfinished
    (``TrainResult.finished`` False); a resume goes on from there. For machines or jobs with a
    wall-clock limit. Warm starts and expert rounds are not cut."""
    cfg.validate()
    if max_seconds is not None and not max_seconds >= 0:
        raise ConfigError(f"max_seconds must be >= 0, got {max_seconds}")
    set_torch_threads(cfg.torch_threads)
    run = Path(out)
    if cfg.algo == "departures":  # no SB3 model: its own recipe; a rerun reuses the labels
        run.mkdir(parents=True, exist_ok=True)
        cfg.save(run / "config.yaml")
        set_random_seed(cfg.seed)
        record = train_departures(cfg, run, progress)
        total = float(record["seconds"]["total"])
        return TrainResult(run, run / "model", 0, total, 0.0, record["best_eval_mean_reward"])
    state: dict[str, Any] | None = None
    if resume:
        state = read_checkpoint(run)
    run.mkdir(parents=True, exist_ok=True)
    cfg.save(run / "config.yaml")
    set_random_seed(cfg.seed)

    if cfg.vec_env == "batched":
        # all n_envs in one array-stepped env; sub-env r meets the episodes env r would
        venv: Any = make_sb3_vec_env(
            cfg.env_id, cfg.n_envs, cfg.dataset, monitor_dir=run / "monitor", **cfg.env_kwargs
        )
    elif cfg.train_datasets:
        venv = mixed_vec_env(cfg, run / "monitor")
    else:
        venv = vec_env(
            cfg, cfg.dataset, cfg.n_envs, cfg.seed, run / "monitor", cfg.vec_env == "subproc"
        )
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
    if cfg.node_global_keys is not None:
        if not use_node_net:
            raise ConfigError(
                "node_global_keys: only the node network (policy_net node) reads them"
            )
        try:
            networks.read_global_keys(obs_space, cfg.node_global_keys)
        except ValueError as e:
            raise ConfigError(f"node_global_keys of {cfg.env_id}: {e}") from None
    if cfg.node_prior_key is not None and (not use_node_net or cfg.algo == "masked_dqn"):
        raise ConfigError("node_prior_key: only the PPO node network (policy_net node) reads it")
    try:
        networks.prior_column(obs_space, cfg.node_prior_key)
    except ValueError as e:
        raise ConfigError(f"node_prior_key of {cfg.env_id}: {e}") from None
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
            cfg.node_hidden,
            list(cfg.net_arch),
            pooled_value=cfg.node_value == "pooled",
            global_keys=cfg.node_global_keys,
            prior_key=cfg.node_prior_key,
            prior_scale=cfg.node_prior_scale,
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
            target_kl=cfg.target_kl,
            policy_kwargs=policy_kwargs,
            **common,
        )

    if common["tensorboard_log"] is None:
        # SB3 otherwise makes an empty tempdir/SB3-<time> folder at every learn() call
        model.set_logger(Logger(folder=str(run), output_formats=[]))
    if cfg.residual_policy is not None:
        # the actor's mean starts at exactly zero: the untrained model plays the heuristic
        with torch.no_grad():
            model.policy.action_net.weight.zero_()
            model.policy.action_net.bias.zero_()

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
    bar = TrainProgress(planned_steps(cfg), progress, run)
    callbacks: list[Any] = [metrics_cb, bar]
    if cfg.critic_warmup_steps:
        callbacks.append(CriticWarmup(cfg.critic_warmup_steps))
    dual = DualAscent.of(venv, state.get("slo_dual") if state else None)
    if dual is not None:
        callbacks.append(dual)
    eval_cb: EvalCallback | None = None
    if cfg.eval_freq > 0:
        eval_venv: Any = vec_env(
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
        cb_cls: type = MaskableEvalCallback if cfg.algo in MASKED_ALGOS else EvalCallback
        if cfg.eval_same_episodes:
            cb_cls = _same_episodes(cb_cls, cfg.seed + EVAL_SEED)
        eval_cb = cb_cls(eval_venv, **eval_kwargs)
        callbacks.append(eval_cb)

    if cfg.init_model and state is None:
        _load_weights(model, cfg, normalizer)
    # a start that is already a policy (given weights, or a residual's heuristic) is the first
    # candidate: RL has to beat it on the evaluation episodes to replace it
    starts_as_policy = cfg.init_model or cfg.residual_policy or cfg.node_prior_key
    start_eval: float | None = state.get("start_eval") if state else None
    if starts_as_policy and state is None and eval_cb is not None and not cfg.imitation_policy:
        eval_cb.best_mean_reward = start_eval = _evaluate(model, eval_cb, cfg)
        _save_model_dir(model, normalizer, cfg, run / "model", "best")
    imitation: dict[str, Any] | None = None
    demos: imitation_mod.Demonstrations | None = None
    rounds: list[dict[str, Any]] = []
    ckpt = Checkpoint(run, model, cfg, eval_cb, normalizer)
    if state is not None:
        model.set_parameters(str(run / "checkpoint" / "model.zip"), exact_match=True)
        model.num_timesteps = int(state["steps"])
        if normalizer is not None:
            _restore_normalizer(normalizer, run / "checkpoint" / "vecnormalize.pkl")
        if eval_cb is not None:
            _restore_evaluations(eval_cb, run / "eval" / "evaluations.npz", model.num_timesteps)
            if state.get("best_mean_reward") is not None:
                eval_cb.best_mean_reward = float(state["best_mean_reward"])
        imitation, rounds = state.get("imitation"), list(state.get("expert_rounds", []))
        if (run / "checkpoint" / "demos.npz").is_file():
            demos = imitation_mod.Demonstrations.load(run / "checkpoint" / "demos.npz")
        seconds0 = float(state.get("seconds", 0.0))
    else:
        seconds0 = 0.0
        if cfg.imitation_policy:
            imitation, demos = _warm_start(cfg, model, eval_cb, run, normalizer, progress)
    if cfg.checkpoint_freq or max_seconds is not None:
        # the labels of expert iteration are aggregated over rounds: every checkpoint has them
        ckpt.demos = demos if cfg.expert_iterations else None
    if cfg.checkpoint_freq:
        callbacks.append(CheckpointEvery(ckpt, cfg.checkpoint_freq, lambda: state_now()))
    timer = None
    if max_seconds is not None:
        timer = StopAfter(ckpt, time.perf_counter() + max_seconds, lambda: state_now())
        callbacks.append(timer)

    phase = int(state["phase"]) if state else 0
    round_done = bool(state.get("round_done")) if state else False
    t0 = time.perf_counter()

    def state_now() -> dict[str, Any]:
        return {
            "phase": phase, "round_done": round_done, "imitation": imitation,
            "expert_rounds": rounds, "seconds": seconds0 + time.perf_counter() - t0,
            "start_eval": start_eval, "slo_dual": dual.state() if dual else None,
        }  # fmt: skip

    if cfg.checkpoint_freq and state is None and imitation is not None:
        ckpt.save(state_now())  # a long warm start is not lost to an interrupted run
    try:
        with warnings.catch_warnings():
            if cfg.vec_env == "batched":  # evaluation deliberately uses DummyVecEnv of single envs
                warnings.filterwarnings("ignore", "Training and eval env are not of the same type")
            ends = phase_ends(cfg)
            if phase >= len(ends) and int(model.num_timesteps) < ends[-1]:
                phase, round_done = len(ends) - 1, True  # a finished run given a larger budget
            while phase < len(ends):
                if phase > 0 and not round_done:
                    stats, demos = _expert_round(
                        cfg, model, eval_cb, run, normalizer, progress, phase, demos
                    )
                    rounds.append(stats)
                    round_done = True
                    if cfg.checkpoint_freq:
                        ckpt.save(state_now(), demos)
                left = ends[phase] - int(model.num_timesteps)
                if left > 0:
                    model.learn(
                        total_timesteps=left, callback=callbacks,
                        reset_num_timesteps=phase == 0 and state is None,
                    )  # fmt: skip
                if timer is not None and timer.stopped is not None:
                    break  # its checkpoint, written where it stopped, is where a resume starts
                phase, round_done = phase + 1, False
                if cfg.checkpoint_freq:
                    ckpt.save(state_now())
    finally:
        bar.close()
    seconds = seconds0 + time.perf_counter() - t0
    steps = int(model.num_timesteps)
    best = float(eval_cb.best_mean_reward) if eval_cb is not None else None
    if best is not None and not np.isfinite(best):
        best = None
    if timer is not None and timer.stopped is not None:
        venv.close()
        rate = timer.stopped / max(seconds, 1e-9)
        return TrainResult(run, run / "model", timer.stopped, seconds, rate, best, finished=False)

    _save_model_dir(model, normalizer, cfg, run / "final", "final")
    if not (run / "model" / "model.zip").exists():
        shutil.copytree(run / "final", run / "model", dirs_exist_ok=True)
    if metrics_cb.rows:
        _write_csv(run / "episode_metrics.csv", metrics_cb.rows)

    record = {
        "config": cfg.to_dict(),
        "seed": cfg.seed,
        "versions": versions(),
        "git_commit": git_commit(),
        "steps": steps,
        "seconds": seconds,
        "steps_per_second": steps / seconds if seconds > 0 else None,
        "best_eval_mean_reward": best,
        "start_eval_mean_reward": start_eval,
        "imitation": imitation,
        "expert_rounds": rounds,
        "slo_dual": dual.state() if dual else None,
        "resumed": state is not None,
        "finished_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    (run / "run.json").write_text(json.dumps(record, indent=2))
    (run / "metrics.json").write_text(
        json.dumps({"best_eval_mean_reward": best, "steps": steps}, indent=2)
    )
    venv.close()
    return TrainResult(
        run, run / "model", steps, seconds, steps / max(seconds, 1e-9), best,
        warm_start_seconds=imitation.get("seconds") if imitation else None,
    )  # fmt: skip


def _warm_start(
    cfg: TrainConfig, model: Any, eval_cb: Any, run: Path, normalizer: Any, progress: bool
) -> tuple[dict[str, Any], imitation_mod.Demonstrations]:
    """Behaviour-clone ``cfg.imitation_policy`` into ``model`` (teacher episodes seeded apart
    from training and evaluation); evaluate the result as the first candidate best model.
    Returns the statistics and the labels (expert iteration adds to them)."""
    if normalizer is not None:
        raise ConfigError("imitation_policy works with the node network or normalize_obs: false")
    t0 = time.perf_counter()
    demos, reused = _warm_start_labels(cfg, run, progress)
    stats = _refit(model, demos, cfg, cfg.seed, progress)
    rounds = []
    for k in range(cfg.imitation_dagger_rounds):
        demos = demos + imitation_mod.collect(
            teacher_envs(cfg),
            cfg.imitation_policy or "",
            cfg.imitation_episodes,
            cfg.gamma,
            seed=cfg.seed + 30_000 + k * cfg.imitation_episodes,
            progress=progress,
            behaviour=_learner(model, cfg),
            workers=cfg.imitation_workers,
        )
        rounds.append(_refit(model, demos, cfg, cfg.seed + k + 1, progress))
    if rounds:
        stats = {**rounds[-1], "first_fit": stats, "dagger_rounds": len(rounds)}
    stats.update(policy=cfg.imitation_policy, seconds=time.perf_counter() - t0)
    if reused:
        stats["labels_reused"] = str(run / WARM_LABELS)
    if eval_cb is not None:
        stats["eval_mean_reward"] = _evaluate(model, eval_cb, cfg)
        eval_cb.best_mean_reward = stats["eval_mean_reward"]
        _save_model_dir(model, normalizer, cfg, run / "model", "best")
    return stats, demos


#: the warm start's first labels in a run folder, and what made them (:func:`_warm_start_labels`)
WARM_LABELS = Path("teacher") / "warm_start.npz"
#: the config fields that decide which labels a warm start collects
LABEL_FIELDS = (
    "env_id", "dataset", "train_datasets", "env_kwargs", "imitation_policy",
    "imitation_episodes", "imitation_every_dataset", "gamma", "seed",
)  # fmt: skip


def _warm_start_labels(
    cfg: TrainConfig, run: Path, progress: bool
) -> tuple[imitation_mod.Demonstrations, bool]:
    """The warm start's first labels, and whether they were reused. A search teacher's labels
    cost far more than a fit on them, so they are kept in ``RUN/teacher/warm_start.npz``
    beside what made them (``warm_start.json``: :data:`LABEL_FIELDS`); a warm start that finds
    them there (a rerun, or a new run folder given an earlier run's ``teacher/``: a refit with
    other fitting options) reuses them, and refuses them, naming the field, when this config
    would have collected other ones."""
    path, made = run / WARM_LABELS, (run / WARM_LABELS).with_suffix(".json")
    mine = {k: getattr(cfg, k) for k in LABEL_FIELDS}
    if path.is_file():
        imitation_mod.refuse_other_labels(made, mine, path)
        return imitation_mod.Demonstrations.load(path), True
    demos = imitation_mod.collect(
        teacher_envs(cfg),
        cfg.imitation_policy or "",
        cfg.imitation_episodes,
        cfg.gamma,
        seed=cfg.seed + TEACHER_SEED,
        progress=progress,
        workers=cfg.imitation_workers,
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    demos.save(path)
    made.write_text(json.dumps(mine, indent=1) + "\n")
    return demos, False


def _refit(
    model: Any, demos: imitation_mod.Demonstrations, cfg: TrainConfig, seed: int, progress: bool
) -> dict[str, Any]:
    """Fit the actor (and critic) to every label so far: the warm start's first fit, each DAgger
    round and each expert round (labels the teacher changed weigh ``imitation_changed_weight``;
    the first fit has none)."""
    return imitation_mod.pretrain(
        model.policy, demos, cfg.imitation_epochs, batch_size=cfg.batch_size,
        lr=cfg.imitation_lr, seed=seed, progress=progress,
        changed_weight=cfg.imitation_changed_weight,
        target="values" if cfg.imitation_target == "values" else "actions",
        values_prior=cfg.imitation_values_prior,
        values_loss="kl" if cfg.imitation_values_loss == "kl" else "mse",
    )  # fmt: skip


def _learner(model: Any, cfg: TrainConfig) -> Any:
    """The model acting greedily within the mask: DAgger's behaviour policy."""

    def act(obs: Any, mask: np.ndarray) -> int:
        kw = {"action_masks": mask} if cfg.algo in MASKED_ALGOS else {}
        action, _ = model.predict(obs, deterministic=True, **kw)
        return int(action)

    return act


def _same_episodes(cls: type, seed: int) -> type:
    """``cls`` (an SB3 eval callback) reseeding its env before every evaluation."""

    class SameEpisodes(cls):
        eval_seed = seed

        def _on_step(self) -> bool:
            if self.eval_freq > 0 and self.n_calls % self.eval_freq == 0:
                self.eval_env.seed(self.eval_seed)
            return bool(super()._on_step())

    return SameEpisodes


def _evaluate(model: Any, eval_cb: Any, cfg: TrainConfig) -> float:
    """Mean reward of ``model`` over the periodic evaluation's episodes (its env continues,
    or, with ``eval_same_episodes``, replays the same ones), under the training env's
    observation statistics, as the periodic evaluations are (EvalCallback syncs them only when
    it runs: a start evaluated before that would see fresh ones)."""
    sync_envs_normalization(model.get_env(), eval_cb.eval_env)
    if cfg.eval_same_episodes:
        eval_cb.eval_env.seed(cfg.seed + EVAL_SEED)
    rewards, _ = evaluate_policy(
        model,
        eval_cb.eval_env,
        n_eval_episodes=cfg.eval_episodes,
        deterministic=True,
        return_episode_rewards=True,
        use_masking=cfg.algo in MASKED_ALGOS,
    )
    return float(np.mean(rewards))


def _expert_round(
    cfg: TrainConfig,
    model: Any,
    eval_cb: Any,
    run: Path,
    normalizer: Any,
    progress: bool,
    k: int,
    demos: imitation_mod.Demonstrations | None,
) -> tuple[dict[str, Any], imitation_mod.Demonstrations]:
    """Expert iteration round ``k`` (``TrainConfig.expert_iterations``): the search teacher over
    the best model so far labels the states the current model reaches; refit on every label
    so far; the refitted model is a candidate best on evaluation."""
    if normalizer is not None:
        raise ConfigError("expert_iterations works with the node network or normalize_obs: false")
    t0 = time.perf_counter()
    base = run / "model"
    if not (base / "model.zip").is_file():  # no evaluation kept a model: the current one
        base = run / "expert" / f"round{k}"
        _save_model_dir(model, normalizer, cfg, base, f"round{k}")
    teacher = f"rollout:learned:{base}"

    def make_teacher(env: gym.Env, seed: int) -> Any:
        return make_rollout(env, f"learned:{base}", seed=seed, **cfg.expert_teacher)

    new = imitation_mod.collect(
        teacher_envs(cfg),
        make_teacher,
        cfg.imitation_episodes,
        cfg.gamma,
        seed=cfg.seed + EXPERT_SEED + k * cfg.imitation_episodes,
        progress=progress,
        behaviour=_learner(model, cfg),
        workers=cfg.imitation_workers,
    )
    demos = new if demos is None else demos + new
    stats = _refit(model, demos, cfg, cfg.seed + 100 + k, progress)
    stats.update(
        round=k, teacher=teacher, teacher_options=dict(cfg.expert_teacher),
        new_samples=len(new), student_agreement=new.agreement,
        student_mean_return=new.mean_episode_return, steps_before=int(model.num_timesteps),
    )  # fmt: skip
    if eval_cb is not None:
        stats["eval_mean_reward"] = value = _evaluate(model, eval_cb, cfg)
        if value > eval_cb.best_mean_reward:
            eval_cb.best_mean_reward = value
            _save_model_dir(model, normalizer, cfg, run / "model", "best")
    stats["seconds"] = time.perf_counter() - t0
    return stats, demos


def _load_weights(model: Any, cfg: TrainConfig, normalizer: Any = None) -> None:
    """``cfg.init_model``'s policy weights into ``model`` (same algorithm and network), and
    with ``normalize_obs`` its observation statistics into ``normalizer``: the weights were
    trained on observations normalised by them."""
    src_dir = resolve_model_dir(str(cfg.init_model))
    meta = read_meta(src_dir)
    if meta.get("algo") != cfg.algo:
        raise ConfigError(
            f"init_model {cfg.init_model}: a {meta.get('algo')} model, this config trains "
            f"{cfg.algo}"
        )
    if bool(meta.get("normalized_obs")) != (normalizer is not None):
        raise ConfigError(
            f"init_model {cfg.init_model}: trained "
            f"{'with' if meta.get('normalized_obs') else 'without'} normalised observations, "
            f"this config {'normalises' if normalizer is not None else 'does not'}"
        )
    if normalizer is not None:
        _restore_normalizer(normalizer, src_dir / "vecnormalize.pkl")
    src = load_model(cfg.algo, src_dir / "model.zip")
    try:
        model.policy.load_state_dict(src.policy.state_dict())
    except RuntimeError as e:
        first = str(e).strip().splitlines()[:2]
        raise ConfigError(
            f"init_model {cfg.init_model}: its network is not this config's ({' '.join(first)})"
        ) from None


class Checkpoint:
    """``RUN/checkpoint``: the model (with its optimizer), ``state.json``, ``demos.npz`` and,
    with ``normalize_obs``, ``vecnormalize.pkl`` (the running observation statistics the
    weights were trained against), replaced whole (written beside, then renamed) so a run
    killed mid-write keeps the last."""

    def __init__(
        self, run: Path, model: Any, cfg: TrainConfig, eval_cb: Any, normalizer: Any = None
    ) -> None:
        self.run, self.model, self.cfg, self.eval_cb = run, model, cfg, eval_cb
        self.normalizer = normalizer
        self.demos: imitation_mod.Demonstrations | None = None

    def save(
        self, extra: dict[str, Any], demos: imitation_mod.Demonstrations | None = None
    ) -> None:
        """Write the checkpoint; ``demos``, when given, are kept for every later one too."""
        if demos is not None:
            self.demos = demos
        tmp = self.run / "checkpoint.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        self.model.save(tmp / "model.zip")
        if self.demos is not None:
            self.demos.save(tmp / "demos.npz")
        if self.normalizer is not None:
            self.normalizer.save(tmp / "vecnormalize.pkl")
        best = None if self.eval_cb is None else float(self.eval_cb.best_mean_reward)
        state = {
            "format": CHECKPOINT_FORMAT,
            "steps": int(self.model.num_timesteps),
            "total_steps": self.cfg.total_steps,
            "best_mean_reward": best if best is not None and np.isfinite(best) else None,
            "git_commit": git_commit(),
            "saved_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            **extra,
        }
        (tmp / "state.json").write_text(json.dumps(state, indent=2))
        old = self.run / "checkpoint.old"
        shutil.rmtree(old, ignore_errors=True)
        if (self.run / "checkpoint").exists():
            (self.run / "checkpoint").rename(old)
        tmp.rename(self.run / "checkpoint")
        shutil.rmtree(old, ignore_errors=True)


def _restore_normalizer(normalizer: VecNormalize, path: Path) -> None:
    """Continue from the checkpoint's observation statistics: weights trained on normalised
    observations act on garbage under fresh (zero-mean, unit) statistics."""
    if not path.is_file():
        raise ConfigError(
            f"{path.parent}: trained on normalised observations but has no vecnormalize.pkl "
            "(written by an older rlsched); its weights cannot be continued faithfully"
        )
    saved = VecNormalize.load(str(path), normalizer.venv)
    normalizer.obs_rms, normalizer.ret_rms = saved.obs_rms, saved.ret_rms


def _restore_evaluations(eval_cb: Any, path: Path, steps: int) -> None:
    """Keep the evaluation log of the run so far (up to the checkpoint) in ``evaluations.npz``,
    which the callback would otherwise overwrite with the resumed part alone."""
    if not path.is_file():
        return
    with np.load(path) as ev:
        keep = ev["timesteps"] <= steps
        eval_cb.evaluations_timesteps = [int(t) for t in ev["timesteps"][keep]]
        eval_cb.evaluations_results = [list(r) for r in ev["results"][keep]]
        eval_cb.evaluations_length = [list(r) for r in ev["ep_lengths"][keep]]


#: ``state.json``'s format tag.
CHECKPOINT_FORMAT = "rlsched-checkpoint/1"


def read_checkpoint(run: Path) -> dict[str, Any]:
    """The state of ``run``'s checkpoint; a clear error when there is none to resume from."""
    path = run / "checkpoint" / "state.json"
    try:
        state = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise ConfigError(
            f"{run}: no checkpoint to resume from ({path}: {e.__class__.__name__}); "
            "runs write one every checkpoint_freq env steps"
        ) from None
    if state.get("format") != CHECKPOINT_FORMAT:
        raise ConfigError(f"{path}: not a {CHECKPOINT_FORMAT} checkpoint")
    return dict(state)


class _AtBoundary(BaseCallback):
    """A callback that acts at a rollout boundary: the start of each rollout for on-policy
    algorithms (a checkpoint taken mid-rollout would lose the rollout's steps and shift every
    later rollout, so a resumed run would end on another step count than an uninterrupted
    one), each step otherwise. Subclasses define :meth:`_boundary`."""

    def __init__(self) -> None:
        super().__init__()
        self._on_policy = False
        self._go_on = True  # False stops training (at the next step)

    def _init_callback(self) -> None:
        self._on_policy = isinstance(self.model, OnPolicyAlgorithm)

    def _boundary(self) -> None:
        raise NotImplementedError

    def _on_rollout_start(self) -> None:
        if self._on_policy:
            self._boundary()

    def _on_step(self) -> bool:
        if not self._on_policy:
            self._boundary()
        return self._go_on


class CheckpointEvery(_AtBoundary):
    """Save a checkpoint at the first rollout boundary past each multiple of ``freq`` env
    steps (over all envs)."""

    def __init__(self, ckpt: Checkpoint, freq: int, state: Any) -> None:
        super().__init__()
        self.ckpt, self.freq, self.state = ckpt, freq, state
        self._next: int | None = None

    def _boundary(self) -> None:
        n = int(self.num_timesteps)
        if self._next is None:
            self._next = (n // self.freq + 1) * self.freq
        if n >= self._next:
            self.ckpt.save(self.state())
            self._next = (n // self.freq + 1) * self.freq


class StopAfter(_AtBoundary):
    """Stop training at the first rollout boundary after ``deadline`` (``time.perf_counter``)
    but the first (one update per sitting at least), after writing a checkpoint there.
    ``stopped``: the steps it holds."""

    def __init__(self, ckpt: Checkpoint, deadline: float, state: Any) -> None:
        super().__init__()
        self.ckpt, self.deadline, self.state = ckpt, deadline, state
        self.stopped: int | None = None
        self._boundaries = 0

    def _boundary(self) -> None:
        self._boundaries += 1
        if self._boundaries > 1 and self._go_on and time.perf_counter() >= self.deadline:
            self.ckpt.save(self.state())
            self.stopped, self._go_on = int(self.num_timesteps), False


def _write_csv(path: Path, rows: list[dict[str, float]]) -> None:
    keys = list(rows[0])
    lines = [",".join(keys)] + [",".join(f"{r.get(k, '')}" for k in keys) for r in rows]
    path.write_text("\n".join(lines) + "\n")
