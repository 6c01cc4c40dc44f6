"""Issue 13, round W30: the small-DAG entry with one network instead of two, for the decision
time goal.

Why: ``workflow-small-dag-ensemble-iteration`` meets the optimum goal under its trial guard
(round W29: 1.60% from the CP-SAT optimum over nine draws), but its decision, two networks'
forward passes and PEFT's schedule, is over the goal's 0.2 ms in the machine's slow states
(0.134-0.291 ms over six runs of 2026-12-07; docs/benchmarks.md). Each of its two networks was
trained alone before they were joined (round W28), and under the guard the simulator, not the
networks' averaged errors, decides which schedules are played. One network's forward pass
costs half of two. A look before this rule was written (``synthetic:placement?workflows=2000&
tasks=15&seed=80``, 200 episodes, seeds 20,000-20,199, a world no round uses, not used again;
means: PEFT 2.32%, the entry 1.04%, either network alone under the entry's guard 1.07-1.08%)
and one timing (``bench_decide.py``, the entry 0.133-0.219 ms median against 0.085-0.087 ms for
one of its networks, back to back at 16:29 UTC) chose nothing below.

    rlsched train --config configs/workflow_offloading_small_dag_single_dagger.yaml --seed 0 \\
        --out runs/zoo/workflow_offloading_small_dag_single_dagger/seed0
    rlsched train --config configs/workflow_offloading_small_dag_single_gain.yaml --seed 0 \\
        --out runs/zoo/workflow_offloading_small_dag_single_gain/seed0
    python docs/results/make_zoo_wf_small_dag_single.py [--workers 2]   # validation, ship, tests
    python docs/results/make_zoo_wf_small_dag_single.py --tests 3   # the first 3 test draws only

The rule, fixed here (2026-12-07, fifty-fourth session) before any of its episodes:

1. Candidates: the entry's recipe with one of its two networks (``departure_members`` of one
   model: its score less its own threshold, the entry's threshold -0.001 played against never
   departing on the recipe's validation episodes), one per network (``dagger``: round W28's
   ``workflow-small-dag-dagger-iteration``; ``gain``: ``workflow-small-dag-gain-iteration``),
   each under the entry's trial guard as shipped (PEFT, one future, to the workflow's end,
   every 15 decisions, significance 0, other thresholds -0.008 and -0.003). Nothing trained.
2. Validation: a fresh world (``synthetic:placement?workflows=2000&tasks=15&seed=81``, 1,000
   episodes, seeds 20,000-20,999): both candidates, the entry as shipped and PEFT, each
   episode's gap to the isolated CP-SAT optimum, intervals resampling workflows. Kept: the
   candidate with the lower mean gap (equal: ``dagger``). It replaces the entry, as
   ``workflow-small-dag-single-net`` (the entry retired to ``configs/zoo/start/``), if both
   (a) its gap less the entry's has a 95% interval whose upper end is at most +0.2 points
   (0.002: the margin this rule allows for halving the decision's networks), and (b) its own
   gap's whole interval is below 2%.
3. Tests, whatever step 2 decides: the kept candidate, the entry and PEFT on a fresh draw of
   the test world (``workflows=110000&tasks=15&seed=4``, 3,000 episodes, seeds 1000-3999),
   then replayed on round W29's nine draws (``workflows=100000`` down to ``20000``, the same
   seeds). The goal is read as round W29 read it: on the new draw **met** if the mean gap and
   its whole interval are below 2%, **met on the mean, not significantly** if only the mean
   is, **not met** otherwise; over the draws played, by the mean of their means with an
   interval pooling them. Each draw is written as it finishes; a rerun plays only the draws
   not yet written.
4. The decision time, a record (not a condition): ``bench_decide.py`` of the new entry and of
   the old, alone, pinned to one core, back to back (docs/benchmarks.md).

Writes ``docs/results/wf_small_dag_single_choice.json`` and, on a replacement, the entry, its
card (its verdicts on the card's 40 validation and 40 test episodes, with the recorded oracle
of the entry it replaces: the same episodes) and its retraining config.
"""

import argparse
import json
import re
import time
from pathlib import Path

import numpy as np
from make_zoo import ROOT, retire, trial_spec, verdict
from make_zoo_wf_small import EPISODES, KWARGS, PRESET, TEST, TEST_SEED, VAL_SEED, VALIDATION
from make_zoo_wf_small import judge as judge_small
from make_zoo_wf_small_dag_trial import gap_less, gap_means, goal, pooled_ci
from wf_small_dag_confirm import played

from rlsched.agents.export import export_model, write_card
from rlsched.zoo import ZOO_DIR

