"""Issue 13, descriptive (nothing chosen on it): the small-DAG entry of round W13,
``workflow-small-dag-gain`` (PEFT plus a network over the whole workflow and PEFT's schedule
of the rest of it, fitted to the search teacher's relative gain of each server), on every test
episode the small-DAG split has served: the 1,480 of ``wf_small_search_ranked_all_tests.py``,
round W12's 200 (seeds 10,700+) and round W13's own 200 (10,900+), 1,880 in all, beside PEFT,
HEFT and the search over PEFT's four best servers, with every episode's gap to the isolated
CP-SAT optimum, per set and pooled. Its card's test (seeds 1000+) and its round's test are
among them; the rest it never met.

``--entry workflow-small-dag-gain-more`` plays round W14's entry, which replaced it, on those
and round W14's 200 (seeds 11,100+), 2,080 in all; ``--entry workflow-small-dag-gain-most``
round W15's, on those and round W15's 200 (seeds 11,300+), 2,280 in all;
``--entry workflow-small-dag-dagger-slow`` round W18's, on those and rounds W16-W19's 800
(seeds 11,500+, 11,700+, 11,900+ and 12,100+), 3,080 in all; ``--entry
workflow-small-dag-ensemble`` round W20's, on those and rounds W20's and W21's 200 (seeds
12,300+ and 12,500+), 3,480 in all, beside round W18's entry that it replaced (paired with it
per set and pooled).

    python docs/results/wf_small_dag_gain_all_tests.py [--workers 2] [--entry NAME]

Writes ``docs/results/wf_small_dag_gain_all_tests.json`` (round W14's entry:
``wf_small_dag_gain_more_all_tests.json``); 94 s on one process for 1,880 episodes.
"""

import argparse
import json
import time
from multiprocessing import Pool

import numpy as np
from make_zoo import ROOT
from make_zoo_wf_small import TEST, judge
from wf_small_search_all_tests import SETS, pooled_gaps, print_pooled

from rlsched.stats import paired

#: the entry each run plays (``--entry``): its model (round W13's retired to configs/zoo/start
#: by round W14), its test sets and its record
RUNS = {
    "workflow-small-dag-gain": (ROOT / "configs/zoo/start/workflow-small-dag-gain/model",
                                {**SETS, 10_500: 200, 10_700: 200, 10_900: 200},
                                "docs/results/wf_small_dag_gain_all_tests.json"),
    "workflow-small-dag-gain-more": (ROOT / "configs/zoo/start/workflow-small-dag-gain-more/model",
                                     {**SETS, 10_500: 200, 10_700: 200, 10_900: 200,
                                      11_100: 200},
                                     "docs/results/wf_small_dag_gain_more_all_tests.json"),
    "workflow-small-dag-gain-most": (ROOT / "configs/zoo/start/workflow-small-dag-gain-most/model",
                                     {**SETS, 10_500: 200, 10_700: 200, 10_900: 200,
                                      11_100: 200, 11_300: 200},
                                     "docs/results/wf_small_dag_gain_most_all_tests.json"),
    "workflow-small-dag-dagger-slow": (ROOT / "configs/zoo/start/workflow-small-dag-dagger-slow"
                                       / "model",
                                       {**SETS, 10_500: 200, 10_700: 200, 10_900: 200,
                                        11_100: 200, 11_300: 200, 11_500: 200, 11_700: 200,
                                        11_900: 200, 12_100: 200},
                                       "docs/results/wf_small_dag_dagger_slow_all_tests.json"),
    "workflow-small-dag-ensemble": (ROOT / "configs/zoo/start/workflow-small-dag-ensemble"
                                    / "model",
                                    {**SETS, 10_500: 200, 10_700: 200, 10_900: 200,
                                     11_100: 200, 11_300: 200, 11_500: 200, 11_700: 200,
                                     11_900: 200, 12_100: 200, 12_300: 200, 12_500: 200},
                                    "docs/results/wf_small_dag_ensemble_all_tests.json"),
}  # fmt: skip
#: an entry's predecessor, played beside it (paired with it)
BEFORE = {"workflow-small-dag-ensemble": "workflow-small-dag-dagger-slow"}
SEARCH = "rollout:peft?top_k=4&horizon=end&futures=0&score=return&reward=makespan"
EXTRA = {"lookahead": True, "finish_gap": True, "optimistic_cost": True, "contention": True,
         "dag": True, "dag_plan": True}  # fmt: skip


