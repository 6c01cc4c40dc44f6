"""Issue 13, descriptive (nothing is chosen on it): does the ServerlessPlacement entry's win
hold on workflow families it never saw?

The headroom goal is met in ServerlessPlacement on the real test workflows (blast and
helloworld): ``serverless-edge-maskable-ppo`` is significantly better than the best heuristic
there. This plays it and every heuristic that does not search on the five wfcommons families
that no model trained, was chosen or tested on (bwa, cycles, rnaseq, seismology, soykb; three
generated workflows of 120 tasks each), 10 episodes each on fresh seeds 40,000+, the entry
paired per family with the best heuristic measured there, as ``pods_cluster_risk.py`` and
``vm_trace_risk.py`` do for their envs.

    python docs/results/serverless_family_risk.py   (from docs/results; writes
                                                    serverless_family_risk.json)
"""

import json
import time

from make_zoo import ROOT
from zoo_unseen import entry_on

from rlsched.zoo import card

NAME = "serverless-edge-maskable-ppo"
FAMILIES = ("bwa", "cycles", "rnaseq", "seismology", "soykb")
EPISODES, SEED = 10, 40_000
#: tasks per generated workflow: at least every recipe's smallest base graph (bwa: 106)
TASKS = 120
OUT = ROOT / "docs/results/serverless_family_risk.json"


def main() -> None:
    t0 = time.perf_counter()
    c = card(NAME)
    data = {fam: f"wfcommons:{fam}?tasks={TASKS}&seed=7&workflows=3" for fam in FAMILIES}
    per, _, counts = entry_on(NAME, data, EPISODES, SEED)
    out = {"families": list(FAMILIES), "episodes": EPISODES, "seed": SEED,
           "env_kwargs": {**c["env_kwargs"], "scenario": c["preset"]},
           "counts_vs_best": counts, "per_family": per,
           "seconds": time.perf_counter() - t0}  # fmt: skip
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print(f"against the best heuristic per family: {counts}; {out['seconds']:.0f} s")


if __name__ == "__main__":
    main()
