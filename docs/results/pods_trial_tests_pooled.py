"""Issue 13, descriptive (nothing is chosen on it): round L7's two rule-fixed tests of the
guarded PodRebalancing entry pooled, for the headroom goal's share.

Round L7 (``make_zoo_pods_trial.py``) fixed two tests of 30 episodes of the test cluster, each
with the clairvoyant oracle on the same episodes: the fixed test (seeds 9000-9029,
``confirm_..._L7_seed9000.json``) and its own (seeds 10,200-10,229, ``..._seed10200.json``).
On each the entry is better than greedy_migration; the share of the oracle's headroom it
closes is 41% [25%, 57%] and 49% [32%, 64%], each interval reaching below a third. This pools
the 60 episodes (read from the two records; nothing is played) and gives the entry against
greedy_migration and the share with its paired bootstrap interval (``confirm_test.py``'s).

    python docs/results/pods_trial_tests_pooled.py

Writes ``docs/results/pods_trial_tests_pooled.json``.
"""

import json

import numpy as np
from confirm_test import headroom_share
from make_zoo import ROOT

from rlsched.stats import paired

RECORDS = ("confirm_pod-rebalancing-anchored-ppo_L7_seed9000.json",
           "confirm_pod-rebalancing-anchored-ppo_seed10200.json")  # fmt: skip
ENTRY, REF, ORACLE = "learned:zoo/pod-rebalancing-anchored-ppo", "greedy_migration", "clairvoyant"
OUT = ROOT / "docs/results/pods_trial_tests_pooled.json"


def main() -> None:
    values: dict[str, list[float]] = {ENTRY: [], REF: [], ORACLE: []}
    for name in RECORDS:
        rec = json.loads((ROOT / "docs/results" / name).read_text())["episode_values"]
        for k in values:
            values[k] += rec[k]
    v = {k: np.asarray(x, float) for k, x in values.items()}
    out = {
        "records": list(RECORDS), "episodes": len(v[REF]),
        "means": {k: float(x.mean()) for k, x in v.items()},
        "entry_vs_greedy": paired(v[ENTRY], v[REF], direction="lower", reference=REF,
                                  metric="violations").to_json(),
        "oracle_vs_greedy": paired(v[ORACLE], v[REF], direction="lower", reference=REF,
                                   metric="violations").to_json(),
        "headroom_closed": headroom_share(v[REF], v[ENTRY], v[ORACLE], lower=True),
    }  # fmt: skip
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    p, h = out["entry_vs_greedy"], out["headroom_closed"]
    print(f"{out['episodes']} episodes: entry - greedy {p['mean_diff']:+.2f} "
          f"[{p['ci95'][0]:+.2f}, {p['ci95'][1]:+.2f}] {p['verdict']}; share of the headroom "
          f"{h['share']:.0%} [{h['ci95'][0]:.0%}, {h['ci95'][1]:.0%}]")


if __name__ == "__main__":
    main()
