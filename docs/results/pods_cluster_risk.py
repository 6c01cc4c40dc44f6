"""Issue 13, descriptive (nothing is chosen on it): on how many new clusters is the PodRebalancing
entry significantly worse than greedy_migration?

The headroom goal and the no-worse goal are judged on one test cluster (2). Round L's model is
significantly better than the one it replaced on the nine validation clusters and on 7 of 16
unseen ones (``pods_step_unseen.py``), and significantly worse than greedy_migration on the
test cluster. A single cluster's verdict is one draw from the clusters the generator makes, so
this measures the draw: 32 clusters no model trained or was chosen on (100-131), 20 episodes
each on fresh seeds 37,000+, round L's model and the model it replaced (git 2087e55), each
paired with greedy_migration per cluster. It counts the clusters where each is significantly
better, worse or neither, and pools the 640 episodes' violations relative to greedy's cluster
mean.

    python docs/results/pods_cluster_risk.py   (from docs/results; writes pods_cluster_risk.json)
"""

import json
import tempfile
import time
from pathlib import Path

import numpy as np
from make_zoo import ROOT
from pods_step_unseen import ENV, NAME, REF, REPLACED, _replaced, entry_kwargs

from rlsched.evaluate import compare
from rlsched.stats import paired

CLUSTERS = tuple(range(100, 132))
EPISODES, SEED = 20, 37_000
OUT = ROOT / "docs/results/pods_cluster_risk.json"


def main() -> None:
    t0 = time.perf_counter()
    kwargs = entry_kwargs()
    new = f"learned:zoo/{NAME}"
    rel: dict[str, list[np.ndarray]] = {"new": [], "replaced": []}
    per: dict[str, dict] = {}
    counts = {k: {"better": 0, "worse": 0, "no significant difference": 0} for k in rel}
    with tempfile.TemporaryDirectory() as tmp:
        specs = {"new": new, "replaced": _replaced(Path(tmp))}
        for c in CLUSTERS:
            rep = compare(
                ENV,
                f"synthetic:pods?seed={c}",
                [REF, *specs.values()],
                episodes=EPISODES,
                seed=SEED,
                env_kwargs=kwargs,
                reference=REF,
            )
            v = {r["policy"]: np.asarray(r["episode_values"], float) for r in rep["results"]}
            scale = float(v[REF].mean())
            row: dict = {REF: scale}
            for k, s in specs.items():
                p = paired(v[s], v[REF], direction="lower", reference=REF,
                           metric="violations").to_json()  # fmt: skip
                counts[k][p["verdict"]] += 1
                rel[k].append(v[s] / scale)
                row[k] = {"mean": float(v[s].mean()), "vs_greedy": p}
            per[f"cluster {c}"] = row
            print(f"cluster {c}: greedy {scale:.1f}, " + ", ".join(
                f"{k} {row[k]['mean']:.1f} ({row[k]['vs_greedy']['verdict']})" for k in specs),
                flush=True)  # fmt: skip
    pooled = {k: np.concatenate(x) for k, x in rel.items()}
    step = paired(pooled["new"], pooled["replaced"], direction="lower", reference="replaced",
                  metric="violations / greedy_migration's cluster mean").to_json()  # fmt: skip
    out = {
        "clusters": list(CLUSTERS), "episodes_per_cluster": EPISODES, "seed": SEED,
        "replaced_git": REPLACED, "counts_vs_greedy": counts,
        "relative_means": {k: float(x.mean()) for k, x in pooled.items()},
        "share_of_clusters_above_greedy": {
            k: float(np.mean([x.mean() > 1.0 for x in rel[k]])) for k in rel},
        "pooled_new_vs_replaced": step, "per_cluster": per,
        "seconds": time.perf_counter() - t0,
    }  # fmt: skip
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    for k in rel:
        print(
            f"{k}: {pooled[k].mean():.3f} of greedy's; clusters vs greedy {counts[k]}; "
            f"mean above greedy's on {out['share_of_clusters_above_greedy'][k]:.0%}"
        )
    lo, hi = step["ci95"]
    print(
        f"new vs replaced pooled: {step['mean_diff']:+.3f} [{lo:+.3f}, {hi:+.3f}] "
        f"{step['verdict']}; {out['seconds']:.0f} s"
    )


if __name__ == "__main__":
    main()
