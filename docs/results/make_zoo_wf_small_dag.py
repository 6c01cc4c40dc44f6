"""Issue 13, round W8: PEFT with departures learned by a network that reads the whole workflow.

Why: ``wf_small_dag_learner.py`` (descriptive, training data only) found that a message-passing
network over the DAG recovers 10-14% of the search teacher's gain over PEFT on workflows held
out of its fit, where the entry's per-decision observation gave under 5%; played on 1,188
held-out episodes of its training pool it beat PEFT by 0.49% [0.19, 0.93]. This round makes it
a shipped policy: the env observes the workflow (``dag: true``), ``algo: departures`` trains it
(:mod:`rlsched.train.departures`) and ``learned:PATH`` plays it in numpy
(:mod:`rlsched.policies.departures`).

    rlsched train --config configs/workflow_offloading_small_dag_departures.yaml --seed 0 \\
        --out runs/zoo/workflow_offloading_small_dag_departures/seed0
    python docs/results/make_zoo_wf_small_dag.py

The rule, fixed here (2026-12-02, before the network was fitted; its teacher labels were being
collected):

1. Candidate: that run's model. Training data: 6,000 episodes (seeds 20,000+) of
   ``synthetic:placement?workflows=10000&tasks=15&seed=15``, the descriptive study's pool and
   count (of which it had used training folds only; the teacher takes about 1.8 min per 250
   episodes on this sitting's two cores). Its threshold: chosen by the trainer on 200
   validation episodes of ``seed=16``'s 200 workflows (seeds 10,000+), among six quantiles of
   its training scores and never departing.
   One seed: the labels are the costly part and the fit is seeded.
2. Validation: 200 fresh episodes of 200 workflows nothing else played
   (``synthetic:placement?workflows=200&tasks=15&seed=17``, seeds 20,000+): the candidate and
   the entry (as it ships: round W7's student gated by PEFT at 0.5) beside every heuristic
   that does not search. Eligible: not significantly worse than the best heuristic there
   (paired 95%). Kept: the eligible one with the lower mean completion; equal means go to the
   entry. A kept candidate becomes the entry under the name ``workflow-small-dag-departures``
   (the old entry's model and card then go to ``configs/zoo/start/workflow-small-lookahead-ppo``,
   as ``pod-rebalancing-today-ppo``'s did).
3. Test, whatever the choice: 200 fresh episodes of the test set (``seed=4``, seeds
   9,500-9,699; 1,000+ to 9,000+ served earlier tests, 40 each): the candidate and the entry
   on the same episodes beside every heuristic that does not search and the CP-SAT
   ``optimal`` (each episode's gap to the isolated optimum), each paired with the best
   heuristic there and with each other. Nothing is chosen on test. (``mdp_rollout`` is left
   out: 200 episodes of it take longer than this round's budget, and it decides nothing here.)

Writes ``docs/results/wf_small_dag_choice.json`` and, on a replacement, the entry and its card
(its verdicts on the card's usual episodes: 40 of the validation set at seeds 10,000+ and of
the test set at 1,000+, as every entry's).
"""

import json
import shutil
import time

from make_zoo import ROOT, verdict
from make_zoo_wf_small import (
    ENV,
    EPISODES,
    KWARGS,
    PRESET,
    TEST,
    TEST_SEED,
    VAL_SEED,
    VALIDATION,
    judge,
    summary,
)

from rlsched.agents.export import export_model, write_card
from rlsched.stats import paired
from rlsched.zoo import ZOO_DIR

RUN = ROOT / "runs/zoo/workflow_offloading_small_dag_departures/seed0"
CONFIG = "configs/workflow_offloading_small_dag_departures.yaml"
OLD, NEW = "workflow-small-lookahead-ppo", "workflow-small-dag-departures"
FRESH = "synthetic:placement?workflows=200&tasks=15&seed=17"
NEW_VAL_SEED, NEW_TEST_SEED, ROUND_EPISODES = 20_000, 9_500, 200
#: the candidate's env: the entry's keys and the whole workflow (the entry ignores the extra)
EXTRA = {"lookahead": True, "finish_gap": True, "optimistic_cost": True, "contention": True,
         "dag": True}  # fmt: skip
OUT = ROOT / "docs/results/wf_small_dag_choice.json"


def pair(rows: dict, a: str, b: str) -> dict:
    """``a`` paired with ``b`` on mean completion (lower is better)."""
    return paired(rows[a]["episode_values"], rows[b]["episode_values"], direction="lower",
                  reference=b, metric="mean_completion").to_json()  # fmt: skip


