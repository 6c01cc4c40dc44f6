"""Issue 13: do the PodRebalancing models' gains over greedy_migration hold on clusters that are
neither their training, validation nor test cluster?

On the validation cluster (``synthetic:pods?seed=1``) every learned model has about a quarter
fewer violations than greedy_migration; on fresh episodes of the test cluster (seed 2) it shows
no significant difference. This measures, on generated clusters 6-9 (other services, sizes
and placements; none is used for training, selection or the test), the two zoo entries and
the four-cluster model kept by ``make_zoo_pods_mix.py`` against greedy_migration: 30 episodes
each (seeds 5000+), paired 95% intervals. Descriptive only: nothing is chosen on it.

    python docs/results/pods_clusters.py      (writes docs/results/pods_clusters.json)
"""

import json
import time

from make_zoo import ROOT

from rlsched.evaluate import compare
from rlsched.splits import SPLITS

ENV = "rlsched/PodRebalancing-v0"
CLUSTERS = (6, 7, 8, 9)
POLICIES = {
    "pod-rebalancing-today-ppo": "learned:zoo/pod-rebalancing-today-ppo",
    "pod-rebalancing-anchored-ppo": "learned:zoo/pod-rebalancing-anchored-ppo",
    "pods_anchored_mix/seed3": f"learned:{ROOT / 'runs/zoo/pods_anchored_mix/seed3/model'}",
}


def main() -> None:
    t0 = time.perf_counter()
    kwargs = {**SPLITS[ENV].env_kwargs, "scenario": "today"}
    out = {}
    for c in CLUSTERS:
        rep = compare(ENV, f"synthetic:pods?seed={c}", ["greedy_migration", *POLICIES.values()],
                      episodes=30, seed=5000, env_kwargs=kwargs, reference="greedy_migration")
        rows = {r["policy"]: r for r in rep["results"]}
        out[f"cluster {c}"] = {
            "greedy_migration": rows["greedy_migration"]["metrics"]["violations"],
            **{name: {"violations": rows[spec]["metrics"]["violations"],
                      "vs_greedy": rows[spec]["paired"]} for name, spec in POLICIES.items()},
        }  # fmt: skip
        print(f"cluster {c}: greedy {out[f'cluster {c}']['greedy_migration']:.1f}", flush=True)
        for name in POLICIES:
            p = out[f"cluster {c}"][name]["vs_greedy"]
            print(f"  {name:30s} {p['mean_diff']:+.1f} [{p['ci95'][0]:+.1f}, {p['ci95'][1]:+.1f}]"
                  f" ({p['pct_diff']:+.1f}%) {p['verdict']}", flush=True)
    out["seconds"] = time.perf_counter() - t0
    (ROOT / "docs/results/pods_clusters.json").write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