OLD, NEW = "workflow-small-dag-ensemble-iteration", "workflow-small-dag-single-net"
CANDIDATES = ("dagger", "gain")  # in the order ties go
RUN = "runs/zoo/workflow_offloading_small_dag_single_{}/seed0"
CONFIG = "configs/workflow_offloading_small_dag_single_{}.yaml"
VAL = "synthetic:placement?workflows=2000&tasks=15&seed=81"
VAL_FIRST, VAL_EPISODES = 20_000, 1000
MARGIN = 0.002  # rule step 2 (a): the most the kept candidate's interval may reach above
TESTS = {f"workflows={k * 10000}": f"synthetic:placement?workflows={k * 10000}&tasks=15&seed=4"
         for k in range(11, 1, -1)}  # the new draw first, then round W29's nine  # fmt: skip
TEST_FIRST, TEST_EPISODES = 1000, 3000
OUT = ROOT / "docs/results/wf_small_dag_single_choice.json"


def guard() -> dict:
    """The entry's ``meta.json`` ``trial`` (round W29), which every player here keeps."""
    return json.loads((entry_model(OLD) / "meta.json").read_text())["trial"]


def entry_model(name: str) -> Path:
    """A zoo entry's model, in the zoo or, once retired, in ``configs/zoo/start/``."""
    here = ZOO_DIR / name / "model"
    return here if here.is_dir() else ROOT / "configs/zoo/start" / name / "model"


def spec(model: Path) -> str:
    """``learned:`` the model under the entry's guard."""
    return trial_spec(f"learned:{model}", guard())


def validate(workers: int, out: dict) -> None:
    """Rule step 2."""
    names = {c: spec(ROOT / RUN.format(c) / "model") for c in CANDIDATES}
    names |= {"entry": spec(entry_model(OLD)), "peft": "peft"}
    workflow, g = played(tuple(names.values()), workers, VAL, VAL_FIRST, VAL_EPISODES)
    val = gap_means(g, workflow, names)
    for c in CANDIDATES:
        val[f"{c}_minus_entry"] = gap_less(g, workflow, names[c], names["entry"])
    kept = min(CANDIDATES, key=lambda c: (val[c]["mean_gap"], CANDIDATES.index(c)))
    d = val[f"{kept}_minus_entry"]
    ships = d["ci95"][1] <= MARGIN and val[kept]["ci95"][1] < 0.02
    out["validation"] = {"dataset": VAL, "seeds": [VAL_FIRST, VAL_FIRST + VAL_EPISODES - 1],
                         **val}  # fmt: skip
    out["kept"], out["ships"] = kept, ships
    print(f"validation: {json.dumps(val)}; kept {kept}; ships {ships}", flush=True)


def test(workers: int, out: dict, draws: int | None) -> None:
    """Rule step 3, each draw written as it finishes."""
    kept = out["kept"]
    cand = entry_model(NEW) if out["ships"] else ROOT / RUN.format(kept) / "model"
    names = {"candidate": spec(cand), "entry": spec(entry_model(OLD)), "peft": "peft"}
    tests = out.setdefault("tests", {})
    for label, data in list(TESTS.items())[:draws]:
        if label in tests:
            continue
        t0 = time.time()
        workflow, g = played(tuple(names.values()), workers, data, TEST_FIRST, TEST_EPISODES)
        tests[label] = {"dataset": data, **gap_means(g, workflow, names),
                        "candidate_minus_entry": gap_less(g, workflow, names["candidate"],
                                                      names["entry"]),
                        "candidate_minus_peft": gap_less(g, workflow, names["candidate"], "peft"),
                        "values": {who: g[s].tolist() for who, s in names.items()},
                        "workflow": workflow.tolist(),
                        "seconds": round(time.time() - t0)}  # fmt: skip
        shown = {k: v for k, v in tests[label].items() if k not in ("values", "workflow")}
        print(f"test {label}: {json.dumps(shown)}", flush=True)
        write(out)
    new = tests[next(iter(TESTS))]["candidate"]
    out["goal_new_draw"] = goal(new["mean_gap"], new["ci95"])
    out["over_draws"] = {"draws": list(tests)}
    for who in names:
        pairs = [(np.asarray(t["values"][who]), np.asarray(t["workflow"])) for t in tests.values()]
        out["over_draws"][who] = {"mean_of_means": float(np.mean([v.mean() for v, _ in pairs])),
                                  "ci95": pooled_ci(pairs)}  # fmt: skip
    o = out["over_draws"]["candidate"]
    out["goal_over_draws"] = "met on the mean" if o["mean_of_means"] < 0.02 else "not met"
    print(f"goal: new draw {out['goal_new_draw']}; over {len(tests)} draws "
          f"{json.dumps({k: v for k, v in out['over_draws'].items() if k != 'draws'})} "
          f"{out['goal_over_draws']}", flush=True)
    write(out)


def write(out: dict) -> None:
    """The record, every list of numbers on one line (a draw's lists hold 3,000 each)."""
    text = re.sub(r"\[\s*([-+0-9.e,\s]*?)\s*\]",
                  lambda m: "[" + ", ".join(m.group(1).split()).replace(",,", ",") + "]",
                  json.dumps(out, indent=1))
    OUT.write_text(text + "\n")


