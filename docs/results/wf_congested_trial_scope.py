"""A scoping look (descriptive, no round, nothing shipped): round C1's departure network under
a trial guard over PEFT on WorkflowOffloading ``congested``, on new workflows of the four
training families, beside PEFT, HEFT, the network alone and the vetted entry as shipped.

Why: a guarded episode became cheap enough to consider a round (docs/benchmarks.md, "Faster
server usage", 2026-12-06); this looks at how often the guard departs and what it costs per
episode, to size such a round. It uses fresh worlds (``seed=33``) and episode seeds
75,000-75,002; a later round uses others. Mean completion per policy and each against PEFT
and HEFT (paired 95%, 12 episodes: too few for a verdict a round would rest on).

    python docs/results/wf_congested_trial_scope.py [--workers 2]   # about 15 minutes
"""

import argparse
import json
import time
from multiprocessing import Pool

import numpy as np

from rlsched.evaluate import compare
from rlsched.stats import paired

ENV = "rlsched/WorkflowOffloading-v0"
NET = "learned:zoo/workflow-congested-vetted?familiar=off"
GUARD = f"{NET}&trial=peft&trial_every=10&trial_futures=4&trial_horizon=end"
PLAYERS = ("peft", "heft", NET, "learned:zoo/workflow-congested-vetted", GUARD)
KW = {"scenario": "congested", "reward": "makespan", "lookahead": True, "finish_gap": True,
      "optimistic_cost": True, "contention": True, "dag": True, "dag_max_tasks": 64}  # fmt: skip
WORLDS = ("wfcommons:montage?tasks=60&seed=33&workflows=4",
          "wfcommons:epigenomics?tasks=50&seed=33&workflows=4",
          "wfcommons:genome?tasks=60&seed=33&workflows=4",
          "wfcommons:srasearch?tasks=40&seed=33&workflows=4")  # fmt: skip
SEED, EPISODES = 75_000, 3


def _world(ds: str) -> tuple[str, dict]:
    t = time.perf_counter()
    rep = compare(ENV, ds, list(PLAYERS), episodes=EPISODES, seed=SEED, env_kwargs=KW)
    vals = {r["policy"]: r["episode_values"] for r in rep["results"]}
    return ds, {"values": vals, "seconds": time.perf_counter() - t}


def main(workers: int) -> None:
    t0 = time.perf_counter()
    with Pool(workers) as pool:
        got = dict(pool.imap_unordered(_world, WORLDS))
    vals = {p: np.concatenate([got[w]["values"][p] for w in WORLDS]) for p in PLAYERS}
    out: dict = {"rule": "docs/results/wf_congested_trial_scope.py (descriptive)",
                 "worlds": {w: got[w] for w in WORLDS}, "means": {}, "vs": {}}  # fmt: skip
    for p in PLAYERS:
        out["means"][p] = float(vals[p].mean())
        for ref in ("peft", "heft"):
            if p != ref:
                out["vs"][f"{p} - {ref}"] = paired(vals[p], vals[ref], direction="lower",
                                                   reference=ref).to_json()  # fmt: skip
    out["seconds"] = time.perf_counter() - t0
    for k, v in out["vs"].items():
        print(f"{k}: {v['mean_diff']:+.3f} s {v['ci95']} {v['verdict']} "
              f"({v['wins']}/{v['ties']}/{v['losses']})")  # fmt: skip
    print({w: round(got[w]["seconds"]) for w in WORLDS}, f"{out['seconds']:.0f} s")
    with open("docs/results/wf_congested_trial_scope.json", "w") as f:
        f.write(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workers", type=int, default=2)
    main(ap.parse_args().workers)
