"""Could a student of ``mdp_rollout`` replace ``workflow-congested-ppo`` by the zoo's rule?

The search teacher ``mdp_rollout`` (earliest finish rolled out to the end of the current
workflow, every server a candidate) has the lowest mean workflow completion of the
non-clairvoyant policies on the entry's 30 fresh test episodes, and the entry is significantly
worse than HEFT there (``confirm_test.py``). A distilled student replaces the entry only by the
validation rule (``make_zoo_vm.py``): the entry not eligible there, or the student
significantly better than it. This plays HEFT, ``mdp_rollout`` and the entry on the same 30
validation episodes (seeds 10,000+, preset ``congested``) and pairs each with HEFT and with the
entry. Writes ``docs/results/congested_mdp_validation.json``.

    python docs/results/congested_mdp_validation.py [EPISODES]
"""

import json
import sys
import time
from pathlib import Path

from rlsched.evaluate import compare
from rlsched.splits import SPLITS
from rlsched.stats import paired

ENV = "rlsched/WorkflowOffloading-v0"
ENTRY = "learned:zoo/workflow-congested-ppo"
eps = int(sys.argv[1]) if len(sys.argv) > 1 else 30
t = time.perf_counter()
rep = compare(ENV, SPLITS[ENV].validation, ["heft", "mdp_rollout", ENTRY], episodes=eps,
              seed=10_000, env_kwargs={"scenario": "congested"}, reference="heft")
rows = {r["policy"]: r for r in rep["results"]}
out = {"dataset": rep["dataset"], "episodes": eps, "seed": 10_000, "preset": "congested",
       "means": {p: r["metrics"]["mean_completion"] for p, r in rows.items()},
       "vs_heft": {p: r["paired"] for p, r in rows.items() if "paired" in r},
       "mdp_rollout_vs_entry": paired(
           rows["mdp_rollout"]["episode_values"], rows[ENTRY]["episode_values"],
           direction="lower", reference="the entry", metric="mean_completion").to_json(),
       "seconds": time.perf_counter() - t}  # fmt: skip
Path(__file__).with_name("congested_mdp_validation.json").write_text(json.dumps(out, indent=1))
print(json.dumps({k: out[k] for k in ("means", "mdp_rollout_vs_entry", "seconds")}, indent=1))
