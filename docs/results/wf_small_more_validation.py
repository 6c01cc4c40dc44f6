"""The look-ahead recipe with twice the teacher labels per round
(configs/workflow_offloading_small_lookahead_more.yaml, seeds 0-1) on the validation episodes
only, paired with HEFT and with the shipped ``workflow-small-lookahead-ppo``: the test set is
left for the choice this informs. Run from the repository root:

    python docs/results/wf_small_more_validation.py
"""

import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_zoo_wf_small import ROOT, VAL_SEED, VALIDATION, judge

from rlsched.stats import paired

SHIPPED = "learned:zoo/workflow-small-lookahead-ppo"
RUNS = [f"runs/zoo/workflow_offloading_small_lookahead_more/seed{s}/model" for s in (0, 1)]


def main() -> None:
    pols = ",".join(["heft", SHIPPED] + [f"learned:{r}" for r in RUNS])
    rep, gaps = judge(VALIDATION, VAL_SEED, pols, {"lookahead": True})
    rows = {r["policy"]: r for r in rep["results"]}
    shipped = rows[SHIPPED]["episode_values"]
    out = {}
    for name, r in rows.items():
        p = None
        if name not in ("heft", SHIPPED):
            p = paired(r["episode_values"], shipped, direction="lower", reference=SHIPPED,
                       metric="mean_completion")
        out[name] = {"mean_completion": r["metrics"]["mean_completion"],
                     "gap_mean": float(np.mean(gaps[name])), "vs_heft": r.get("paired"),
                     "vs_shipped": p.to_json() if p else None}
        print(name, round(r["metrics"]["mean_completion"], 3), round(out[name]["gap_mean"], 4),
              (r.get("paired") or {}).get("verdict"),
              p and (round(p.mean_diff, 3), [round(x, 3) for x in p.ci95], p.verdict))
    path = ROOT / "docs/results/wf_small_more_validation.json"
    path.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