def ship(out: dict) -> None:
    """The kept candidate as the entry ``NEW`` under the entry's guard, with its card; ``OLD``
    retired."""
    kept = out["kept"]
    run = ROOT / RUN.format(kept)
    rec = json.loads((run / "run.json").read_text())
    old = json.loads((ZOO_DIR / OLD / "card.json").read_text())
    export_model(run, ZOO_DIR / NEW / "model")
    meta_path = ZOO_DIR / NEW / "model" / "meta.json"
    meta = json.loads(meta_path.read_text())
    meta["trial"] = old["trial"]
    meta_path.write_text(json.dumps(meta, indent=2) + "\n")
    size = sum(p.stat().st_size for p in (ZOO_DIR / NEW / "model").iterdir())
    member = rec["joined"][0]["model"]
    v = out["validation"][f"{kept}_minus_entry"]
    s = f"learned:{ZOO_DIR / NEW / 'model'}"
    pols = f"plain,optimal,{s}"
    extra = {k: x for k, x in old["env_kwargs"].items() if k not in KWARGS}
    val, _ = judge_small(VALIDATION, VAL_SEED, pols, extra)
    tst, _ = judge_small(TEST, TEST_SEED, pols, extra)
    card = {
        "name": NEW, "env": old["env"], "env_kwargs": old["env_kwargs"],
        "config": f"configs/zoo/{NEW}.yaml", "seed": 0, "seeds_trained": [0],
        "selected_by": (
            f"round W30 (docs/results/make_zoo_wf_small_dag_single.py): one of {OLD}'s two "
            f"networks ({member}) under its trial guard; on {VAL_EPISODES} fresh validation "
            f"episodes of {VAL} (seeds {VAL_FIRST:,}+) its gap to the optimum "
            f"{out['validation'][kept]['mean_gap']:.4f} less the entry's {v['mean']:+.4f} "
            f"(95% CI {v['ci95'][0]:+.4f} to {v['ci95'][1]:+.4f}, resampling workflows; the "
            f"rule's margin +{MARGIN:g}), its own interval below 0.02"),
        "training": {
            "steps": 0, "dataset": rec["config"]["dataset"],
            "validation_dataset": rec["config"]["eval_dataset"], "teacher": None,
            "joined": rec["joined"], "threshold": rec["threshold"],
            "threshold_choice": rec["threshold_choice"], "seconds": rec["seconds"],
            "best_validation_reward_per_seed": {"seed0": rec["best_eval_mean_reward"]},
        },
        "size_bytes": size, "preset": PRESET,
        "trained_on": f"one shipped network, joined alone: {member}",
        "algo": "departures", "policy_net": "dag", "base": "peft",
        "replaced_because": (
            f"the decision time goal: one network's forward pass where {OLD} runs two; on "
            f"{VAL_EPISODES} validation episodes its gap less {OLD}'s {v['mean']:+.4f} (95% CI "
            f"{v['ci95'][0]:+.4f} to {v['ci95'][1]:+.4f})"),
        "trial": old["trial"],
        "trial_chosen_by": old["trial_chosen_by"] + f"; kept by round W30 for {NEW}",
        "validation": {**verdict(val, s, EPISODES, ("mean_completion", "optimality_gap")),
                       "seed": VAL_SEED},
        "test": {**verdict(tst, s, EPISODES, ("mean_completion", "optimality_gap")),
                 "seed": TEST_SEED, "oracle": old["test"]["oracle"]},
    }  # fmt: skip
    write_card(NEW, card)
    cfg = (ROOT / CONFIG.format(kept)).read_text().split("\n", 2)[2]  # its two lines of header
    trial = old["trial"]
    ts = "/".join(f"{t:g}" for t in trial["thresholds"])
    (ROOT / card["config"]).write_text(
        f"# The zoo's {NEW} (round W30, docs/results/make_zoo_wf_small_dag_single.py):\n"
        f"# It plays under a trial guard over PEFT (meta.json \"trial\", round W29's, kept): at "
        f"each workflow's arrival it plays PEFT's schedule and the network's at its threshold "
        f"and at {ts} in the simulator, and follows the fastest; training does not read the "
        "guard.\n"
        f"# `rlsched train --config configs/zoo/{NEW}.yaml --seed 0` (it joins one shipped "
        "network: about a minute)\n" + cfg)
    retire(OLD, NEW, "round W30 (docs/results/make_zoo_wf_small_dag_single.py)")
    print(json.dumps({k: card[k] for k in ("size_bytes", "validation", "test")}, indent=1))


def main(workers: int, draws: int | None) -> None:
    t0 = time.time()
    out = json.loads(OUT.read_text()) if OUT.is_file() else {
        "rule": "docs/results/make_zoo_wf_small_dag_single.py, round W30", "entry": OLD}
    if "validation" not in out:
        validate(workers, out)
        write(out)
        if out["ships"]:
            ship(out)
    test(workers, out, draws)
    out["seconds"] = out.get("seconds", 0) + round(time.time() - t0)
    write(out)
    print(f"wrote {OUT}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--tests", type=int, default=None, help="play only the first N test draws")
    args = ap.parse_args()
    main(args.workers, args.tests)
