"""Issue 13, round C4, descriptive (nothing is chosen on it): how long each family's workflows
run under PEFT in the ``congested`` preset, training families against the unused ones and the
test's.

Round C4's departures lost to PEFT on soykb alone among the unused families
(``wf_congested_gated_by_family.py``), whose workflows run far longer than the training ones.
A guard that keeps PEFT's server on workflows outside the training scale would act only where
a family's scale is outside it; this says where that is. PEFT's mean completion per episode,
3 episodes of each workload (seeds 70,000+; 5 of the split's test set).

    python docs/results/wf_congested_family_scale.py   (from docs/results; about 2 min)
"""

from __future__ import annotations

import json
import statistics
from multiprocessing import Pool

import yaml
from make_zoo import ROOT
from make_zoo_wf_congested_families import UNSEEN_TASKS, kwargs
from make_zoo_wf_congested_gated import CHOICE, RUN
from make_zoo_wf_congested_unseen import play

from rlsched.splits import SPLITS

ENV = "rlsched/WorkflowOffloading-v0"
CONFIGS = ("workflow_offloading_congested_departures", "workflow_offloading_congested_families")
SEED, EPISODES, TEST_EPISODES = 70_000, 3, 5
OUT = ROOT / "docs/results/wf_congested_family_scale.json"


def main() -> None:
    train: list[str] = []
    for name in CONFIGS:
        cfg = yaml.safe_load((ROOT / "configs" / f"{name}.yaml").read_text())
        train += [cfg["dataset"], *cfg["train_datasets"]]
    groups = {"training": train, "unused": list(CHOICE), "test": [SPLITS[ENV].test]}
    kw = kwargs(UNSEEN_TASKS, RUN)
    pairs = [(g, d) for g, ds in groups.items() for d in ds]
    jobs = [(d, SEED, TEST_EPISODES if g == "test" else EPISODES, ["peft"], kw) for g, d in pairs]
    with Pool(2) as pool:
        parts = pool.starmap(play, jobs)
    rows = [{"group": g, "dataset": d, "peft_mean_completion": statistics.fmean(p["peft"])}
            for (g, d), p in zip(pairs, parts, strict=True)]  # fmt: skip
    for r in rows:
        print(f"{r['group']:9s} {r['peft_mean_completion']:9.1f} s  {r['dataset']}")
    OUT.write_text(json.dumps({"seed": SEED, "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
