"""Issue 13, descriptive (nothing is chosen on it): does round L's policy-improvement step hold
on clusters neither model saw?

Round L's model (``make_zoo_pods_qvalues.py``) was significantly better than the entry it
replaced on the nine validation clusters and significantly worse on the test cluster (2). Both
models were trained on cluster 0 alone and chosen on clusters 1 and 10-17; this plays them and
greedy_migration on sixteen clusters neither saw (6-9, the descriptive ones, and 24-35, which
no shipped model trained on), 20 episodes each on fresh seeds 34,000+, and gives per cluster
the paired 95% interval of the new model against the replaced one, and pooled over the 320
episodes their violations relative to greedy_migration's cluster mean.

    python docs/results/pods_step_unseen.py   (from docs/results; writes pods_step_unseen.json)

The replaced model is read from git revision 2087e55 (the zoo before round L).
"""

import json
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
from make_zoo import ROOT

from rlsched.evaluate import compare
from rlsched.splits import SPLITS
from rlsched.stats import paired
from rlsched.zoo import card

ENV = "rlsched/PodRebalancing-v0"
NAME = "pod-rebalancing-anchored-ppo"
CLUSTERS = (6, 7, 8, 9, *range(24, 36))
EPISODES, SEED, REPLACED = 20, 34_000, "2087e55"
REF = "greedy_migration"


def _replaced(tmp: Path) -> str:
    """The replaced model's folder, written from git ``REPLACED``."""
    (tmp / "model").mkdir()
    for f in ("model.zip", "meta.json"):
        blob = subprocess.run(["git", "show", f"{REPLACED}:src/rlsched/zoo/{NAME}/model/{f}"],
                              cwd=ROOT, capture_output=True, check=True).stdout
        (tmp / "model" / f).write_bytes(blob)
    return f"learned:{tmp / 'model'}"


def entry_kwargs() -> dict:
    """The env arguments the entry plays with: the split's, the preset, the card's own."""
    return {**SPLITS[ENV].env_kwargs, "scenario": "today", **card(NAME)["env_kwargs"]}


def main() -> None:
    t0 = time.perf_counter()
    kwargs = entry_kwargs()
    new = f"learned:zoo/{NAME}"
    rel: dict[str, list[np.ndarray]] = {"new": [], "replaced": []}
    per: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        old = _replaced(Path(tmp))
        for c in CLUSTERS:
            rep = compare(ENV, f"synthetic:pods?seed={c}", [REF, old, new], episodes=EPISODES,
                          seed=SEED, env_kwargs=kwargs, reference=REF)
            v = {r["policy"]: np.asarray(r["episode_values"], float) for r in rep["results"]}
            scale = float(v[REF].mean())
            rel["new"].append(v[new] / scale)
            rel["replaced"].append(v[old] / scale)
            p = paired(v[new], v[old], direction="lower", reference="replaced",
                       metric="violations").to_json()
            per[f"cluster {c}"] = {"greedy_migration": scale, "replaced": float(v[old].mean()),
                                   "new": float(v[new].mean()), "new_vs_replaced": p}
            lo, hi = p["ci95"]
            print(f"cluster {c}: greedy {scale:.1f}, replaced {v[old].mean():.1f}, new "
                  f"{v[new].mean():.1f}; new - replaced {p['mean_diff']:+.1f} [{lo:+.1f}, "
                  f"{hi:+.1f}] {p['verdict']}", flush=True)
    pooled = {k: np.concatenate(x) for k, x in rel.items()}
    both = paired(pooled["new"], pooled["replaced"], direction="lower", reference="replaced",
                  metric="violations / greedy_migration's cluster mean").to_json()
    verdicts = [d["new_vs_replaced"]["verdict"] for d in per.values()]
    out = {
        "clusters": list(CLUSTERS), "episodes_per_cluster": EPISODES, "seed": SEED,
        "relative_means": {k: float(x.mean()) for k, x in pooled.items()},
        "pooled_new_vs_replaced": both,
        "clusters_better_worse_same": [verdicts.count("better"), verdicts.count("worse"),
                                       verdicts.count("no significant difference")],
        "per_cluster": per, "seconds": time.perf_counter() - t0,
    }  # fmt: skip
    (ROOT / "docs/results/pods_step_unseen.json").write_text(json.dumps(out, indent=1) + "\n")
    lo, hi = both["ci95"]
    print(f"pooled: new {out['relative_means']['new']:.3f}, replaced "
          f"{out['relative_means']['replaced']:.3f} of greedy's; new - replaced "
          f"{both['mean_diff']:+.3f} [{lo:+.3f}, {hi:+.3f}] {both['verdict']}; clusters "
          f"better/worse/same {out['clusters_better_worse_same']}; {out['seconds']:.0f} s")


if __name__ == "__main__":
    main()
