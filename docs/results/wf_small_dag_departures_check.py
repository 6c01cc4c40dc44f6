"""Why rounds W8 and W9's departure networks chose never to depart (descriptive; validation
and training data only, nothing chosen on it).

1. W8 (one world, ``seed=15``): on the decisions of the 454 training workflows its fit kept
   aside, the teacher's values of the departures it would take at each threshold of its
   choice (how many, their mean gain relative to the base's value, the share that gain).
2. W8: the share of decisions where it would depart (the threshold of its 90% quantile) on
   PEFT's play of 200 new episodes of its own pool (seeds 50,000+; workflows it partly
   trained on) and of 200 of another pool (``seed=16``, its validation: seeds 10,000+).
3. W9 (24 worlds): played on ``seed=16``'s 200 validation episodes at the threshold of its
   second quantile (80 departures), the rollout teacher (W9's options) values each departure
   at the state it was taken; and the episodes with a departure against PEFT's return.

    python docs/results/wf_small_dag_departures_check.py   (needs both runs' folders)

Writes ``docs/results/wf_small_dag_departures_check.json``.
"""

import json
from pathlib import Path

import numpy as np
import yaml

from rlsched.agents.dag_net import DagScorer, dag_inputs
from rlsched.policies.departures import DeparturePolicy
from rlsched.policies.registry import make_rollout
from rlsched.train import departures as dep
from rlsched.train.config import TrainConfig
from rlsched.train.envs import EVAL_SEED, single_env

ROOT = Path(__file__).resolve().parents[2]
W8 = ROOT / "runs/zoo/workflow_offloading_small_dag_departures/seed0"
W9 = ROOT / "runs/zoo/workflow_offloading_small_dag_worlds/seed0"
OUT = ROOT / "docs/results/wf_small_dag_departures_check.json"


def config(run: Path) -> TrainConfig:
    return TrainConfig.from_dict(yaml.safe_load((run / "config.yaml").read_text()))


def thresholds(run: Path) -> list[float]:
    meta = json.loads((run / "model/meta.json").read_text())
    return [float(r["threshold"]) for r in meta["threshold_choice"] if r["threshold"] != "inf"]


def kept_aside_gains(run: Path) -> list[dict]:
    """Part 1: the split the trainer made (same seed), the teacher's values of the departures."""
    cfg = config(run)
    demos = dep.collect_labels(cfg, run, False)
    lab = dep.departure_labels(demos, dep.base_choice(cfg), cfg.departure_min_gain)
    obs = demos.obs
    assert isinstance(obs, dict)
    rows = np.flatnonzero(lab["on"].any(1))
    sub = {k: v[rows] for k, v in obs.items()}
    on = lab["on"][rows]
    groups = dep.workflow_groups(sub)
    rng = np.random.default_rng(cfg.seed)
    own = np.unique(groups)
    aside = np.isin(groups, rng.choice(own, max(1, len(own) // 10), replace=False))
    scorer = DagScorer.load(run / "model/dagnet.npz")
    scores = scorer.scores(dag_inputs(sub, lab["base"][rows], scorer.relative_data))
    s = np.where(on, scores, -np.inf)
    top, arg = s.max(1), s.argmax(1)
    i = np.arange(len(rows))
    gain = lab["gain"][rows][i, arg]
    rel = gain / np.abs(demos.values[rows, lab["base"][rows]])
    out = []
    for t in thresholds(run):
        for part, m in (("fitted", ~aside), ("kept_aside", aside)):
            sel = m & (top >= t)
            out.append({"threshold": t, "decisions": part, "departures": int(sel.sum()),
                        "share": float(sel.sum() / m.sum()),
                        "mean_relative_gain": float(rel[sel].mean()) if sel.any() else None,
                        "share_gaining": float((rel[sel] > 0).mean()) if sel.any() else None,
                        "sum_gain": float(gain[sel].sum())})  # fmt: skip
    return out


def departing_share(run: Path, dataset: str, seeds: range, threshold: float) -> float:
    """Part 2: the share of PEFT's decisions (with two or more valid servers) where the model
    would depart at ``threshold``."""
    cfg = config(run)
    env = single_env(cfg, dataset, seeds[0])
    u = env.unwrapped
    pol = DeparturePolicy(run / "model", threshold=threshold)
    n = hits = 0
    for seed in seeds:
        obs, _ = env.reset(seed=seed)
        done = False
        while not done:
            m = u.action_masks()
            b = int(pol._base(obs, m))
            if m.sum() >= 2:
                z = np.where(m, pol.scores(obs, b), -np.inf)
                z[b] = -np.inf
                n, hits = n + 1, hits + int(z.max() >= threshold)
            obs, _, term, trunc, _ = env.step(b)
            done = term or trunc
    return hits / n


def played_departures(run: Path, threshold: float) -> dict:
    """Part 3: the teacher's value of each departure taken in play, and the episodes' returns."""
    cfg = config(run)
    env = single_env(cfg, cfg.eval_dataset, cfg.seed + EVAL_SEED)
    u = env.unwrapped
    pol = DeparturePolicy(run / "model", threshold=threshold)
    teacher = make_rollout(env, "peft", seed=0, **cfg.expert_teacher)
    rel, diff = [], []
    for k in range(cfg.eval_episodes):
        seed = cfg.seed + EVAL_SEED + k
        returns = []
        for depart in (False, True):
            obs, _ = env.reset(seed=seed)
            teacher.reset(seed=seed)
            done, total, before = False, 0.0, pol.departures
            while not done:
                m = u.action_masks()
                b = int(pol._base(obs, m))
                a = pol.act(obs, m) if depart else b
                if a != b:
                    teacher.act(obs, m)
                    q = teacher.action_values()
                    rel.append((q[a] - q[b]) / max(abs(q[b]), 1e-9))
                obs, r, term, trunc, _ = env.step(a)
                total += float(r)
                done = term or trunc
            returns.append(total)
        if pol.departures > before:
            diff.append(returns[1] - returns[0])
    g, d = np.array(rel), np.array(diff)
    return {"threshold": threshold, "episodes": cfg.eval_episodes, "departures": len(g),
            "teacher_mean_relative_gain": float(g.mean()),
            "teacher_share_gaining": float((g > 0).mean()),
            "teacher_share_gaining_5pct": float((g >= 0.05).mean()),
            "episodes_with_departures": len(d), "return_minus_peft_mean": float(d.mean()),
            "won": int((d > 1e-9).sum()), "lost": int((d < -1e-9).sum())}  # fmt: skip


def main() -> None:
    out: dict = {"rule": "descriptive: docs/results/wf_small_dag_departures_check.py"}
    out["w8_kept_aside"] = kept_aside_gains(W8)
    t90 = thresholds(W8)[0]
    cfg = config(W8)
    out["w8_departing_share"] = {
        "threshold": t90,
        "own_pool_new_episodes": departing_share(W8, cfg.dataset, range(50_000, 50_200), t90),
        "seed16_validation": departing_share(
            W8, cfg.eval_dataset, range(EVAL_SEED, EVAL_SEED + 200), t90),
    }  # fmt: skip
    print(json.dumps(out["w8_departing_share"]), flush=True)
    out["w9_played"] = played_departures(W9, thresholds(W9)[1])
    print(json.dumps(out["w9_played"]), flush=True)
    OUT.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
