"""Issue 13: a confirmatory test of the small-DAG entry on workflows no policy has played, fixed
here (2026-12-03, twenty-fifth session) before it ran, run once, reported whatever it shows.

Why: the split's test set holds 30 workflows, so its 3,480 test episodes are draws from 150
problems (``wf_small_dag_instances.py``); resampling workflows, the entry's mean gap to the
optimum is 1.83% with a 95% interval of 0.94-2.75%, which cannot say whether the goal's 2% is
met. This test draws from many more workflows of the same test world (the five function types
that ``seed=4`` makes; no network was trained, validated or chosen on them).

The rule:

- Data: ``synthetic:placement?workflows=20000&tasks=15&seed=4`` (20,000 workflows of the test
  world's function types, none of them among the split's 30), 3,000 episodes, seeds
  1000-3999 (each draws a workflow and an origin: about 2,800 distinct workflows).
- Players: the entry as shipped (``workflow-small-dag-ensemble``; since round W23 in
  ``configs/zoo/start/``), PEFT, HEFT and
  the search over PEFT's four best servers, each episode's gap to the isolated CP-SAT optimum.
- Intervals: 95%, resampling workflows (each resampled workflow carries all its draws).
- The goal "within 2% of the CP-SAT optimum on average" is called **met** if the entry's mean
  gap and its whole interval are below 2%; **met on the mean, not significantly** if the mean
  is below 2% and the interval reaches it; **not met** otherwise. The entry against PEFT:
  **better** where the interval of its gap less PEFT's lies below zero.

    python docs/results/wf_small_dag_confirm.py [--workers 2]   # a few minutes

Writes ``docs/results/wf_small_dag_confirm.json``.
"""

import argparse
import json
import time
from multiprocessing import Pool

import numpy as np
from make_zoo import ROOT
from make_zoo_wf_small import ENV, KWARGS, PRESET, judge
from wf_small_dag_gain_all_tests import EXTRA, SEARCH
from wf_small_dag_instances import by_workflow_ci, problems

from rlsched.evaluate import make_env

DATA = "synthetic:placement?workflows=20000&tasks=15&seed=4"
FIRST, EPISODES, CHUNK = 1000, 3000, 250
# the entry then; retired by round W23 to configs/zoo/start/
ENTRY = f"learned:{ROOT / 'configs/zoo/start/workflow-small-dag-ensemble/model'}"
POLICIES = ("peft", "heft", SEARCH, ENTRY)
NAMES = {"peft": "PEFT", "heft": "HEFT", SEARCH: "search K=4", ENTRY: "entry"}
OUT = ROOT / "docs/results/wf_small_dag_confirm.json"


def play(job: tuple[int, int, tuple[str, ...], str]) -> tuple[int, dict]:
    """One chunk of ``n`` episodes of ``data`` from seed ``first``: each policy's gaps, and
    each episode's workflow."""
    first, n, policies, data = job
    _, gaps = judge(data, first, ",".join(policies), EXTRA, episodes=n)
    env = make_env(ENV, data, **{**KWARGS, **EXTRA, "scenario": PRESET})
    picks = [w for _, w, _ in problems(env, {first: n})]
    return first, {"gaps": {p: gaps[p] for p in policies}, "workflow": picks}


def played(policies: tuple[str, ...], workers: int, data: str = DATA, first: int = FIRST,
           n: int = EPISODES) -> tuple[np.ndarray, dict[str, np.ndarray]]:  # fmt: skip
    """Every episode's workflow, and each policy's gap per episode (seeds ``first`` to
    ``first + n - 1`` of ``data``), in chunks on ``workers`` processes."""
    jobs = [(f, min(CHUNK, first + n - f), policies, data) for f in range(first, first + n, CHUNK)]
    with Pool(workers) as pool:
        chunks = dict(pool.imap_unordered(play, jobs))
    order = sorted(chunks)
    workflow = np.concatenate([chunks[c]["workflow"] for c in order])
    return workflow, {p: np.concatenate([chunks[c]["gaps"][p] for c in order]) for p in policies}


def main(workers: int) -> None:
    t0 = time.time()
    workflow, gaps = played(POLICIES, workers)
    out: dict = {"rule": "docs/results/wf_small_dag_confirm.py", "dataset": DATA,
                 "seeds": [FIRST, FIRST + EPISODES - 1], "episodes": EPISODES,
                 "workflows": len(np.unique(workflow)), "policies": {}}  # fmt: skip
    for p in POLICIES:
        lo, hi = by_workflow_ci(gaps[p], workflow)
        out["policies"][NAMES[p]] = {"spec": p, "mean_gap": float(gaps[p].mean()),
                                     "ci95": [lo, hi]}  # fmt: skip
        print(f"{NAMES[p]}: {gaps[p].mean():.2%} [{lo:.2%}, {hi:.2%}]", flush=True)
    for p in ("peft", "heft", SEARCH):
        d = gaps[ENTRY] - gaps[p]
        lo, hi = by_workflow_ci(d, workflow)
        out["policies"]["entry"][f"minus_{NAMES[p]}"] = {
            "mean": float(d.mean()), "ci95": [lo, hi],
            "lower_same_higher": [int((d < -1e-9).sum()), int((abs(d) <= 1e-9).sum()),
                                  int((d > 1e-9).sum())]}  # fmt: skip
        print(f"entry - {NAMES[p]}: {d.mean():+.2%} [{lo:+.2%}, {hi:+.2%}]", flush=True)
    e = out["policies"]["entry"]
    if e["ci95"][1] < 0.02:
        out["goal"] = "met"
    elif e["mean_gap"] < 0.02:
        out["goal"] = "met on the mean, not significantly"
    else:
        out["goal"] = "not met"
    out["seconds"] = round(time.time() - t0)
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print(f"{out['workflows']} distinct workflows; goal: {out['goal']}; wrote {OUT} in "
          f"{out['seconds']} s")  # fmt: skip


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workers", type=int, default=2)
    main(ap.parse_args().workers)
