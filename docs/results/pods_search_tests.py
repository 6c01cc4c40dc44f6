"""Issue 13, descriptive (nothing chosen or shipped): the search teacher over greedy_migration
on the two fixed tests where PodRebalancing's zoo entry failed.

The entry (``pod-rebalancing-anchored-ppo``) is significantly worse than greedy_migration on
its fixed test cluster (seeds 9000-9029) and shows no significant difference on round L3's
(seeds 9300-9329). The search teacher, ``rollout:greedy_migration`` with the env's rollout
options (horizon 32 decisions, 4 sampled futures, 8 candidates; not tuned, as in
docs/results.md's table of the search teacher), was better than greedy on the card's 10 test
episodes. This plays it and greedy_migration on the same 60 episodes, with the entry's env
arguments and preset, paired; the clairvoyant oracle's episode values on those episodes are
read from ``confirm_pod-rebalancing-anchored-ppo_seed9000.json`` and ``..._seed9300.json``
(greedy's values here must equal the ones recorded there, which checks that the episodes are
the same) to give the share of the oracle's headroom the search closes.

    python docs/results/pods_search_tests.py   # about 8 min on two processes

Writes ``docs/results/pods_search_tests.json``.
"""

import json
import time
from multiprocessing import Pool

import numpy as np
from make_zoo import ROOT

from rlsched.evaluate import compare
from rlsched.stats import bootstrap_mean_ci, paired

ENV = "rlsched/PodRebalancing-v0"
SEARCH = "rollout:greedy_migration"
SEEDS = (9000, 9300)
EPISODES, HALF = 30, 15
OUT = ROOT / "docs/results/pods_search_tests.json"


def recorded(seed: int) -> dict:
    return json.loads((ROOT / f"docs/results/confirm_pod-rebalancing-anchored-ppo_seed{seed}.json")
                      .read_text())  # fmt: skip


def play(first: int) -> tuple[int, dict[str, list[float]]]:
    rec = recorded(max(s for s in SEEDS if s <= first))  # the fixed test this half is of
    rep = compare(ENV, rec["dataset"], f"greedy_migration,{SEARCH}", episodes=HALF, seed=first,
                  env_kwargs=rec["env_kwargs"])  # fmt: skip
    return first, {r["policy"]: r["episode_values"] for r in rep["results"]}


def main() -> None:
    t0 = time.time()
    jobs = [s + k * HALF for s in SEEDS for k in range(EPISODES // HALF)]
    with Pool(2) as pool:
        played = dict(pool.map(play, jobs))
    out: dict = {"search": SEARCH, "episodes_per_test": EPISODES, "tests": {}}
    for seed in SEEDS:
        rec = recorded(seed)
        vals = {p: [v for k in range(EPISODES // HALF) for v in played[seed + k * HALF][p]]
                for p in ("greedy_migration", SEARCH)}  # fmt: skip
        same = bool(np.allclose(vals["greedy_migration"],
                                rec["episode_values"]["greedy_migration"]))  # fmt: skip
        g, s = np.asarray(vals["greedy_migration"]), np.asarray(vals[SEARCH])
        o = np.asarray(rec["episode_values"]["clairvoyant"])
        p = paired(vals[SEARCH], vals["greedy_migration"], direction="lower",
                   reference="greedy_migration", metric="violations").to_json()  # fmt: skip
        share = float((g.mean() - s.mean()) / (g.mean() - o.mean()))
        rng = np.random.default_rng(0)
        idx = rng.integers(0, len(g), size=(10_000, len(g)))
        num, den = g[idx].mean(1) - s[idx].mean(1), g[idx].mean(1) - o[idx].mean(1)
        boot = num[den > 0] / den[den > 0]
        out["tests"][str(seed)] = {
            "dataset": rec["dataset"], "env_kwargs": rec["env_kwargs"],
            "greedy_matches_recorded": same,
            "means": {"greedy_migration": float(g.mean()), "search": float(s.mean()),
                      "clairvoyant (recorded)": float(o.mean()),
                      "entry (recorded)": float(np.mean(
                          rec["episode_values"]["learned:zoo/pod-rebalancing-anchored-ppo"]))},
            "search_vs_greedy": p,
            "headroom_closed": {"share": share,
                                "ci95": [float(np.percentile(boot, 2.5)),
                                         float(np.percentile(boot, 97.5))]},
            "episode_values": vals,
        }  # fmt: skip
        print(f"seeds {seed}+: greedy {g.mean():.1f}, search {s.mean():.1f} (recorded oracle "
              f"{o.mean():.1f}); search vs greedy {p['mean_diff']:+.2f} [{p['ci95'][0]:+.2f}, "
              f"{p['ci95'][1]:+.2f}] {p['wins']}/{p['ties']}/{p['losses']} {p['verdict']}; "
              f"headroom closed {share:.0%}; greedy as recorded: {same}", flush=True)  # fmt: skip
    both = {p: [v for s in SEEDS for v in out["tests"][str(s)]["episode_values"][p]]
            for p in ("greedy_migration", SEARCH)}  # fmt: skip
    diff = np.asarray(both[SEARCH]) - np.asarray(both["greedy_migration"])
    lo, hi = bootstrap_mean_ci(diff)
    out["pooled"] = {"episodes": len(diff), "mean_diff": float(diff.mean()), "ci95": [lo, hi]}
    out["seconds"] = round(time.time() - t0)
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print(f"pooled: {diff.mean():+.2f} [{lo:+.2f}, {hi:+.2f}]; wrote {OUT} in {out['seconds']} s")


if __name__ == "__main__":
    main()
