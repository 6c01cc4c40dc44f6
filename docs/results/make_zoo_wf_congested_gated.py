"""Issue 13, round C4: round C3's recipe with labels from the significance-gated search.

Why: round C3's network departed from PEFT on the three families no run trains on, and every
threshold that departed had a higher mean completion than PEFT there. The search its labels
came from was itself worse than PEFT on one of them (soykb, +11.5%): with two sampled futures
per server, the best of four noisy means is often noise (the winner's curse). The same search
with ``significance=2`` (a server leaves PEFT's only where its gain, future by future, is two
standard errors above zero) was not worse than PEFT on any of the three (round C3's validation
episodes: cycles -0.46%, seismology -0.15%, better; soykb +0.17%, no significant difference;
``wf_congested_gated_search.py``, ``wf_congested_gated_families.py``). The values a gain
regression fits are the same under either search; what the gate adds is *where the teacher
acts*. ``departure_gate: true`` (new) caps every gain at 0 where the gated teacher kept PEFT's
server, so the network is taught restraint where a higher mean was noise.

    rlsched train --config configs/workflow_offloading_congested_gated_labels.yaml --seed 0 \\
        --out runs/zoo/workflow_offloading_congested_gated_labels/seed0   # round C1's 500
    rlsched train --config configs/workflow_offloading_congested_gated.yaml --seed 1 \\
        --out runs/zoo/workflow_offloading_congested_gated/seed1
    python docs/results/make_zoo_wf_congested_gated.py   # about 20 min on two processes

The rule, fixed here (2026-12-05, before any label of the round was collected):

1. Candidate: that run's network. Labels: round C1's 500 episodes and round C3's 220 (the
   same configs and seeds, so the same states of PEFT's play and the same values of each
   server), each decision's action from the gated search (``significance: 2``, otherwise
   round C1's teacher: to the episode's end, 2 sampled futures, PEFT's 4 best servers). Fit
   as round C3 (a fresh network, width 32, two rounds of messages, relative gains clipped at
   0.25, Huber, at most 20 epochs, patience 3 on a tenth of the workflows kept aside), with
   ``departure_gate: true``. One seed.
2. Threshold: among the trainer's eight quantiles of its training scores (0.9 to 0.999) and
   never departing, on 30 episodes of the three unused families with workflows no round has
   played (``wfcommons:cycles?tasks=80``, ``seismology?tasks=110``, ``soykb?tasks=100``,
   each ``seed=24&workflows=4``; 10 episodes each, seeds 66,000+), scored by each episode's
   mean completion relative to PEFT's, averaged; kept: the lowest, equal ones to the higher
   threshold. (The trainer's own choice, on a training family, is not used.)
3. Eligible only if (a) the kept threshold departs, (b) it decides in under 0.2 ms (median
   ``act`` over 300 states of PEFT's play on the test data, one core), and (c) it is not
   significantly worse than the best of HEFT and PEFT on validation (4., paired 95%).
4. Validation: 30 episodes of the same families with other new workflows (``seed=25``; 10
   each, seeds 67,000+): HEFT, PEFT, the entry (``workflow-congested-departures``) and the
   candidate, relative to PEFT, paired. Kept: an eligible candidate with a lower mean than
   the entry's; equal means go to the entry. A kept candidate becomes the entry
   ``workflow-congested-gated`` (the kept threshold written into its model) and
   ``workflow-congested-departures`` goes to ``configs/zoo/start/``.
5. Test, whatever the choice: 30 fresh episodes of the split's test set (seeds
   28,000-28,029; no earlier run played them): HEFT, PEFT, the entry and the candidate, mean
   completion, each pair's paired 95% interval. Nothing is chosen on test.
6. Descriptive, nothing chosen on it: round C3's network (the same recipe without the gate,
   ``runs/zoo/workflow_offloading_congested_families/seed1``) at its own eight thresholds on
   the episodes of 2., so the gate's effect is read on the same episodes.

Writes ``docs/results/wf_congested_gated_choice.json``.
"""

from __future__ import annotations

import json
import statistics
import time

from make_zoo import ROOT
from make_zoo_wf_congested_families import PER_FAMILY, families, judge, ship

ENV = "rlsched/WorkflowOffloading-v0"
RUN = ROOT / "runs/zoo/workflow_offloading_congested_gated/seed1"
UNGATED = ROOT / "runs/zoo/workflow_offloading_congested_families/seed1"
OLD, NEW = "workflow-congested-departures", "workflow-congested-gated"
ROUND = "round C4 (docs/results/make_zoo_wf_congested_gated.py)"
CHOICE = tuple(
    f"wfcommons:{f}&seed=24&workflows=4"
    for f in ("cycles?tasks=80", "seismology?tasks=110", "soykb?tasks=100")
)
VALIDATION = tuple(f.replace("seed=24", "seed=25") for f in CHOICE)
CHOICE_SEED, VAL_SEED, TEST_SEED = 66_000, 67_000, 28_000
OUT = ROOT / "docs/results/wf_congested_gated_choice.json"


def thresholds(run) -> dict[str, str]:
    """Each threshold the run's trainer tried (its quantiles and never) as a policy spec."""
    tried = [r["threshold"] for r in json.loads((run / "run.json").read_text())["threshold_choice"]]
    return {t: f"learned:{run / 'model'}?threshold={t}" for t in tried}


def main() -> None:
    t0 = time.time()
    run = json.loads((RUN / "run.json").read_text())
    out: dict = {"run": str(RUN.relative_to(ROOT)), "teacher": run["teacher"], "fit": run["fit"],
                 "train_seconds": run["seconds"],
                 "trainer_threshold_choice": run["threshold_choice"]}  # fmt: skip
    specs = thresholds(RUN)
    ungated = {t: s for t, s in thresholds(UNGATED).items() if t != "inf"}  # inf: PEFT again
    print(f"thresholds {list(specs)} (and round C3's {list(ungated)}) on "
          f"{len(CHOICE) * PER_FAMILY} episodes, seeds {CHOICE_SEED}+")  # fmt: skip
    rel = families(CHOICE, CHOICE_SEED, [*specs.values(), *ungated.values()], RUN)
    table = [{"threshold": t, "mean_relative_to_peft": statistics.fmean(rel[s])}
             for t, s in specs.items()]  # fmt: skip
    out["ungated_threshold_table"] = [
        {"threshold": t, "mean_relative_to_peft": statistics.fmean(rel[s])}
        for t, s in ungated.items()
    ]
    for row, other in zip(table, out["ungated_threshold_table"], strict=False):
        print(f"  threshold {row['threshold']}: {row['mean_relative_to_peft']:+.5f}  "
              f"(round C3's {other['threshold']}: {other['mean_relative_to_peft']:+.5f})",
              flush=True)  # fmt: skip
    kept = min(table, key=lambda r: (r["mean_relative_to_peft"], -float(r["threshold"])))
    out["threshold_choice"], out["kept_threshold"] = table, kept["threshold"]
    if judge(out, specs[kept["threshold"]], t0, RUN, VALIDATION, (VAL_SEED, TEST_SEED), OUT):
        ship(out, RUN, NEW, ROUND, VAL_SEED)


if __name__ == "__main__":
    main()
