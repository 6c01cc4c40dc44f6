"""Issue 13, descriptive (added after round W23 had run; nothing chosen on it): round W23's
entry and the entry it replaced on the two earlier tests of fresh workflows of the test world,
the confirmatory test's (``wf_small_dag_confirm.py``: ``workflows=20000``) and round W22's
(``workflows=30000``), seeds 1000-3999 of each, paired, with intervals resampling workflows:
whether W23's gain holds beyond its own test.

    python docs/results/wf_small_dag_replay.py [--workers 2]

Writes ``docs/results/wf_small_dag_replay.json``.
"""

import argparse
import json
import time

from make_zoo import ROOT
from wf_small_dag_confirm import EPISODES, FIRST, played
from wf_small_dag_instances import by_workflow_ci

NEW = "learned:zoo/workflow-small-dag-ensemble-more-labels"
OLD = f"learned:{ROOT / 'configs/zoo/start/workflow-small-dag-ensemble/model'}"
TESTS = {
    "confirmatory (wf_small_dag_confirm.py)": "synthetic:placement?workflows=20000&tasks=15&seed=4",
    "round W22's": "synthetic:placement?workflows=30000&tasks=15&seed=4",
}
OUT = ROOT / "docs/results/wf_small_dag_replay.json"


def main(workers: int) -> None:
    t0 = time.time()
    out: dict = {"new": NEW, "old": OLD, "seeds": [FIRST, FIRST + EPISODES - 1], "tests": {}}
    for name, data in TESTS.items():
        workflow, gaps = played(("peft", OLD, NEW), workers, data)
        row: dict = {"dataset": data, "workflows": len(set(workflow.tolist()))}
        for who, spec in (("peft", "peft"), ("old", OLD), ("new", NEW)):
            row[who] = {"mean_gap": float(gaps[spec].mean()),
                        "ci95": by_workflow_ci(gaps[spec], workflow)}  # fmt: skip
        for who, spec in (("old", OLD), ("peft", "peft")):
            d = gaps[NEW] - gaps[spec]
            row[f"new_minus_{who}"] = {
                "mean": float(d.mean()), "ci95": by_workflow_ci(d, workflow),
                "lower_same_higher": [int((d < -1e-9).sum()), int((abs(d) <= 1e-9).sum()),
                                      int((d > 1e-9).sum())]}  # fmt: skip
        out["tests"][name] = row
        print(name, json.dumps(row), flush=True)
    out["seconds"] = round(time.time() - t0)
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {OUT} in {out['seconds']} s")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workers", type=int, default=2)
    main(ap.parse_args().workers)