def play(job: tuple[int, int, str, tuple[str, ...]]) -> tuple[int, dict]:
    seed, episodes, entry, before = job
    policies = ("peft", "heft", SEARCH, entry, *before)
    rep, gaps = judge(TEST, seed, ",".join(policies), EXTRA, episodes=episodes)
    rows = {r["policy"]: r for r in rep["results"]}
    return seed, {p: {"values": rows[p]["episode_values"], "gaps": gaps[p]} for p in policies}


def main(workers: int, name: str) -> None:
    t0 = time.time()
    model, sets, out_file = RUNS[name]
    entry = f"learned:{model}"
    before = tuple(f"learned:{RUNS[b][0]}" for b in [BEFORE[name]] if name in BEFORE)
    policies = ("peft", "heft", SEARCH, entry, *before)
    names = {"peft": "PEFT", "heft": "HEFT", SEARCH: "search K=4", entry: "entry",
             **{b: "the entry before" for b in before}}  # fmt: skip
    out_path = ROOT / out_file
    jobs = [(seed, k, entry, before) for seed, k in sorted(sets.items(), key=lambda kv: -kv[1])]
    with Pool(workers) as pool:
        played = dict(pool.imap_unordered(play, jobs))
    out: dict = {"dataset": TEST, "entry": entry, "search": SEARCH, "sets": {}}
    for seed in sorted(played):
        r = played[seed]
        g = {p: float(np.mean(r[p]["gaps"])) for p in policies}
        v = paired(r[entry]["values"], r["peft"]["values"], direction="lower", reference="peft",
                   metric="mean_completion").to_json()  # fmt: skip
        out["sets"][str(seed)] = {"episodes": sets[seed], "gap_mean": g, "entry_vs_peft": v}
        for b in before:
            out["sets"][str(seed)]["entry_vs_before"] = paired(
                r[entry]["values"], r[b]["values"], direction="lower", reference=b,
                metric="mean_completion").to_json()  # fmt: skip
        print(f"seeds {seed}+: " + ", ".join(f"{names[p]} {g[p]:.2%}" for p in policies)
              + f"; entry vs PEFT {v['mean_diff']:+.3f} [{v['ci95'][0]:+.3f}, "
              f"{v['ci95'][1]:+.3f}] {v['wins']}/{v['ties']}/{v['losses']}",
              flush=True)  # fmt: skip
    pooled, values = pooled_gaps(played, policies, ("heft", SEARCH, entry, *before))
    v = paired(values[SEARCH], values[entry], direction="lower", reference="entry",
               metric="mean_completion")  # fmt: skip
    pooled[SEARCH]["vs_entry"] = v.to_json()
    for b in before:
        pooled[entry]["vs_before"] = paired(
            values[entry], values[b], direction="lower", reference=b, metric="mean_completion"
        ).to_json()
        print(f"entry vs the entry before, pooled: {pooled[entry]['vs_before']}")
    out["pooled"] = {"episodes": int(sum(sets.values())), **pooled}
    out["seconds"] = round(time.time() - t0)
    out_path.write_text(json.dumps(out, indent=1) + "\n")
    print_pooled(pooled, names)
    print(f"wrote {out_path} in {out['seconds']} s")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--entry", default="workflow-small-dag-gain", choices=list(RUNS))
    args = ap.parse_args()
    main(args.workers, args.entry)
