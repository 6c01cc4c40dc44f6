"""Issue 13, descriptive (nothing is chosen on it): round L7's trial guard on 32 clusters no
model trained or was chosen on.

Round L7 (``make_zoo_pods_trial.py``) shipped the PodRebalancing entry under a trial guard over
greedy_migration, chosen on the nine validation clusters, where the guard showed no
significant difference from the network alone. Does the guard give up the network's gain on
clusters no model saw (on clusters 100-131 the network was better than greedy_migration on
23-24 and worse on none; ``pods_steps_unseen_clusters.py``)? This plays greedy_migration, the
network alone (``?trial=off``) and the entry as shipped on clusters 100-131, 10 episodes each on
fresh seeds 48,000+; each paired with greedy per cluster, and the 320 episodes' violations
relative to greedy's cluster mean pooled and paired between the two.

    python docs/results/pods_trial_unseen_clusters.py   # about 5 minutes on one process

Writes ``docs/results/pods_trial_unseen_clusters.json``.
"""

import time

import numpy as np
from make_zoo import ROOT
from pods_step_unseen import ENV, REF, entry_kwargs
from pods_steps_unseen_clusters import report

from rlsched.evaluate import compare

CLUSTERS = tuple(range(100, 132))
EPISODES, SEED = 10, 48_000
MODELS = {
    "the network alone": "learned:zoo/pod-rebalancing-anchored-ppo?trial=off",
    "the entry (trial guard)": "learned:zoo/pod-rebalancing-anchored-ppo",
}
OUT = ROOT / "docs/results/pods_trial_unseen_clusters.json"


def play(cluster: int) -> dict[str, list[float]]:
    rep = compare(ENV, f"synthetic:pods?seed={cluster}", [REF, *MODELS.values()],
                  episodes=EPISODES, seed=SEED, env_kwargs=entry_kwargs(), reference=REF)
    return {r["policy"]: r["episode_values"] for r in rep["results"]}


def main() -> None:
    t0 = time.perf_counter()
    played = {}
    for c in CLUSTERS:
        played[c] = play(c)
        print(f"cluster {c}: " + ", ".join(f"{k} {np.mean(played[c][s]):.1f}" for k, s in
                                           [(REF, REF), *MODELS.items()]), flush=True)
    names = list(MODELS)
    head = {"clusters": list(CLUSTERS), "episodes_per_cluster": EPISODES, "seed": SEED,
            "models": MODELS}  # fmt: skip
    report(played, MODELS, {"guard_vs_network": (names[1], names[0])}, head, OUT, t0)

if __name__ == "__main__":
    main()
