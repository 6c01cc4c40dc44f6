"""Issue 13 item 5: the faster training setting's quality against the fast one.

Reads the runs of docs/results/throughput_quality.sh (3 seeds each of
configs/serverless_placement_fast.yaml and configs/serverless_placement_faster.yaml), runs
every heuristic and both seed groups on the validation set (10 episodes, seeds 10,000+) and on
the held-out test set (10 episodes, seeds 1000+), and pairs the two settings seed by seed
(seed s of one with seed s of the other, the IQM of the differences with a stratified
bootstrap) as well as each against the best heuristic. Writes
docs/results/throughput_quality.json.

    python docs/results/throughput_quality.py
"""

import json
from pathlib import Path

import numpy as np

from rlsched.evaluate import compare
from rlsched.splits import SPLITS, TEST_SEED
from rlsched.stats import paired_matrix

ENV = "rlsched/ServerlessPlacement-v0"
ROOT = Path(__file__).resolve().parents[2]
GROUPS = {name: f"learned:{ROOT}/runs/tput/{name}/seed*/model" for name in ("fast", "faster")}


def judge(dataset: str, seed: int) -> dict:
    split = SPLITS[ENV]
    rep = compare(ENV, dataset, ["all", *GROUPS.values()], episodes=10, seed=seed,
                  env_kwargs=dict(split.env_kwargs))
    rows = {r["policy"]: r for r in rep["results"]}
    out: dict = {"dataset": dataset, "reference": rep["reference"], "groups": {}}
    for name, spec in GROUPS.items():
        r = rows[spec]
        out["groups"][name] = {"iqm": r["iqm"], "paired_vs_best_heuristic": r["paired"]}
    a = np.array(rows[GROUPS["faster"]]["seed_values"])
    b = np.array(rows[GROUPS["fast"]]["seed_values"])
    p = paired_matrix(a, b, direction=rep["direction"], reference="fast", metric=rep["main_metric"])
    out["faster_vs_fast"] = p.to_json()
    return out


def main() -> None:
    split = SPLITS[ENV]
    runs = {name: [json.loads((ROOT / f"runs/tput/{name}/seed{s}/run.json").read_text())
                   for s in range(3)] for name in GROUPS}  # fmt: skip
    out = {
        "training": {name: [{"seed": r["seed"], "seconds": r["seconds"],
                             "steps_per_second": r["steps_per_second"],
                             "best_eval_mean_reward": r["best_eval_mean_reward"]} for r in rs]
                     for name, rs in runs.items()},
        "validation": judge(split.validation, 10_000),
        "test": judge(split.test, TEST_SEED),
    }
    (ROOT / "docs/results/throughput_quality.json").write_text(json.dumps(out, indent=1))
    for part in ("validation", "test"):
        p = out[part]["faster_vs_fast"]
        print(part, "faster - fast:", f"{p['mean_diff']:+.3f}", p["ci95"], p["verdict"])
        for name, g in out[part]["groups"].items():
            q = g["paired_vs_best_heuristic"]
            print(f"  {name}: IQM {g['iqm']:.3f}; vs {out[part]['reference']}: "
                  f"{q['mean_diff']:+.3f} {q['ci95']} {q['verdict']}")


if __name__ == "__main__":
    main()
