"""Training a departure model (``algo: departures``): a base heuristic that a network, reading
the whole workflow, lets leave its choice where a search teacher would gain from it.

1. **Labels.** The base (``imitation_policy``, computed from the observation: ``peft``) plays
   ``imitation_episodes`` episodes of ``dataset``; at every decision the search teacher (the
   rollout over the base, :func:`rlsched.policies.registry.make_rollout` with
   ``expert_teacher``'s options) values each valid server. A *departure* is the best server
   where it beats the base's server by at least ``departure_min_gain`` of the base's value.
   ``departure_teacher_base`` lets the teacher's rollouts continue with another policy (a
   departure model: each server valued under the student's own play, policy iteration).
   Episodes are collected in chunks of :data:`CHUNK` under ``RUN/teacher/`` (``--resume`` and a
   rerun reuse them: a long collection spans several sittings; ``labels.json`` beside them
   says what made them, and a config that would make other ones is refused). With
   ``departure_behaviour`` a departure model acts instead of the base and the teacher labels
   the states it reaches (DAgger); ``departure_label_runs`` adds earlier runs' labels to
   this run's.
2. **Fit.** :class:`~rlsched.agents.dag_net.DagNet` (fresh, or ``init_model``'s: a warm
   start) by binary cross-entropy over the candidate
   servers (valid, not the base's) on the departure label, or (``departure_target: gain``) by
   a Huber loss on each candidate's relative gain (:func:`gain_targets`; with
   ``departure_gate``, capped at 0 where the teacher's own gate kept the base's server),
   stopped early on a tenth of the training *workflows* kept aside
   (:func:`~rlsched.agents.dag_net.fit_dag_net`).
   ``departure_plan`` adds PEFT's schedule of the rest of the workflow to its inputs.
3. **Threshold.** The policy departs to its top-scored candidate where that score clears a
   threshold. Candidates: the quantiles ``departure_quantiles`` of the top scores over the
   training decisions, and never (the base alone). Each plays the same ``eval_episodes``
   validation episodes of ``eval_dataset`` (seeds ``seed + 10,000 + k``); the highest mean
   return is kept (equal ones: the higher threshold). Never chosen on test data.

With ``departure_familiar`` the model also carries a familiarity guard (:func:`familiarity_of`,
:mod:`rlsched.policies.familiarity`), written before 3., so the threshold is chosen as the
guarded policy plays.

With ``departure_members`` nothing is collected or fitted: the models named there are joined
into one (:func:`join_members`, an ensemble) and only its threshold is chosen, as in 3.

The model folder holds ``dagnet.npz`` (:meth:`DagNet.save`) and ``meta.json`` (``algo``
``departures``, the base and the threshold); ``learned:PATH`` plays it
(:class:`rlsched.policies.departures.DeparturePolicy`).
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any

import numpy as np

from rlsched.agents.dag_net import (
    PLAN_KEYS,
    REQUIRED_KEYS,
    DagNet,
    dag_inputs_of_rows,
    fit_dag_net,
    torch_scores,
)
from rlsched.agents.models import MODEL_FORMAT
from rlsched.errors import ConfigError
from rlsched.train import imitation as imitation_mod
from rlsched.train.config import TrainConfig
from rlsched.train.envs import EVAL_SEED, TEACHER_SEED, single_env, teacher_envs

#: episodes per saved chunk of teacher labels
CHUNK = 250
#: decisions whose inputs are built at once: the float64 intermediates of 32,768 decisions of
#: 64-task workflows take GBs beside the whole training set's inputs and observations
INPUT_BATCH = 4096
DEPARTURES = "departures"


def rollout_base(cfg: TrainConfig) -> str:
    """The policy the teacher's rollouts continue with after each candidate server."""
    return cfg.departure_teacher_base or cfg.imitation_policy or ""


