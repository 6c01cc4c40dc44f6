"""Issue 13 item 6: the 1M-step ServerlessPlacement run (configs/serverless_placement_long.yaml,
seed 0, runs/long/serverless/seed0) beside the zoo's 300k-step policy and every heuristic, on
the validation set (10 episodes, seeds 10,000+) and the held-out test set (10 episodes, seeds
1000+), paired with the best heuristic measured there; and its validation curve.

    python docs/results/long_serverless_eval.py
"""

import json
from pathlib import Path

import numpy as np

from rlsched.evaluate import compare
from rlsched.splits import SPLITS, TEST_SEED

ROOT = Path(__file__).resolve().parents[2]
ENV = "rlsched/ServerlessPlacement-v0"
RUN = ROOT / "runs/long/serverless/seed0"
LONG = f"learned:{RUN / 'model'}"
ZOO = "learned:zoo/serverless-edge-maskable-ppo"


def main() -> None:
    split = SPLITS[ENV]
    kw = {**split.env_kwargs, "scenario": "edge"}
    out: dict = {}
    ev = np.load(RUN / "eval" / "evaluations.npz")
    out["curve"] = {"timesteps": ev["timesteps"].tolist(),
                    "mean_reward": ev["results"].mean(axis=1).tolist()}
    for role, ds, seed in (("validation", split.validation, 10_000),
                           ("test", split.test, TEST_SEED)):
        rep = compare(ENV, ds, f"plain,{ZOO},{LONG}", episodes=10, seed=seed, env_kwargs=kw)
        rows = {r["policy"]: r for r in rep["results"]}
        out[role] = {"reference": rep["reference"], "dataset": rep["dataset"],
                     "reference_mean": rows[rep["reference"]]["mean_reward"]}
        for name, spec in (("zoo_300k", ZOO), ("long_1m", LONG)):
            r = rows[spec]
            out[role][name] = {"mean_reward": r["mean_reward"], "paired": r["paired"]}
            p = r["paired"]
            print(f"{role}: {name} {r['mean_reward']:.3f} vs {rep['reference']} "
                  f"{out[role]['reference_mean']:.3f}: {p['mean_diff']:+.3f} "
                  f"[{p['ci95'][0]:+.3f}, {p['ci95'][1]:+.3f}] {p['verdict']}")
    (ROOT / "docs/results/long_serverless_eval.json").write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
