"""How much of the clairvoyant oracle's headroom the anchored PodRebalancing models close on
the nine validation clusters, beside the test cluster's figures (descriptive; nothing is
chosen on it). The oracle plays the episodes of ``make_zoo_pods_history_gamma.py``'s choice
(clusters 1 and 10-17, 20 episodes each, seeds 26,000+), whose recorded greedy_migration
values it must reproduce; each model's share is read from that choice's recorded means.

    python docs/results/pods_validation_headroom.py

Writes ``docs/results/pods_validation_headroom.json``.
"""

import json
import time

import numpy as np
from make_zoo import ROOT
from make_zoo_pods_many import CLUSTERS, ENV, EPISODES, REF

from rlsched.evaluate import compare
from rlsched.splits import SPLITS

CHOICE = ROOT / "docs/results/pods_anchored_history_gamma_choice.json"
SEED = 26_000


def main() -> None:
    t0 = time.perf_counter()
    rec = json.loads(CHOICE.read_text())["validation"]["per_cluster_means"]
    kwargs = {**SPLITS[ENV].env_kwargs, "scenario": "today"}
    out: dict = {"episodes_per_cluster": EPISODES, "seed": SEED, "clusters": {}}
    for c in CLUSTERS:
        rep = compare(ENV, f"synthetic:pods?seed={c}", [REF, "clairvoyant"], episodes=EPISODES,
                      seed=SEED, env_kwargs=kwargs, reference=REF)  # fmt: skip
        vals = {r["policy"]: np.asarray(r["episode_values"], float) for r in rep["results"]}
        means = rec[f"cluster {c}"]
        assert abs(vals[REF].mean() - means[REF]) < 1e-9, f"cluster {c}: other episodes"
        oracle = float(vals["clairvoyant"].mean())
        gap = means[REF] - oracle
        shares = {k: (means[REF] - v) / gap for k, v in means.items() if k != REF}
        out["clusters"][str(c)] = {
            "greedy_migration": means[REF],
            "oracle": oracle,
            "headroom_pct": 100 * gap / means[REF],
            "shares": shares,
        }
        print(
            f"cluster {c}: greedy {means[REF]:.1f}, oracle {oracle:.1f} "
            f"({100 * gap / means[REF]:.1f}% headroom); "
            + ", ".join(f"{k} {v:.0%}" for k, v in shares.items()),
            flush=True,
        )
    out["seconds"] = time.perf_counter() - t0
    path = ROOT / "docs/results/pods_validation_headroom.json"
    path.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