def base_choice(cfg: TrainConfig) -> Any:
    """The base heuristic's choice from an observation alone (what the served policy computes)."""
    from rlsched.policies.learned import OBSERVED_HEURISTICS

    known = OBSERVED_HEURISTICS.get(cfg.env_id, {})
    if cfg.imitation_policy not in known:
        raise ConfigError(
            f"algo departures: imitation_policy is the base heuristic, computed from the "
            f"observation; {cfg.env_id} has {', '.join(known) or 'none'}, not "
            f"{cfg.imitation_policy!r}"
        )
    return known[cfg.imitation_policy]


#: what the teacher's chunks were collected with (:func:`collect_labels`), beside them
LABELS_RECORD = "labels.json"
#: the config fields that decide a chunk's labels (not ``imitation_episodes``: chunk ``k``
#: holds the same episodes whatever the total, and its file name says how many)
LABEL_FIELDS = (
    "env_id", "dataset", "train_datasets", "env_kwargs", "imitation_policy",
    "imitation_every_dataset", "gamma", "seed", "expert_teacher", "departure_behaviour",
    "departure_teacher_base",
)  # fmt: skip


def collect_labels(
    cfg: TrainConfig, run: Path, progress: bool = True
) -> imitation_mod.Demonstrations:
    """The teacher's values of every valid server on the base's episodes (module docstring),
    chunk by chunk, reused when present; chunks collected with another config
    (:data:`LABEL_FIELDS`, recorded in :data:`LABELS_RECORD`) are refused, naming the field."""
    from rlsched.policies.registry import make_rollout

    earlier = label_folders(cfg)  # refused before anything is collected
    base = base_choice(cfg)
    behaviour = base
    if cfg.departure_behaviour:
        from rlsched.policies.departures import DeparturePolicy

        student = DeparturePolicy(cfg.departure_behaviour)
        env = single_env(cfg, cfg.eval_dataset, cfg.seed + EVAL_SEED)
        student.check_env(env.unwrapped)  # the keys it reads, its server count
        env.close()
        behaviour = student.act
    options = dict(cfg.expert_teacher)

    def make_teacher(env: Any, seed: int) -> Any:
        return make_rollout(env, rollout_base(cfg), seed=seed, **options)

    folder = run / "teacher"
    folder.mkdir(parents=True, exist_ok=True)
    made = folder / LABELS_RECORD
    mine = {k: getattr(cfg, k) for k in LABEL_FIELDS}
    if any(folder.glob("chunk*.npz")):
        if made.is_file():
            imitation_mod.refuse_other_labels(made, mine, folder)
        elif progress:  # collected before the record existed: taken as this config's
            print(f"{folder}: no {LABELS_RECORD}; its chunks are taken as this config's labels")
    if not made.is_file():
        made.write_text(json.dumps(mine, indent=1) + "\n")
    parts: list[imitation_mod.Demonstrations] = []
    for k in range(math.ceil(cfg.imitation_episodes / CHUNK)):
        n = min(CHUNK, cfg.imitation_episodes - k * CHUNK)
        path = folder / f"chunk{k:03d}_{n}.npz"
        if path.is_file():
            part = imitation_mod.Demonstrations.load(path)
        else:
            t0 = time.perf_counter()
            part = imitation_mod.collect(
                teacher_envs(cfg), make_teacher, n, cfg.gamma,
                seed=cfg.seed + TEACHER_SEED + k * CHUNK, progress=progress,
                behaviour=behaviour, workers=cfg.imitation_workers,
            )  # fmt: skip
            part.save(path)
            if progress:
                print(f"teacher chunk {k}: {n} episodes, {time.perf_counter() - t0:.0f} s")
        parts.append(part)
    for other in earlier:
        parts += [imitation_mod.Demonstrations.load(p) for p in sorted(other.glob("chunk*.npz"))]
    return imitation_mod.Demonstrations.concat(parts)


def label_folders(cfg: TrainConfig) -> list[Path]:
    """The ``teacher/`` folders of ``departure_label_runs`` (a run folder or the folder
    itself); a missing one, or one without chunks, is refused."""
    out = []
    for run in cfg.departure_label_runs:
        p = Path(run)
        folder = p / "teacher" if (p / "teacher").is_dir() else p
        if not any(folder.glob("chunk*.npz")):
            raise ConfigError(f"departure_label_runs: no teacher labels (chunk*.npz) in {folder}")
        out.append(folder)
    return out