def main() -> None:
    t0 = time.perf_counter()
    cand = f"learned:{RUN / 'model'}"
    entry = f"learned:{ZOO_DIR / OLD / 'model'}"  # plays its shipped gate
    rep, _ = judge(FRESH, NEW_VAL_SEED, f"plain,{entry},{cand}", EXTRA, ROUND_EPISODES)
    rows = {r["policy"]: r for r in rep["results"]}
    mean = {s: float(r["metrics"]["mean_completion"]) for s, r in rows.items()}
    eligible = [s for s in (entry, cand) if rows[s]["paired"]["verdict"] != "worse"]
    kept = min(eligible, key=lambda s: (mean[s], s != entry), default=None)
    replaces = kept == cand
    out: dict = {
        "rule": "docs/results/make_zoo_wf_small_dag.py",
        "candidate": {"run": str(RUN.relative_to(ROOT)), "config": CONFIG,
                      "train": json.loads((RUN / "run.json").read_text())},
        "reference": rep["reference"],
        "validation": {
            "dataset": FRESH, "seed": NEW_VAL_SEED, "episodes": ROUND_EPISODES, "means": mean,
            "vs_best": {s: rows[s]["paired"] for s in (entry, cand)},
            "candidate_vs_entry": pair(rows, cand, entry),
        },
        "kept": {entry: "the entry", cand: "the candidate", None: None}[kept],
        "replaces": replaces,
    }  # fmt: skip
    for s, who in ((entry, "entry"), (cand, "candidate")):
        p = rows[s]["paired"]
        print(f"validation {who}: {mean[s]:.3f} vs {rep['reference']} {p['mean_diff']:+.3f} "
              f"[{p['ci95'][0]:+.3f}, {p['ci95'][1]:+.3f}] {p['wins']}/{p['ties']}/"
              f"{p['losses']} {p['verdict']}", flush=True)  # fmt: skip
    print(f"kept {out['kept']}; replaces: {replaces}", flush=True)
    test, gaps = judge(TEST, NEW_TEST_SEED, f"plain,optimal,{entry},{cand}", EXTRA,
                       ROUND_EPISODES)  # fmt: skip
    trows = {r["policy"]: r for r in test["results"]}
    out["test"] = {
        "dataset": TEST, "seed": NEW_TEST_SEED, "episodes": ROUND_EPISODES,
        "reference": test["reference"],
        "candidate": summary(test, gaps, cand),
        "entry_vs_best": trows[entry]["paired"], "candidate_vs_best": trows[cand]["paired"],
        "candidate_vs_entry": pair(trows, cand, entry),
        "candidate_vs_peft": pair(trows, cand, "peft"),
    }  # fmt: skip
    for s, who in ((entry, "entry"), (cand, "candidate")):
        p = trows[s]["paired"]
        print(f"test {who}: {trows[s]['metrics']['mean_completion']:.3f} gap "
              f"{trows[s]['metrics']['optimality_gap']:.2%} vs {test['reference']} "
              f"{p['mean_diff']:+.3f} [{p['ci95'][0]:+.3f}, {p['ci95'][1]:+.3f}] {p['wins']}/"
              f"{p['ties']}/{p['losses']} {p['verdict']}", flush=True)  # fmt: skip
    out["seconds"] = time.perf_counter() - t0
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    if replaces:
        ship(out, rows, entry, cand)


def ship(out: dict, rows: dict, entry: str, cand: str) -> None:
    """The candidate as the entry ``NEW``, with its card; the old entry retired."""
    size = export_model(RUN, ZOO_DIR / NEW / "model")
    spec = f"learned:{ZOO_DIR / NEW / 'model'}"
    pols = f"plain,optimal,{spec}"
    val, _ = judge(VALIDATION, VAL_SEED, pols, EXTRA)
    test, _ = judge(TEST, TEST_SEED, pols, EXTRA)
    trows = {r["policy"]: r for r in test["results"]}
    train = out["candidate"]["train"]
    p = out["validation"]["candidate_vs_entry"]
    old = json.loads((ZOO_DIR / OLD / "card.json").read_text())
    card = {
        "name": NEW, "env": ENV, "env_kwargs": {**KWARGS, **EXTRA},
        "config": f"configs/zoo/{NEW}.yaml", "seed": 0, "seeds_trained": [0],
        "selected_by": (
            f"round W8 (docs/results/make_zoo_wf_small_dag.py): lower mean completion than the "
            f"entry it replaced ({OLD}) on {ROUND_EPISODES} fresh validation episodes of {FRESH} "
            f"(seeds {NEW_VAL_SEED:,}+), not significantly worse than the best heuristic there"),
        "training": {
            "steps": 0, "dataset": train["config"]["dataset"],
            "validation_dataset": train["config"]["eval_dataset"],
            "teacher": train["teacher"], "threshold": train["threshold"],
            "threshold_choice": train["threshold_choice"], "seconds": train["seconds"],
            "best_validation_reward_per_seed": {"seed0": train["best_eval_mean_reward"]},
        },
        "size_bytes": size, "preset": PRESET,
        "trained_on": f"{train['config']['dataset']}, preset {PRESET}, one workflow per episode",
        "algo": "departures", "policy_net": "dag", "base": "peft",
        "replaced_because": (
            f"on {p['n']} validation episodes, against {OLD} (the entry so far): {p['verdict']} "
            f"({p['mean_diff']:+.3f} s, 95% CI {p['ci95'][0]:+.3f} to {p['ci95'][1]:+.3f})"),
        "validation": {**verdict(val, spec, EPISODES, ("mean_completion", "optimality_gap")),
                       "seed": VAL_SEED},
        "test": {**verdict(test, spec, EPISODES, ("mean_completion", "optimality_gap")),
                 "seed": TEST_SEED},
    }  # fmt: skip
    card["test"]["oracle"] = {
        **old["test"]["oracle"],
        "recorded": "docs/results/make_zoo_wf_small_dag.py, "
        + time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "episode_values": trows["optimal"]["episode_values"],
        "reference": test["reference"],
        "reference_episode_values": trows[test["reference"]]["episode_values"],
    }
    write_card(NEW, card)
    cfg = (RUN / "config.yaml").read_text()
    (ROOT / card["config"]).write_text(
        f"# The zoo's {NEW}: `rlsched train --config {card['config']} --seed 0` (the teacher's "
        "labels take about an hour on two cores)\n" + cfg)  # fmt: skip
    retired = ROOT / "configs/zoo/start" / OLD
    retired.mkdir(parents=True, exist_ok=True)
    for f in (ZOO_DIR / OLD / "model").iterdir():
        shutil.copyfile(f, retired / f.name)
    shutil.copyfile(ZOO_DIR / OLD / "card.json", retired / "card.json")
    shutil.rmtree(ZOO_DIR / OLD)
    print(f"shipped {NEW}; {OLD} retired to {retired.relative_to(ROOT)}", flush=True)


if __name__ == "__main__":
    main()
