"""Issue 13, descriptive: the residual policies over greedy_migration
(``make_zoo_pods_residual.py``) on the four clusters of ``pods_clusters.py`` (generated clusters
6-9: neither training, validation nor test; 30 episodes each, seeds 5000+), beside the anchored
entry and greedy_migration, paired 95% intervals against greedy. The residual models read
``node_greedy_rank`` and play in envs with ``greedy_rank`` (which only adds that observation);
greedy plays in both groups and must score the same. Nothing is chosen on it.

    python docs/results/pods_clusters_residual.py   (writes pods_clusters_residual.json beside it)
"""

import json
import time

import numpy as np
from make_zoo import ROOT

from rlsched.evaluate import compare
from rlsched.splits import SPLITS
from rlsched.stats import paired

ENV = "rlsched/PodRebalancing-v0"
CLUSTERS = (6, 7, 8, 9)
ENTRY = "learned:zoo/pod-rebalancing-anchored-ppo"
RESIDUAL = {
    f"pods_residual_soft/seed{s}": f"learned:{ROOT / f'runs/zoo/pods_residual_soft/seed{s}/model'}"
    for s in (0, 1, 2)
}


def main() -> None:
    t0 = time.perf_counter()
    kwargs = {**SPLITS[ENV].env_kwargs, "scenario": "today"}
    out: dict = {}
    for c in CLUSTERS:
        ds, ref = f"synthetic:pods?seed={c}", "greedy_migration"
        vals: dict[str, np.ndarray] = {}
        rank_kw = {**kwargs, "greedy_rank": True}
        for group, kw in (([ref, ENTRY], kwargs), ([ref, *RESIDUAL.values()], rank_kw)):
            rep = compare(ENV, ds, group, episodes=30, seed=5000, env_kwargs=kw)
            for r in rep["results"]:
                v = np.asarray(r["episode_values"], float)
                assert np.array_equal(vals.setdefault(r["policy"], v), v), "the same episodes"
        names = {ENTRY: "pod-rebalancing-anchored-ppo"} | {v: k for k, v in RESIDUAL.items()}
        out[f"cluster {c}"] = {"greedy_migration": float(vals[ref].mean())} | {
            names[p]: paired(vals[p], vals[ref], direction="lower", reference=ref,
                             metric="violations").to_json()
            for p in names
        }  # fmt: skip
        row = out[f"cluster {c}"]
        print(f"cluster {c}: greedy {row['greedy_migration']:.1f}; " + "; ".join(
            f"{n} {row[n]['mean_diff']:+.1f} [{row[n]['ci95'][0]:+.1f}, {row[n]['ci95'][1]:+.1f}]"
            for n in names.values()))  # fmt: skip
    out["seconds"] = time.perf_counter() - t0
    (ROOT / "docs/results/pods_clusters_residual.json").write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
