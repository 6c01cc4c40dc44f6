"""Issue 13, descriptive (nothing chosen on it): a round's new small-DAG entry and the entry it
replaced on the earlier tests of fresh workflows of the test world, seeds 1000-3999 of each,
paired, with intervals resampling workflows: whether the round's gain holds beyond its own
test. ``--round W23`` (added after round W23 had run): the confirmatory test's
(``wf_small_dag_confirm.py``: ``workflows=20000``) and round W22's (``workflows=30000``).
``--round W24`` (added after round W24 had run): those two and round W23's
(``workflows=40000``). ``--round W27`` (added after rounds W26 and W27 had run, 2026-12-04,
thirtieth session): round W27's entry against round W24's on all six earlier tests
(``workflows=20000`` to ``70000``; rounds W26 and W27 kept the same two networks at other
thresholds, so this says whether the thresholds chosen again moved anything beyond one draw).
``--round W28`` (fixed with round W28's rule, before its runs): if W28's candidate ships,
it and round W27's entry on the seven earlier tests (``workflows=20000`` to ``80000``); W28's
rule reads the goal over the eight draws.

    python docs/results/wf_small_dag_replay.py --round W24 [--workers 2]

Writes ``docs/results/wf_small_dag_replay.json`` (W23) or ``..._replay_w24.json`` (and
``_w27``, ``_w28``).
"""

import argparse
import json
import time

from make_zoo import ROOT
from wf_small_dag_confirm import EPISODES, FIRST, played
from wf_small_dag_instances import by_workflow_ci

START = ROOT / "configs/zoo/start"


def entry(name: str) -> str:
    """A small-DAG entry's spec: its retired folder under ``configs/zoo/start/`` once a later
    round replaced it, else the zoo's."""
    retired = START / name / "model"
    return f"learned:{retired}" if retired.is_dir() else f"learned:zoo/{name}"


TESTS = {
    "confirmatory (wf_small_dag_confirm.py)": "synthetic:placement?workflows=20000&tasks=15&seed=4",
    "round W22's": "synthetic:placement?workflows=30000&tasks=15&seed=4",
}
def tests_before(round_no: int) -> dict[str, str]:
    """The tests of fresh workflows before round ``round_no``'s own: the confirmatory test,
    then round W22's and each later round's, drawing 10,000 more workflows each time."""
    later = {f"round W{k}'s": f"synthetic:placement?workflows={(k - 19) * 10000}&tasks=15&seed=4"
             for k in range(23, round_no)}  # fmt: skip
    return {**TESTS, **later}


#: each round's new entry, the entry it replaced, the tests replayed and the record
ROUNDS = {
    "W23": (f"learned:{START / 'workflow-small-dag-ensemble-more-labels/model'}",
            f"learned:{START / 'workflow-small-dag-ensemble/model'}", TESTS,
            ROOT / "docs/results/wf_small_dag_replay.json"),
    "W24": (f"learned:{START / 'workflow-small-dag-ensemble-floor/model'}",
            f"learned:{START / 'workflow-small-dag-ensemble-more-labels/model'}",
            tests_before(24),
            ROOT / "docs/results/wf_small_dag_replay_w24.json"),
    "W27": (entry("workflow-small-dag-ensemble-onpolicy"),
            f"learned:{START / 'workflow-small-dag-ensemble-floor/model'}", tests_before(27),
            ROOT / "docs/results/wf_small_dag_replay_w27.json"),
    "W28": (entry("workflow-small-dag-ensemble-iteration"),
            entry("workflow-small-dag-ensemble-onpolicy"), tests_before(28),
            ROOT / "docs/results/wf_small_dag_replay_w28.json"),
}  # fmt: skip


def main(workers: int, name: str) -> None:
    t0 = time.time()
    new, old, tests, path = ROUNDS[name]
    out: dict = {"new": new, "old": old, "seeds": [FIRST, FIRST + EPISODES - 1], "tests": {}}
    for test, data in tests.items():
        workflow, gaps = played(("peft", old, new), workers, data)
        row: dict = {"dataset": data, "workflows": len(set(workflow.tolist()))}
        for who, spec in (("peft", "peft"), ("old", old), ("new", new)):
            row[who] = {"mean_gap": float(gaps[spec].mean()),
                        "ci95": by_workflow_ci(gaps[spec], workflow)}  # fmt: skip
        for who, spec in (("old", old), ("peft", "peft")):
            d = gaps[new] - gaps[spec]
            row[f"new_minus_{who}"] = {
                "mean": float(d.mean()), "ci95": by_workflow_ci(d, workflow),
                "lower_same_higher": [int((d < -1e-9).sum()), int((abs(d) <= 1e-9).sum()),
                                      int((d > 1e-9).sum())]}  # fmt: skip
        out["tests"][test] = row
        print(test, json.dumps(row), flush=True)
    out["seconds"] = round(time.time() - t0)
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {path} in {out['seconds']} s")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--round", default="W24", choices=list(ROUNDS))
    args = ap.parse_args()
    main(args.workers, args.round)