def training_datasets(cfg: TrainConfig) -> list[str]:
    """Every dataset whose workflows the labels came from: ``dataset`` and ``train_datasets``
    of the config and of each ``departure_label_runs`` run (its ``run.json`` config), in order,
    each once."""
    out = [cfg.dataset, *cfg.train_datasets]
    for teacher in label_folders(cfg):  # each run's teacher/ folder: the run is its parent
        record = teacher.parent / "run.json"
        if not record.is_file():
            raise ConfigError(f"departure_familiar: {record} is missing (the label run's config)")
        other = json.loads(record.read_text())["config"]
        out += [other["dataset"], *other.get("train_datasets", [])]
    return list(dict.fromkeys(d for d in out if d))


def familiarity_of(cfg: TrainConfig) -> dict[str, Any]:
    """The familiarity guard of ``departure_familiar`` (its ``meta.json`` record): the profile
    of every workflow of :func:`training_datasets` (seen in PEFT's play, seeds ``cfg.seed``
    on) and their radius (:func:`~rlsched.policies.familiarity.calibrate`)."""
    from rlsched.envs.make import make_env
    from rlsched.policies.familiarity import calibrate, dataset_profiles

    names = training_datasets(cfg)
    def make(dataset: str) -> Any:
        return make_env(cfg.env_id, dataset, **cfg.env_kwargs)

    groups = {d: dataset_profiles(make, d, cfg.seed) for d in names}
    return calibrate(groups).to_meta(names)


