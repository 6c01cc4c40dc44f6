"""Issue 13: the shipped small-DAG entry on the test episodes of ``wf_small_search_budget.py``
(``seed=4``, seeds 10,100-10,299), beside PEFT, with each episode's gap to the optimum: the
goal's figure for the entry on that set, measured rather than assumed (its threshold, chosen on
validation in round W8, is never to depart, so it should play PEFT's schedule). Nothing is
chosen on it.

    python docs/results/wf_small_entry_budget_test.py   # about a minute

Writes ``docs/results/wf_small_entry_budget_test.json``.
"""

import json

import numpy as np
from make_zoo import ROOT
from make_zoo_wf_small import TEST, judge
from wf_small_search_budget import EPISODES, TEST_SEED

from rlsched.stats import bootstrap_mean_ci, paired
from rlsched.zoo import ZOO_DIR

ENTRY = f"learned:{ZOO_DIR / 'workflow-small-dag-departures' / 'model'}"
EXTRA = {"lookahead": True, "finish_gap": True, "optimistic_cost": True, "contention": True,
         "dag": True}  # fmt: skip
OUT = ROOT / "docs/results/wf_small_entry_budget_test.json"


def main() -> None:
    rep, gaps = judge(TEST, TEST_SEED, f"peft,{ENTRY}", EXTRA, episodes=EPISODES)
    rows = {r["policy"]: r for r in rep["results"]}
    out: dict = {"dataset": TEST, "seed": TEST_SEED, "episodes": EPISODES}
    for name, key in (("peft", "peft"), (ENTRY, "entry")):
        g = np.asarray(gaps[name])
        lo, hi = bootstrap_mean_ci(g)
        out[key] = {"mean_completion": rows[name]["metrics"]["mean_completion"],
                    "gap_mean": float(g.mean()), "gap_ci95": [lo, hi]}  # fmt: skip
    out["entry_vs_peft"] = paired(rows[ENTRY]["episode_values"], rows["peft"]["episode_values"],
                                  direction="lower", reference="peft",
                                  metric="mean_completion").to_json()  # fmt: skip
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    p = out["entry_vs_peft"]
    print(f"entry {out['entry']['gap_mean']:.2%}, PEFT {out['peft']['gap_mean']:.2%}; "
          f"entry vs PEFT {p['mean_diff']:+.3f} [{p['ci95'][0]:+.3f}, {p['ci95'][1]:+.3f}] "
          f"{p['wins']}/{p['ties']}/{p['losses']}")  # fmt: skip


if __name__ == "__main__":
    main()
