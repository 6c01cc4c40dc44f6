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
from zoo_unseen import entry_on

from rlsched.zoo import card

NAME = "vm-recovering-5-ppo"
TRACES = tuple(range(100, 116))
EPISODES, SEED = 20, 39_000
OUT = ROOT / "docs/results/vm_trace_risk.json"


def main() -> None:
    t0 = time.perf_counter()
    c = card(NAME)
    data = {f"trace {t}": f"synthetic:vm?creations=125430&days=30&seed={t}" for t in TRACES}
    per, played, counts = entry_on(NAME, data, EPISODES, SEED)
    pooled = np.concatenate([mine / best.mean() for mine, best in played.values()])
    out = {
        "traces": list(TRACES), "episodes_per_trace": EPISODES, "seed": SEED,
        "env_kwargs": {**c["env_kwargs"], "scenario": c["preset"]}, "counts_vs_best": counts,
        "references": dict(Counter(d["reference"] for d in per.values())),
        "pooled_relative_to_best": float(pooled.mean()), "per_trace": per,
        "seconds": time.perf_counter() - t0,
    }  # fmt: skip
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print(f"against the best heuristic per trace: {counts}; references "
          f"{out['references']}; pooled {pooled.mean():.4f} of the best's VMs placed; "
          f"{out['seconds']:.0f} s")  # fmt: skip


if __name__ == "__main__":
    main()
