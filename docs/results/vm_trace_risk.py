"""Issue 13, descriptive (nothing is chosen on it): does the VMPlacement entry's win hold on
traces it was never trained, chosen or tested on?

The headroom goal is met in VMPlacement on one test trace (``synthetic:vm?seed=2``): the entry
``vm-recovering-5-ppo`` is significantly better than the best heuristic there on its card's
test and on fresh episodes. PodRebalancing's entry, judged the same way on one test cluster,
is significantly worse there while better on most other clusters (``pods_cluster_risk.py``):
one dataset is one draw. This plays the entry and every heuristic that does not search on 16
traces of the same generator that no model trained, was chosen or tested on (seeds 100-115),
20 episodes each on fresh seeds 39,000+, the entry paired per trace with the best heuristic
measured there, and counts the traces where it is significantly better, worse or neither.

    python docs/results/vm_trace_risk.py   (from docs/results; writes vm_trace_risk.json)
"""

import json
import time
from collections import Counter

import numpy as np
from make_zoo import ROOT

from rlsched.evaluate import compare
from rlsched.zoo import card

ENV = "rlsched/VMPlacement-v0"
NAME = "vm-recovering-5-ppo"
TRACES = tuple(range(100, 116))
EPISODES, SEED = 20, 39_000
OUT = ROOT / "docs/results/vm_trace_risk.json"


def main() -> None:
    t0 = time.perf_counter()
    c = card(NAME)
    kwargs = {**c["env_kwargs"], "scenario": c["preset"]}
    entry = f"learned:zoo/{NAME}"
    per: dict[str, dict] = {}
    rel: list[np.ndarray] = []
    for t in TRACES:
        dataset = f"synthetic:vm?creations=125430&days=30&seed={t}"
        rep = compare(ENV, dataset, f"plain,{entry}", episodes=EPISODES, seed=SEED,
                      env_kwargs=kwargs)  # fmt: skip
        rows = {r["policy"]: r for r in rep["results"]}
        ref = rep["reference"]
        p = rows[entry]["paired"]
        best = np.asarray(rows[ref]["episode_values"], float)
        rel.append(np.asarray(rows[entry]["episode_values"], float) / best.mean())
        per[f"trace {t}"] = {"reference": ref, "reference_mean": float(best.mean()),
                             "entry_mean": float(rel[-1].mean() * best.mean()),
                             "entry_vs_best": p}  # fmt: skip
        lo, hi = p["ci95"]
        mine = per[f"trace {t}"]["entry_mean"]
        print(f"trace {t}: {ref} {best.mean():.1f}, entry {mine:.1f}: {p['mean_diff']:+.2f} "
              f"[{lo:+.2f}, {hi:+.2f}] {p['verdict']}", flush=True)  # fmt: skip
    counts = Counter(d["entry_vs_best"]["verdict"] for d in per.values())
    pooled = np.concatenate(rel)
    out = {
        "traces": list(TRACES), "episodes_per_trace": EPISODES, "seed": SEED,
        "env_kwargs": kwargs, "counts_vs_best": dict(counts),
        "references": dict(Counter(d["reference"] for d in per.values())),
        "pooled_relative_to_best": float(pooled.mean()), "per_trace": per,
        "seconds": time.perf_counter() - t0,
    }  # fmt: skip
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print(f"against the best heuristic per trace: {dict(counts)}; references "
          f"{out['references']}; pooled {pooled.mean():.4f} of the best's VMs placed; "
          f"{out['seconds']:.0f} s")  # fmt: skip


if __name__ == "__main__":
    main()
