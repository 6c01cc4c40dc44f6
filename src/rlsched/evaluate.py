"""Evaluate any policy on any env, and compare several on the same seeded episodes."""

from __future__ import annotations

import glob
import inspect
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import gymnasium as gym
import numpy as np

from rlsched.agents.models import read_meta
from rlsched.envs.args import env_class
from rlsched.envs.base import Direction, RlschedEnv, episode_value, main_metric_of
from rlsched.envs.make import make_env
from rlsched.errors import ConfigError, PolicyError
from rlsched.policies.base import Policy
from rlsched.policies.registry import expand_policies, make_policy
from rlsched.splits import overlap, shared_text
from rlsched.stats import MIN_EPISODES, iqm, paired, paired_seeds


@dataclass
class EpisodeResult:
    reward: float
    length: int
    metrics: dict[str, float]


@dataclass
class PolicyResult:
    """One leaderboard row; ``to_json`` gives the shape ``rlsched compare --json`` writes."""

    policy: str
    episodes: list[EpisodeResult] = field(default_factory=list)

    @property
    def rewards(self) -> np.ndarray:
        return np.array([e.reward for e in self.episodes])

    def _stat(self, fn: Any) -> dict[str, float]:
        keys = self.episodes[0].metrics.keys() if self.episodes else []
        out = {}
        for k in keys:
            col = np.array([e.metrics.get(k, np.nan) for e in self.episodes], dtype=float)
            # a metric no episode has (e.g. an optimality gap nobody computed) stays NaN quietly
            out[k] = float(fn(col)) if (~np.isnan(col)).any() else float("nan")
        return out

    def metric_means(self) -> dict[str, float]:
        """Mean of each metric over episodes, ignoring NaN (a metric an episode lacks)."""
        return self._stat(np.nanmean)

    def metric_stds(self) -> dict[str, float]:
        return self._stat(np.nanstd)

    def to_json(self) -> dict[str, Any]:
        r = self.rewards
        return {
            "policy": self.policy,
            "episodes": len(self.episodes),
            "mean_reward": float(r.mean()),
            "std_reward": float(r.std()),
            "metrics": self.metric_means(),
            "metrics_std": self.metric_stds(),
            "episode_rewards": [float(x) for x in r],
        }


#: ``on_episode_end(policy_name, episode_index, env)``: called after each finished episode,
#: before the next reset (the env still holds that episode's schedule).
EpisodeHook = Callable[[str, int, gym.Env], None]


def evaluate(
    policy: Policy,
    env: gym.Env,
    episodes: int,
    seed: int = 0,
    on_episode_end: EpisodeHook | None = None,
    policy_name: str | None = None,
) -> list[EpisodeResult]:
    """Run ``episodes`` episodes with seeds ``seed, seed + 1, ...``; the same seeds for every
    policy, so each policy meets exactly the same workloads. ``on_episode_end`` (if given) is
    called as ``on_episode_end(policy_name or policy.name, k, env)`` after episode ``k``."""
    base: Any = env.unwrapped  # an rlsched env: action_masks() and metrics()
    # a policy that never reads the observation (the env's state instead: most heuristics) is
    # stepped without one where the env builds none in ``advance`` (WorkflowOffloading,
    # LLMAutoscaling, KubeScheduling: the same episode, as a search's rollouts step it); not
    # one whose ``reads_observation`` may change as it plays (a property)
    blind = (
        type(base).advance is not RlschedEnv.advance
        and policy.reads_observation is False
        and not isinstance(getattr(type(policy), "reads_observation", None), property)
    )
    out: list[EpisodeResult] = []
    for k in range(episodes):
        obs, info = env.reset(seed=seed + k)
        policy.reset(seed + k)
        total, steps, done = 0.0, 0, False
        while not done:
            action = policy.act(obs, base.action_masks())
            if blind:
                obs = None
                reward, terminated, truncated, info = base.advance(action)
            else:
                obs, reward, terminated, truncated, info = env.step(action)
            total += float(reward)
            steps += 1
            done = terminated or truncated
        metrics = dict(info.get("metrics") or {})
        out.append(EpisodeResult(total, steps, metrics))
        if on_episode_end is not None:
            on_episode_end(policy_name or policy.name, k, env)
    return out


