"""The small-DAG students on new episodes of the workflows they trained on, and of workflows
they never saw (descriptive: nothing is chosen on it, and no validation or test set is played).

``wf_small_departures_unseen.py`` found that a learner recovers much of the search teacher's
gain over PEFT on workflows it was fitted on and none on new ones. This checks the same with the
students themselves: the kept models of rounds W5 (``workflow_offloading_small_contention_exit``,
seeds 0-4) and W7 (``..._min_gain``, seeds 0-1), each played alone (no gate), beside every
heuristic that does not search, on

- 100 fresh episodes of their own 200 training workflows (``seed=2``, episode seeds 84,000+:
  new origins and arrival draws, the same DAGs), and
- 100 episodes of 200 workflows of the same generator that nothing has used (``seed=14``,
  seeds 84,000+).

Each student is paired with the best heuristic measured there (PEFT on both). Needs the runs
in ``runs/zoo/`` (``docs/results/train_seeds.sh``, configs above).

    python docs/results/wf_small_seen_workflows.py    (about 5 minutes here)

Writes ``docs/results/wf_small_seen_workflows.json``.
"""

import json
import time

import numpy as np
from make_zoo import ROOT, candidate_runs, label
from make_zoo_wf_small import judge
from make_zoo_wf_small_margin import EXTRA

OUT = ROOT / "docs/results/wf_small_seen_workflows.json"
POOLS = (
    "workflow_offloading_small_contention_exit",
    "workflow_offloading_small_contention_exit_min_gain",
)
SETS = {
    "seen workflows (seed=2, the training pool)": (
        "synthetic:placement?workflows=200&tasks=15&seed=2"
    ),
    "new workflows (seed=14)": "synthetic:placement?workflows=200&tasks=15&seed=14",
}
SEED, EPISODES = 84_000, 100


def main() -> None:
    t0 = time.perf_counter()
    runs = [r for pool in POOLS for r in candidate_runs((pool,))]
    assert len(runs) == 7, runs
    specs = {f"learned:{r / 'model'}": label(r) for r in runs}
    out: dict = {"episodes": EPISODES, "seed": SEED, "sets": {}}
    for set_name, dataset in SETS.items():
        rep, gaps = judge(dataset, SEED, ",".join(["plain", *specs]), EXTRA, EPISODES)
        rows = {r["policy"]: r for r in rep["results"]}
        ref = rep["reference"]
        res: dict = {"dataset": dataset, "reference": ref,
                     "reference_mean": float(rows[ref]["metrics"]["mean_completion"]),
                     "reference_gap": float(np.mean(gaps[ref])), "students": {}}  # fmt: skip
        print(f"{set_name}: {ref} {res['reference_mean']:.2f} s, gap {res['reference_gap']:.2%}")
        wins = better = worse = 0
        for spec, name in specs.items():
            p = rows[spec]["paired"]
            res["students"][name] = {
                "mean_completion": float(rows[spec]["metrics"]["mean_completion"]),
                "gap": float(np.mean(gaps[spec])), "vs_reference": p}  # fmt: skip
            better += p["verdict"] == "better"
            worse += p["verdict"] == "worse"
            wins += p["mean_diff"] < 0
            print(f"  {name:62s} gap {np.mean(gaps[spec]):.2%}, vs {ref} {p['mean_diff']:+.2f} "
                  f"[{p['ci95'][0]:+.2f}, {p['ci95'][1]:+.2f}] {p['wins']}/{p['ties']}/"
                  f"{p['losses']} {p['verdict']}", flush=True)  # fmt: skip
        res["count"] = {"better": better, "worse": worse, "mean below": wins, "of": len(specs)}
        out["sets"][set_name] = res
    out["seconds"] = time.perf_counter() - t0
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print(f"{out['seconds']:.0f} s")


if __name__ == "__main__":
    main()