def vet_guard(
    cfg: TrainConfig, model: Path, threshold: float | str, progress: bool = False
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """``departure_vet_datasets``: the model's guard (its meta's ``familiar``) vetted by its
    play at ``threshold`` beside the base on those workloads (each episode's main metric
    relative to the base's, less 1, negated where higher is better: below 0 where the
    departures paid; :func:`rlsched.policies.familiarity.vet`); returns the
    vetted record and, per workload, its episodes' values and its workflows' nearest training
    workflow (None: beyond the radius)."""
    from rlsched.agents.models import read_meta
    from rlsched.envs.make import make_env
    from rlsched.evaluate import compare
    from rlsched.policies.familiarity import Familiarity, dataset_profiles, vet

    record = read_meta(model)["familiar"]
    guard = Familiarity.from_meta(record)
    kw = {**cfg.env_kwargs, **cfg.departure_vet_env_kwargs}
    seed = cfg.seed + 30_000 if cfg.departure_vet_seed is None else cfg.departure_vet_seed
    spec = f"learned:{model}?threshold={threshold}"
    outcomes, rows = [], []
    for data in cfg.departure_vet_datasets:
        rep = compare(cfg.env_id, data, [cfg.imitation_policy or "", spec],
                      episodes=cfg.departure_vet_episodes, seed=seed, env_kwargs=kw)  # fmt: skip
        got = {r["policy"]: np.asarray(r["episode_values"], float) for r in rep["results"]}
        rel = got[spec] / got[cfg.imitation_policy or ""] - 1.0
        values = (rel if rep["direction"] == "lower" else -rel).tolist()  # below 0: it paid
        profiles = dataset_profiles(lambda x: make_env(cfg.env_id, x, **kw), data, seed)
        outcomes.append((profiles, values))
        rows.append({"dataset": data, "values": values,
                     "nearest": [guard.nearest(p) for p in profiles]})  # fmt: skip
        if progress:
            print(f"vetting {data}: {np.mean(values):+.4f} of the base's {rep['main_metric']}")
    vetted = vet(guard, outcomes)
    return vetted.to_meta(record["datasets"]), rows


def departure_labels(
    demos: imitation_mod.Demonstrations, base: Any, min_gain: float, gate: bool = False
) -> dict[str, np.ndarray]:
    """Per labelled decision: ``base`` (the base's server), ``y (B, N)`` (1 on the teacher's
    departure), ``on (B, N)`` (the candidates: valued, valid, not the base's), ``gain`` (each
    server's value less the base's; -inf where unvalued), ``base_value`` and ``gated`` (where
    ``gate`` capped the gains). Decisions where the teacher valued fewer than two servers, or
    the base's value is 0 or unknown, have no candidates. ``gate`` (``departure_gate``): where
    the teacher's own action was the base's server, every gain is capped at 0."""
    if demos.values is None:
        raise ConfigError("algo departures: the teacher gave no action values to label with")
    obs = demos.obs
    assert isinstance(obs, dict)
    n = len(demos)
    b = np.array([base({k: v[i] for k, v in obs.items()}, demos.masks[i]) for i in range(n)])
    q = demos.values.astype(np.float64)
    i = np.arange(n)
    qb = q[i, b]
    keep = (np.isfinite(q).sum(1) >= 2) & np.isfinite(qb) & (np.abs(qb) > 1e-9)
    gain = np.where(np.isfinite(q), q - np.where(np.isfinite(qb), qb, 0.0)[:, None], -np.inf)
    gated = np.zeros(n, bool)
    if gate:  # the teacher kept the base's server: a higher mean there was noise to it
        gated = (np.asarray(demos.actions) == b) & (gain.max(1) > 0)
        gain[gated] = np.minimum(gain[gated], 0.0)
    best = gain.argmax(1)
    rel = gain[i, best] / np.maximum(np.abs(qb), 1e-9)
    y = np.zeros(q.shape, np.float32)
    dep = keep & (rel >= min_gain) & (best != b)
    y[i[dep], best[dep]] = 1.0
    on = np.isfinite(q) & demos.masks.astype(bool) & keep[:, None]
    on[i, b] = False
    return {"base": b, "y": y, "on": on, "gain": gain, "base_value": qb, "gated": gated}


def gain_targets(
    lab: dict[str, np.ndarray], rows: np.ndarray, clip: float, floor: float | None = None
) -> np.ndarray:
    """``departure_target: gain``: each candidate server's gain over the base's server as a
    share of the base's value (:func:`departure_labels`' ``gain`` over ``|value|``), clipped
    to ``[-floor, clip]`` (``floor`` None: ``clip``); 0 where the server is no candidate (the
    loss skips those)."""
    gain = lab["gain"][rows]
    on = lab["on"][rows]
    base = np.abs(lab["base_value"][rows])[:, None]
    rel = np.where(on, gain, 0.0) / np.maximum(base, 1e-9)
    return np.clip(rel, -(clip if floor is None else floor), clip).astype(np.float32)


def workflow_groups(obs: dict[str, np.ndarray], rows: np.ndarray | None = None) -> np.ndarray:
    """A workflow template id per decision (its tasks' work, demands and data, and its links)
    of ``rows`` (None: every decision): the fit keeps whole workflows aside, so its early stop
    reads workflows it did not fit. Ids number the distinct templates in the byte order of
    their keys; the keys are built :data:`INPUT_BATCH` decisions at a time (the links of a
    whole training set of 64-task workflows, copied at once, take GBs)."""
    tasks, links = obs["dag_tasks"], obs["dag_links"]
    rows = np.arange(len(tasks)) if rows is None else np.asarray(rows)
    first: dict[bytes, int] = {}
    seen = np.empty(len(rows), np.int64)
    for i in range(0, len(rows), INPUT_BATCH):
        pick = rows[i : i + INPUT_BATCH]
        key = np.concatenate(
            [tasks[pick][:, :, :4].reshape(len(pick), -1), links[pick].reshape(len(pick), -1)],
            1,
        ).astype(np.float32)
        for j, k in enumerate(key):
            seen[i + j] = first.setdefault(k.tobytes(), len(first))
    rank = np.empty(len(first), np.int64)  # first-seen id -> position in byte order
    rank[[first[k] for k in sorted(first)]] = np.arange(len(first))
    return rank[seen]


def play_thresholds(
    cfg: TrainConfig, model_dir: Path, thresholds: list[float]
) -> list[dict[str, Any]]:
    """Each threshold's mean return (and departures; with a familiarity guard, the decisions
    it kept on the base) over the same ``eval_episodes`` validation episodes of
    ``eval_dataset`` (seeds ``seed + 10,000 + k``)."""
    from rlsched.policies.departures import DeparturePolicy

    env = single_env(cfg, cfg.eval_dataset, cfg.seed + EVAL_SEED)
    base: Any = env.unwrapped
    out = []
    for t in thresholds:
        pol = DeparturePolicy(model_dir, threshold=t)
        pol.check_env(base)
        returns = []
        for k in range(cfg.eval_episodes):
            obs, _ = env.reset(seed=cfg.seed + EVAL_SEED + k)
            done, total = False, 0.0
            while not done:
                obs, r, term, trunc, _ = env.step(pol.act(obs, base.action_masks()))
                total += float(r)
                done = term or trunc
            returns.append(total)
        out.append({"threshold": _number(t), "mean_return": float(np.mean(returns)),
                    "departures": pol.departures,
                    **({"guarded": pol.guarded} if pol.guard is not None else {})})  # fmt: skip
    env.close()
    return out


def _save(
    net: DagNet | None, cfg: TrainConfig, dest: Path, threshold: float, extra: dict
) -> None:
    """The model folder's ``meta.json``, and ``net``'s weights (None: written already)."""
    from rlsched.runtime import git_commit, versions

    dest.mkdir(parents=True, exist_ok=True)
    if net is not None:
        net.save(dest / "dagnet.npz")
    meta = {
        "format": MODEL_FORMAT, "name": "best", "algo": DEPARTURES, "env_id": cfg.env_id,
        "env_kwargs": cfg.env_kwargs, "dataset": cfg.dataset, "normalized_obs": False,
        "residual": None, "seed": cfg.seed, "base": cfg.imitation_policy,
        "threshold": _number(threshold), **extra,
        "versions": versions(), "git_commit": git_commit(),
        "saved_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }  # fmt: skip
    (dest / "meta.json").write_text(json.dumps(meta, indent=2))


def train_departures(cfg: TrainConfig, run: Path, progress: bool = True) -> dict[str, Any]:
    """The whole recipe (module docstring); writes ``RUN/model`` and ``RUN/run.json`` and
    returns the run record."""

    t0 = time.perf_counter()
    if cfg.departure_members:
        return join_members(cfg, run)
    _check_keys(cfg, cfg.departure_plan)
    start = _start_net(cfg) if cfg.init_model else None
    demos = collect_labels(cfg, run, progress)
    t_collect = time.perf_counter() - t0
    lab = departure_labels(demos, base_choice(cfg), cfg.departure_min_gain, cfg.departure_gate)
    obs = demos.obs
    assert isinstance(obs, dict)
    rows = np.flatnonzero(lab["on"].any(1))  # decisions with a candidate to depart to
    x = dag_inputs_of_rows(obs, rows, lab["base"][rows], cfg.departure_relative_data,
                           cfg.departure_plan, batch=INPUT_BATCH)  # fmt: skip
    y, on = lab["y"][rows], lab["on"][rows]
    if cfg.departure_target == "gain":
        y = gain_targets(lab, rows, cfg.departure_gain_clip, cfg.departure_gain_floor)
    groups = workflow_groups(obs, rows)
    labelled = {"episodes": demos.episodes, "decisions": len(demos)}
    del demos, obs  # the fit reads x alone: a million decisions' observations take GBs
    rng = np.random.default_rng(cfg.seed)
    own = np.unique(groups)
    aside = np.isin(groups, rng.choice(own, max(1, len(own) // 10), replace=False))
    fit, held = np.flatnonzero(~aside), np.flatnonzero(aside)
    t1 = time.perf_counter()
    net, curve = fit_dag_net(
        x, y, on, fit, held, epochs=cfg.imitation_epochs, patience=cfg.departure_patience,
        lr=cfg.imitation_lr, hidden=cfg.departure_hidden, rounds=cfg.departure_rounds,
        seed=cfg.seed, relative_data=cfg.departure_relative_data, plan=cfg.departure_plan,
        objective="huber" if cfg.departure_target == "gain" else "bce", start=start,
        progress=(lambda e, v: print(f"fit epoch {e}: kept-aside loss {v:.4f}")) if progress
        else None,
    )  # fmt: skip
    t_fit = time.perf_counter() - t1
    top = np.where(on, torch_scores(net, x), -np.inf).max(1)[fit]
    thresholds = [float(v) for v in np.quantile(top[np.isfinite(top)], cfg.departure_quantiles)]
    model = run / "model"
    guard: dict[str, Any] = {"familiar": familiarity_of(cfg)} if cfg.departure_familiar else {}
    _save(net, cfg, model, float("inf"), guard)
    t2 = time.perf_counter()
    table, kept = choose_threshold(cfg, model, cfg.departure_thresholds or thresholds)
    t_choose = time.perf_counter() - t2
    if cfg.departure_vet_datasets:
        guard["familiar"], guard["vetting"] = vet_guard(cfg, model, kept["threshold"], progress)
    teacher = {
        **labelled,
        "decisions_with_candidates": len(rows),
        "departures": int(lab["y"].sum()),
        **({"gated": int(lab["gated"].sum())} if cfg.departure_gate else {}),
        "workflows": len(own), "workflows_kept_aside": len(np.unique(groups[aside])),
        "behaviour": cfg.departure_behaviour or cfg.imitation_policy,
        "rollout_base": rollout_base(cfg),
        "label_runs": list(cfg.departure_label_runs), "init_model": cfg.init_model,
    }  # fmt: skip
    _save(net, cfg, model, float(kept["threshold"]),
          {**guard, "threshold_choice": table, "teacher": teacher})  # fmt: skip
    return _record(cfg, run, table, kept, {
        "teacher": teacher, "fit": {"epochs": len(curve), "kept_aside_loss": curve},
        **({"vetting": guard["vetting"]} if "vetting" in guard else {}),
        "seconds": {"teacher": t_collect, "fit": t_fit, "threshold": t_choose,
                    "total": time.perf_counter() - t0},
    })  # fmt: skip


def _record(
    cfg: TrainConfig, run: Path, table: list[dict[str, Any]], kept: dict[str, Any],
    extra: dict[str, Any],
) -> dict[str, Any]:
    """The run's record (``RUN/run.json``, and ``RUN/metrics.json``): the config, versions and
    commit, the threshold's choice and ``extra``."""
    from rlsched.runtime import git_commit, versions

    record = {
        "config": cfg.to_dict(), "seed": cfg.seed, "versions": versions(),
        "git_commit": git_commit(), "steps": 0, **extra,
        "threshold_choice": table, "threshold": kept["threshold"],
        "best_eval_mean_reward": kept["mean_return"],
        "finished_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }  # fmt: skip
    (run / "run.json").write_text(json.dumps(record, indent=2))
    (run / "metrics.json").write_text(
        json.dumps({"best_eval_mean_reward": kept["mean_return"], "steps": 0}, indent=2)
    )
    return record


def choose_threshold(
    cfg: TrainConfig, model: Path, thresholds: list[float]
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Each of ``thresholds`` and never departing played (:func:`play_thresholds`), and the
    kept one: the highest mean return; equal ones, the higher threshold (fewer departures)."""
    table = play_thresholds(cfg, model, sorted({*map(float, thresholds), float("inf")}))
    return table, max(table, key=lambda r: (r["mean_return"], float(r["threshold"])))


def join_members(cfg: TrainConfig, run: Path) -> dict[str, Any]:
    """``departure_members`` joined into ``RUN/model`` (:func:`copy_members`), the threshold of
    their mean score chosen among ``departure_thresholds``; writes ``RUN/run.json`` and
    returns the run record."""
    t0 = time.perf_counter()
    model = run / "model"
    members, plan = copy_members(cfg.departure_members, model, str(cfg.imitation_policy))
    joined = [{"model": ref, "threshold": m["offset"]}
              for ref, m in zip(cfg.departure_members, members, strict=True)]  # fmt: skip
    _check_keys(cfg, plan)
    _save(None, cfg, model, float("inf"), {"members": members})
    table, kept = choose_threshold(cfg, model, cfg.departure_thresholds)
    _save(None, cfg, model, float(kept["threshold"]),
          {"members": members, "joined": joined, "threshold_choice": table})  # fmt: skip
    seconds = time.perf_counter() - t0
    return _record(cfg, run, table, kept,
                   {"joined": joined, "seconds": {"threshold": seconds, "total": seconds}})


def copy_members(
    refs: list[str], dest: Path, base: str
) -> tuple[list[dict[str, Any]], bool]:
    """Each departure model of ``refs`` (folders, runs or ``zoo/NAME``) has its network copied
    into ``dest`` (``dagnet.npz``, ``member1.npz``, ...): the meta's ``members`` (each file and
    its offset, the model's own threshold), and whether a network reads PEFT's schedule.
    Refused: another algorithm, a model that joins networks itself, another base, a model
    that never departs."""
    from rlsched.agents.dag_net import DagScorer
    from rlsched.agents.models import read_meta
    from rlsched.policies.departures import WEIGHTS
    from rlsched.zoo import resolve_model_dir

    dest.mkdir(parents=True, exist_ok=True)
    members, plan = [], False
    for k, ref in enumerate(refs):
        folder = resolve_model_dir(ref)
        meta = read_meta(folder)
        if meta.get("algo") != DEPARTURES:
            raise ConfigError(f"departure_members: {ref} is a {meta.get('algo')} model")
        if meta.get("members"):
            raise ConfigError(f"departure_members: {ref} joins networks itself; name them")
        if meta.get("base") != base:
            raise ConfigError(f"departure_members: {ref} departs from {meta.get('base')!r}, "
                              f"this config's base is {base!r}")  # fmt: skip
        offset = float(meta["threshold"])
        if not np.isfinite(offset):
            raise ConfigError(f"departure_members: {ref}'s threshold is never to depart")
        name = WEIGHTS if k == 0 else f"member{k}.npz"
        (dest / name).write_bytes((folder / WEIGHTS).read_bytes())
        plan = plan or DagScorer.load(dest / name).plan
        members.append({"weights": name, "offset": offset})
    return members, plan


def _check_keys(cfg: TrainConfig, plan: bool) -> None:
    """Refuse an env whose observation lacks what the network reads."""
    wanted = (*REQUIRED_KEYS, *PLAN_KEYS) if plan else REQUIRED_KEYS
    missing = [k for k in wanted if k not in _observation_keys(cfg)]
    if missing:
        raise ConfigError(
            f"algo departures reads {', '.join(missing)}: {cfg.env_id} with env_kwargs "
            f"{cfg.env_kwargs} does not observe them"
        )


def _start_net(cfg: TrainConfig) -> DagNet:
    """``init_model``'s network, refused unless it is a departure model of this config's
    width and rounds."""
    from rlsched.agents.models import read_meta
    from rlsched.policies.departures import WEIGHTS
    from rlsched.zoo import resolve_model_dir

    folder = resolve_model_dir(str(cfg.init_model))
    algo = read_meta(folder).get("algo")
    if algo != DEPARTURES:
        raise ConfigError(f"init_model {cfg.init_model}: a {algo} model, this config trains "
                          "departures")  # fmt: skip
    net = DagNet.from_file(folder / WEIGHTS)
    have = (net.hidden, len(net.rounds), net.relative_data, net.plan)
    want = (cfg.departure_hidden, cfg.departure_rounds, cfg.departure_relative_data,
            cfg.departure_plan)  # fmt: skip
    if have != want:
        raise ConfigError(
            f"init_model {cfg.init_model}: its network has (width, rounds, relative data, "
            f"plan) = {have}, this config's {want}"
        )
    return net


def _number(v: float) -> float | str:
    """A threshold as JSON writes it: ``"inf"`` for never departing."""
    return v if np.isfinite(v) else "inf"


def _observation_keys(cfg: TrainConfig) -> set[str]:
    """The observation keys of the env the config trains in (one env on the validation set)."""

    env = single_env(cfg, cfg.eval_dataset, cfg.seed + EVAL_SEED)
    keys = set(getattr(env.observation_space, "spaces", {}) or {})
    env.close()
    return keys
