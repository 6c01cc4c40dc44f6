"""Is WorkflowOffloading's ``congested`` preset informative on validation data?

Every heuristic and the clairvoyant oracle on ``WF_VALIDATION`` (seeds 10,000+), scenario
``congested``; the oracle searches at about DECISIONS decisions per episode (fortified, so a
lower estimate of the headroom; 0: at every decision). Prints each policy's mean completion with
its paired interval against the best heuristic, the spread and the headroom
(docs/scenarios.md cites the output, docs/results/congested_validation.txt).

    python docs/results/congested_validation.py EPISODES DECISIONS
"""

import sys
import time

from rlsched.envs.workflow_offloading import WorkflowOffloadingEnv
from rlsched.evaluate import compare
from rlsched.splits import WF_VALIDATION
from rlsched.spread import spreads

eps, dec = int(sys.argv[1]), int(sys.argv[2])
WorkflowOffloadingEnv.oracle_decisions = dec if dec > 0 else None
t = time.time()
rep = compare("rlsched/WorkflowOffloading-v0", WF_VALIDATION, ["all", "clairvoyant"],
              episodes=eps, seed=10_000, env_kwargs={"scenario": "congested"})
s = spreads(rep)
for r in rep["results"]:
    m = r["metrics"].get("mean_completion")
    print("  ", r["policy"], m, r.get("paired", {}) and r["paired"].get("ci95"))
print("ref", rep["reference"], "spread", s["spread"], "\nheadroom", s["headroom"],
      "\ninformative", s.get("informative"), f"{time.time() - t:.0f}s", flush=True)
