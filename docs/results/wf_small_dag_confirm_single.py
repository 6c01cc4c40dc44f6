"""Issue 13, descriptive (added after the confirmatory test had run; nothing chosen on it): the
entry's predecessor, round W18's single network, on the confirmatory test's 3,000 episodes
(``wf_small_dag_confirm.py``), paired with the entry, resampling workflows: whether the
ensemble's gain over one network holds on workflows neither has played.

    python docs/results/wf_small_dag_confirm_single.py [--workers 2]

Writes ``docs/results/wf_small_dag_confirm_single.json``.
"""

import argparse
import json
import time

from make_zoo import ROOT
from wf_small_dag_confirm import DATA, ENTRY, EPISODES, played
from wf_small_dag_instances import by_workflow_ci

SINGLE = f"learned:{ROOT / 'configs/zoo/start/workflow-small-dag-dagger-slow/model'}"
OUT = ROOT / "docs/results/wf_small_dag_confirm_single.json"


def main(workers: int) -> None:
    t0 = time.time()
    workflow, gaps = played(("peft", SINGLE, ENTRY), workers)
    single, entry = gaps[SINGLE], gaps[ENTRY]
    d = entry - single
    out = {"dataset": DATA, "episodes": EPISODES, "single": SINGLE,
           "single_mean_gap": float(single.mean()), "single_ci95": by_workflow_ci(single, workflow),
           "entry_mean_gap": float(entry.mean()),
           "entry_minus_single": {"mean": float(d.mean()), "ci95": by_workflow_ci(d, workflow),
                                  "lower_same_higher": [int((d < -1e-9).sum()),
                                                        int((abs(d) <= 1e-9).sum()),
                                                        int((d > 1e-9).sum())]},
           "seconds": round(time.time() - t0)}  # fmt: skip
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workers", type=int, default=2)
    main(ap.parse_args().workers)
