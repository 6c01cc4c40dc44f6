"""Issue 13, descriptive (nothing chosen on it): the search over four servers on every test
episode the small-DAG split has served (as run: PEFT's own, the lowest valid one and two drawn
at random, since PEFT ranked no servers until a fix later on 2026-12-03).

``wf_small_search_budget.py`` chose the budget (``K=4``) on a fresh world and tested it on
200 episodes (seeds 10,100+): 1.63% from the optimum where PEFT was 3.44%, a hard draw for
PEFT. The goal asks for a mean gap within 2%, and the split's test sets differ by two points
for PEFT, so this plays the same search, PEFT and HEFT on all 1,280 test episodes the split
has had (seeds 1000+, 4000+, ..., 9000+: 40 each; 9,500+, 9,700+, 9,900+, 10,100+, 10,300+:
200 each), with every episode's gap to the isolated CP-SAT optimum, per set and pooled.

    python docs/results/wf_small_search_all_tests.py   # about 5 min on two processes

Writes ``docs/results/wf_small_search_all_tests.json``.
"""

import json
import time
from multiprocessing import Pool
from pathlib import Path

import numpy as np
from make_zoo import ROOT
from make_zoo_wf_small import TEST, judge

from rlsched.stats import bootstrap_mean_ci, paired

SEARCH = "rollout:peft?top_k=4&horizon=end&futures=0&score=return&reward=makespan"
POLICIES = ("peft", "heft", SEARCH)
EXTRA = {"lookahead": True, "finish_gap": True, "optimistic_cost": True, "contention": True}
SETS = {1000: 40, 4000: 40, 5000: 40, 6000: 40, 7000: 40, 8000: 40, 9000: 40,
        9500: 200, 9700: 200, 9900: 200, 10_100: 200, 10_300: 200}  # fmt: skip
OUT = ROOT / "docs/results/wf_small_search_all_tests.json"


def play(job: tuple[int, int]) -> tuple[int, dict]:
    seed, episodes = job
    rep, gaps = judge(TEST, seed, ",".join(POLICIES), EXTRA, episodes=episodes)
    rows = {r["policy"]: r for r in rep["results"]}
    return seed, {p: {"values": rows[p]["episode_values"], "gaps": gaps[p]} for p in POLICIES}


def pooled_gaps(played: dict, policies: tuple, compared: tuple) -> tuple[dict, dict]:
    """Every set of ``played`` pooled: each policy's mean gap with its 95% interval, and each
    of ``compared`` paired with PEFT on mean completion; also each policy's values."""
    pooled: dict = {}
    for p in policies:
        gaps = np.concatenate([played[s][p]["gaps"] for s in sorted(played)])
        lo, hi = bootstrap_mean_ci(gaps)
        pooled[p] = {"gap_mean": float(gaps.mean()), "gap_ci95": [lo, hi]}
    values = {p: np.concatenate([played[s][p]["values"] for s in sorted(played)])
              for p in policies}  # fmt: skip
    for p in compared:
        v = paired(values[p], values["peft"], direction="lower", reference="peft",
                   metric="mean_completion")  # fmt: skip
        pooled[p]["vs_peft"] = v.to_json()
    return pooled, values


def print_pooled(pooled: dict, names: dict) -> None:
    """One line per policy of :func:`pool`'s record (``names``: how each is printed)."""
    for p, name in names.items():
        q = pooled[p]
        extra = ""
        if "vs_peft" in q:
            v = q["vs_peft"]
            extra = (f"; vs PEFT {v['mean_diff']:+.3f} s [{v['ci95'][0]:+.3f}, "
                     f"{v['ci95'][1]:+.3f}] {v['wins']}/{v['ties']}/{v['losses']} {v['verdict']}")
        print(f"pooled {name}: {q['gap_mean']:.2%} [{q['gap_ci95'][0]:.2%}, "
              f"{q['gap_ci95'][1]:.2%}]{extra}", flush=True)  # fmt: skip


def main(sets: dict[int, int] = SETS, out_path: Path = OUT) -> None:
    """Every set of ``sets`` (first seed: episodes); ``wf_small_search_ranked_all_tests.py``
    runs it again with PEFT's best servers as the candidates."""
    t0 = time.time()
    with Pool(2) as pool:
        played = dict(pool.map(play, sorted(sets.items(), key=lambda kv: -kv[1])))
    out: dict = {"dataset": TEST, "search": SEARCH, "sets": {}}
    for seed in sorted(played):
        r = played[seed]
        out["sets"][str(seed)] = {
            "episodes": sets[seed],
            "gap_mean": {p: float(np.mean(r[p]["gaps"])) for p in POLICIES},
        }
        g = out["sets"][str(seed)]["gap_mean"]
        print(f"seeds {seed}+: PEFT {g['peft']:.2%}, HEFT {g['heft']:.2%}, "
              f"search {g[SEARCH]:.2%}", flush=True)  # fmt: skip
    pooled, _ = pooled_gaps(played, POLICIES, ("heft", SEARCH))
    out["pooled"] = {"episodes": int(sum(sets.values())), **pooled}
    out["seconds"] = round(time.time() - t0)
    out_path.write_text(json.dumps(out, indent=1) + "\n")
    print_pooled(pooled, {p: p for p in POLICIES})
    print(f"wrote {out_path} in {out['seconds']} s")


if __name__ == "__main__":
    main()