def compare(
    env_id: str,
    dataset: str | None,
    policies: str | Sequence[str],
    episodes: int = 5,
    seed: int = 0,
    env_kwargs: dict[str, Any] | None = None,
    progress: bool = False,
    on_episode_end: EpisodeHook | None = None,
    reference: str | None = None,
    paired_seed: int = 0,
    measured: Mapping[str, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Evaluate every policy on the same seeded episodes: ``{"env", "dataset", "results",
    "reference", "main_metric", ...}``.

    Each result but the reference's gains ``"paired"``: the per-episode differences of the
    env's main metric against ``reference`` (default: the best heuristic measured here), a 95%
    bootstrap interval, wins / ties / losses and the verdict (:mod:`rlsched.stats`). A
    ``learned:`` spec with a ``*`` (``learned:runs/x/seed*/model``) names several training
    seeds of one policy: one row aggregated over seeds (IQM, stratified bootstrap) with the
    per-seed rows under ``"seeds"``. ``clairvoyant`` and ``rollout`` run last, over the measured
    reference.
    With one episode there is no interval: no ``"paired"`` (the CLI refuses it).
    ``on_episode_end`` is passed to :func:`evaluate` (see :func:`gantt_hook`). ``measured``:
    rows :func:`policy_row` gave elsewhere for some of the specs (the same env arguments,
    dataset, episodes and seed; the demo measures a stage's rows in parallel), taken as they
    are."""
    if episodes < 1:
        raise ConfigError(f"--episodes {episodes}: at least 1 episode is needed")
    env = make_env(env_id, dataset, **(env_kwargs or {}))
    metric, direction = main_metric_of(env)
    names = expand_policies(policies if isinstance(policies, str) else ",".join(policies), env)
    if reference is not None and reference not in names:
        names.append(reference)  # the reference runs the same episodes as everything else
    # the oracle rolls out the measured best heuristic: evaluate everything else first
    names = [n for n in names if not _is_oracle(n)] + [n for n in names if _is_oracle(n)]
    results: list[dict[str, Any]] = []
    iterator: Any = names
    if progress:
        from rich.progress import track

        iterator = track(names, description="evaluating policies", transient=True)

    def run(spec: str, label: str | None = None) -> dict[str, Any]:
        return policy_row(spec, env, episodes, seed, on_episode_end, label)

    for name in iterator:
        if measured is not None and name in measured:
            row = measured[name]
        elif _is_oracle(name) and ":" not in name:
            base = reference or _best(results, direction, kinds=("heuristic",))
            row = run(f"{name}:{base}" if base else name, name)
        elif name.startswith("learned:") and "*" in name:
            row = _seed_group(name, run)
        else:
            row = run(name)
        results.append(row)
    ref = reference or _best(results, direction, kinds=("heuristic",))
    if ref is not None and episodes >= MIN_EPISODES:  # one episode gives no interval
        ref_row = next((r for r in results if r["policy"] == ref), None)
        if ref_row is None:
            raise ConfigError(
                f"--reference {ref!r} is not among the compared policies "
                f"({', '.join(r['policy'] for r in results)})"
            )
        for r in results:
            if r is ref_row:
                continue
            r["paired"] = _paired_row(r, ref_row, ref, metric, direction, paired_seed)
            for s in r.get("seeds", []):
                s["paired"] = _paired_row(s, ref_row, ref, metric, direction, paired_seed)
    ds = cast(RlschedEnv, env.unwrapped).dataset_name
    return {
        "env": env_id,
        "dataset": ds,
        "episodes": episodes,
        "seed": seed,
        "env_kwargs": dict(env_kwargs or {}),
        "main_metric": metric,
        "direction": direction,
        "reference": ref,
        "results": results,
    }


def policy_row(
    spec: str,
    env: gym.Env,
    episodes: int,
    seed: int = 0,
    on_episode_end: EpisodeHook | None = None,
    label: str | None = None,
) -> dict[str, Any]:
    """One row of :func:`compare`: ``spec`` built on ``env`` and played for ``episodes``
    seeded episodes; its rewards, metrics and per-episode values of the env's main metric."""
    metric, _ = main_metric_of(env)
    pol = make_policy(spec, env, seed=seed)
    res = PolicyResult(label or (pol.name if spec.startswith("learned:") else spec))
    res.episodes = evaluate(pol, env, episodes, seed, on_episode_end, res.policy)
    row = res.to_json()
    row["kind"] = getattr(pol, "category", "heuristic")
    row["episode_values"] = [episode_value(metric, e.reward, e.metrics) for e in res.episodes]
    if _is_oracle(spec):
        row["describe"] = pol.describe()
    return row


def _is_oracle(spec: str) -> bool:
    """``clairvoyant`` or ``rollout`` (over a base heuristic: they run after the heuristics,
    over the measured best unless a base is named)."""
    return spec.split(":", 1)[0] in ("clairvoyant", "rollout")


def _best(
    results: Sequence[dict[str, Any]], direction: str, kinds: Sequence[str]
) -> str | None:
    """The policy of ``kinds`` with the best mean main metric (None if there is none)."""
    rows = [r for r in results if r.get("kind") in kinds and np.isfinite(_mean(r))]
    if not rows:
        return None
    sign = 1.0 if direction == "higher" else -1.0
    return str(max(rows, key=lambda r: sign * _mean(r))["policy"])


def _mean(row: dict[str, Any]) -> float:
    v = np.asarray(row.get("episode_values", []), dtype=float)
    return float(np.mean(v)) if v.size and np.isfinite(v).all() else float("nan")


def _paired_row(
    row: dict[str, Any],
    ref_row: dict[str, Any],
    ref: str,
    metric: str,
    direction: Direction,
    seed: int,
) -> dict[str, Any]:
    b = np.asarray(ref_row["episode_values"], dtype=float)
    if "seed_values" in row:
        p = paired_seeds(
            np.asarray(row["seed_values"], dtype=float), b, direction=direction,
            reference=ref, metric=metric, seed=seed,
        )
    else:
        p = paired(
            row["episode_values"], b, direction=direction,
            reference=ref, metric=metric, seed=seed,
        )
    return p.to_json()


def _learned_metas(specs: Sequence[str]) -> list[tuple[str, dict[str, Any]]]:
    """``(spec, meta.json)`` of every model folder the ``learned:`` specs name (a glob: each
    match). A spec whose model is missing is skipped (playing it names the problem)."""
    out = []
    for spec in specs:
        if not spec.startswith("learned:"):
            continue
        pattern = spec.split(":", 1)[1].partition("?")[0]
        for p in sorted(glob.glob(pattern)) if "*" in pattern else [pattern]:
            try:
                out.append((spec, read_meta(p)))
            except (PolicyError, OSError, ValueError):
                continue
    return out


def check_not_trained_on(specs: Sequence[str], test: str, split_name: str = "default") -> None:
    """Refuse to judge a ``learned:`` model on a test set it was trained on: one trained under
    a named split (:data:`rlsched.splits.VARIANTS`, its meta's ``split``) judged on another
    split's test set, or one whose training datasets share data with ``test`` (those beside
    the first, ``train_datasets``; the first too when the model's split is not ``split_name``,
    as for a default-split model judged on a named split's test set)."""
    for spec, meta in _learned_metas(specs):
        trained_split = meta.get("split") or "default"
        if trained_split not in ("default", split_name):
            raise ConfigError(
                f"{spec} was trained under the split {trained_split!r}: judge it on that "
                f"split's test set (rlsched.splits), not on the {split_name!r} split's {test!r}"
            )
        datasets = list(meta.get("train_datasets") or ())
        if trained_split != split_name and meta.get("dataset"):
            datasets.insert(0, meta["dataset"])
        for d in datasets:
            if shared := overlap(d, test):
                raise ConfigError(
                    f"{spec} was trained on {d!r}, which shares {shared_text(shared)} with the "
                    f"test set {test!r}"
                )


def learned_observation_args(
    env_id: str, specs: Sequence[str], env_kwargs: dict[str, Any]
) -> dict[str, Any]:
    """The observation-only env arguments (the env class's ``observation_args``) that the
    ``learned:`` models among ``specs`` were trained with where ``env_kwargs`` differ: `rlsched
    results` sets them in a row, so that a model trained with features added plays the episodes
    the heuristics play (those arguments change no dynamics, mask or reward). Two models
    that need different values of one argument cannot share an env: ConfigError. A spec whose
    model is missing is skipped here (playing it names the problem)."""
    cls = env_class(env_id)
    params = inspect.signature(cls.__init__).parameters
    default = {k: params[k].default if k in params else None for k in cls.observation_args}
    need: dict[str, tuple[Any, str]] = {}
    for spec, meta in _learned_metas(specs if cls.observation_args else ()):
        trained = meta.get("env_kwargs") or {}
        for k in cls.observation_args:
            v = trained.get(k, default[k])
            if k in need and need[k][0] != v:
                raise ConfigError(
                    f"{need[k][1]} was trained with {k}={need[k][0]!r} and {spec} with "
                    f"{k}={v!r}: they need different observations, so judge them in "
                    "separate runs"
                )
            need[k] = (v, spec)
    return {k: v for k, (v, _) in need.items() if env_kwargs.get(k, default[k]) != v}


def _seed_group(spec: str, run: Callable[[str, str | None], dict[str, Any]]) -> dict[str, Any]:
    """Several training seeds of one learned policy (a glob): per-seed rows and one row whose
    statistics pool them (IQM of the main metric; paired with a stratified bootstrap)."""
    pattern, sep, query = spec.split(":", 1)[1].partition("?")  # ?anchor=...: every seed's
    paths = sorted(glob.glob(pattern))
    if not paths:
        raise ConfigError(f"{spec}: no model folder matches")
    if len(paths) == 1:  # one seed: a plain paired row (a stratified bootstrap needs seeds)
        return run(f"learned:{paths[0]}{sep}{query}", None)
    seeds = [run(f"learned:{p}{sep}{query}", f"learned:{p}{sep}{query}") for p in paths]
    vals = np.array([s["episode_values"] for s in seeds], dtype=float)
    rewards = np.array([s["episode_rewards"] for s in seeds], dtype=float)
    keys = seeds[0]["metrics"].keys()
    return {
        "policy": spec,
        "kind": "learned",
        "episodes": int(vals.size),
        "mean_reward": float(rewards.mean()),
        "std_reward": float(rewards.std()),
        "metrics": {k: float(np.nanmean([s["metrics"][k] for s in seeds])) for k in keys},
        "metrics_std": {k: float(np.nanstd([s["metrics"][k] for s in seeds])) for k in keys},
        "episode_rewards": [float(x) for x in rewards.mean(axis=0)],
        "episode_values": [float(x) for x in vals.mean(axis=0)],
        "seed_values": vals.tolist(),
        "iqm": float(iqm(vals.ravel())),
        "seeds": seeds,
    }


def safe_filename(name: str) -> str:
    """A policy name as a file stem: ``learned:runs/x/model`` -> ``learned_runs_x_model``."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._")
    return stem or "policy"


def ci95(std: float, n: int) -> float:
    """Half-width of a normal-approximation 95% confidence interval of a mean."""
    return 1.96 * std / math.sqrt(n) if n > 1 else float("nan")


def write_json(report: dict[str, Any], path: str | Path) -> None:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(report, indent=2))
