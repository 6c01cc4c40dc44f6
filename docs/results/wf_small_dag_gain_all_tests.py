"""Issue 13, descriptive (nothing chosen on it): the small-DAG entry of round W13,
``workflow-small-dag-gain`` (PEFT plus a network over the whole workflow and PEFT's schedule
of the rest of it, fitted to the search teacher's relative gain of each server), on every test
episode the small-DAG split has served: the 1,480 of ``wf_small_search_ranked_all_tests.py``,
round W12's 200 (seeds 10,700+) and round W13's own 200 (10,900+), 1,880 in all, beside PEFT,
HEFT and the search over PEFT's four best servers, with every episode's gap to the isolated
CP-SAT optimum, per set and pooled. Its card's test (seeds 1000+) and its round's test are
among them; the rest it never met.

    python docs/results/wf_small_dag_gain_all_tests.py [--workers 1]   # about 20 min on one

Writes ``docs/results/wf_small_dag_gain_all_tests.json``.
"""

import argparse
import json
import time
from multiprocessing import Pool

import numpy as np
from make_zoo import ROOT
from make_zoo_wf_small import TEST, judge
from wf_small_search_all_tests import SETS

from rlsched.stats import bootstrap_mean_ci, paired
from rlsched.zoo import ZOO_DIR

ENTRY = f"learned:{ZOO_DIR / 'workflow-small-dag-gain' / 'model'}"
SEARCH = "rollout:peft?top_k=4&horizon=end&futures=0&score=return&reward=makespan"
POLICIES = ("peft", "heft", SEARCH, ENTRY)
NAMES = {"peft": "PEFT", "heft": "HEFT", SEARCH: "search K=4", ENTRY: "entry"}
EXTRA = {"lookahead": True, "finish_gap": True, "optimistic_cost": True, "contention": True,
         "dag": True, "dag_plan": True}  # fmt: skip
ALL_SETS = {**SETS, 10_500: 200, 10_700: 200, 10_900: 200}
OUT = ROOT / "docs/results/wf_small_dag_gain_all_tests.json"


def play(job: tuple[int, int]) -> tuple[int, dict]:
    seed, episodes = job
    rep, gaps = judge(TEST, seed, ",".join(POLICIES), EXTRA, episodes=episodes)
    rows = {r["policy"]: r for r in rep["results"]}
    return seed, {p: {"values": rows[p]["episode_values"], "gaps": gaps[p]} for p in POLICIES}


def main(workers: int) -> None:
    t0 = time.time()
    jobs = sorted(ALL_SETS.items(), key=lambda kv: -kv[1])
    with Pool(workers) as pool:
        played = dict(pool.imap_unordered(play, jobs))
    out: dict = {"dataset": TEST, "entry": ENTRY, "search": SEARCH, "sets": {}}
    for seed in sorted(played):
        r = played[seed]
        g = {p: float(np.mean(r[p]["gaps"])) for p in POLICIES}
        v = paired(r[ENTRY]["values"], r["peft"]["values"], direction="lower", reference="peft",
                   metric="mean_completion").to_json()  # fmt: skip
        out["sets"][str(seed)] = {"episodes": ALL_SETS[seed], "gap_mean": g, "entry_vs_peft": v}
        print(f"seeds {seed}+: " + ", ".join(f"{NAMES[p]} {g[p]:.2%}" for p in POLICIES)
              + f"; entry vs PEFT {v['mean_diff']:+.3f} [{v['ci95'][0]:+.3f}, "
              f"{v['ci95'][1]:+.3f}] {v['wins']}/{v['ties']}/{v['losses']}",
              flush=True)  # fmt: skip
    pooled: dict = {}
    for p in POLICIES:
        gaps = np.concatenate([played[s][p]["gaps"] for s in sorted(played)])
        lo, hi = bootstrap_mean_ci(gaps)
        pooled[p] = {"gap_mean": float(gaps.mean()), "gap_ci95": [lo, hi]}
    values = {p: np.concatenate([played[s][p]["values"] for s in sorted(played)])
              for p in POLICIES}  # fmt: skip

    def pair(a: str, b: str, name: str) -> dict:
        return paired(values[a], values[b], direction="lower", reference=name,
                      metric="mean_completion").to_json()  # fmt: skip

    for p in ("heft", SEARCH, ENTRY):
        pooled[p]["vs_peft"] = pair(p, "peft", "peft")
    pooled[SEARCH]["vs_entry"] = pair(SEARCH, ENTRY, "entry")
    out["pooled"] = {"episodes": int(sum(ALL_SETS.values())), **pooled}
    out["seconds"] = round(time.time() - t0)
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    for p in POLICIES:
        q = pooled[p]
        extra = ""
        if "vs_peft" in q:
            v = q["vs_peft"]
            extra = (
                f"; vs PEFT {v['mean_diff']:+.3f} s [{v['ci95'][0]:+.3f}, "
                f"{v['ci95'][1]:+.3f}] {v['wins']}/{v['ties']}/{v['losses']} {v['verdict']}"
            )
        print(f"pooled {NAMES[p]}: {q['gap_mean']:.2%} [{q['gap_ci95'][0]:.2%}, "
              f"{q['gap_ci95'][1]:.2%}]{extra}", flush=True)  # fmt: skip
    print(f"wrote {OUT} in {out['seconds']} s")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workers", type=int, default=1)
    main(ap.parse_args().workers)
