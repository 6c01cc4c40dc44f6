"""Issue 13, descriptive (nothing is chosen on it): the PodRebalancing entries of rounds L, L5
and L6 on 32 clusters no model trained or was chosen on.

Rounds L5 and L6 each replaced the entry on the nine validation clusters (a step from the
deployable search's values, then a second one); on the test cluster (2) round L5's entry is
level with greedy_migration on its two fixed tests and round L6's is worse on the fixed one.
Is the test cluster the exception, or did the second step fit the clusters it was chosen on?
This plays greedy_migration and the three models (round L's with its margin gate and round
L5's as kept in ``configs/zoo/start``, round L6's as shipped) on clusters 100-131, 10 episodes
each on fresh seeds 46,000+, on two processes; each model paired with greedy per cluster,
and the 320 episodes' violations relative to greedy's cluster mean pooled and paired between
the models.

    python docs/results/pods_steps_unseen_clusters.py   # about 3 min

Writes ``docs/results/pods_steps_unseen_clusters.json``.
"""

import json
import time
from multiprocessing import Pool
from pathlib import Path

import numpy as np
from make_zoo import ROOT
from pods_step_unseen import ENV, REF, entry_kwargs

from rlsched.evaluate import compare
from rlsched.stats import paired

CLUSTERS = tuple(range(100, 132))
EPISODES, SEED = 10, 46_000
START = f"learned:{ROOT}/configs/zoo/start"
MODELS = {
    "round L (gated)": f"{START}/pod-rebalancing-anchored-qvalues/model",
    "round L5": f"{START}/pod-rebalancing-anchored-search-values/model",
    "round L6 (the entry)": "learned:zoo/pod-rebalancing-anchored-ppo",
}
OUT = ROOT / "docs/results/pods_steps_unseen_clusters.json"


def play(cluster: int) -> tuple[int, dict[str, list[float]]]:
    rep = compare(ENV, f"synthetic:pods?seed={cluster}", [REF, *MODELS.values()],
                  episodes=EPISODES, seed=SEED, env_kwargs=entry_kwargs(), reference=REF)
    return cluster, {r["policy"]: r["episode_values"] for r in rep["results"]}


def tally(
    played: dict[int, dict[str, list[float]]], models: dict[str, str]
) -> tuple[dict[str, np.ndarray], dict[str, dict[str, int]], dict[str, dict]]:
    """Each model (label: spec) paired with greedy_migration on each cluster of ``played``
    (cluster: spec: episode values): the episodes' violations relative to greedy's cluster
    mean, pooled by label; the count of each verdict against greedy; each cluster's means."""
    rel: dict[str, list[np.ndarray]] = {k: [] for k in (REF, *models)}
    counts = {k: {"better": 0, "worse": 0, "no significant difference": 0} for k in models}
    per: dict[str, dict] = {}
    for c, values in played.items():
        v = {p: np.asarray(x, float) for p, x in values.items()}
        scale = float(v[REF].mean())
        row: dict = {REF: scale}
        rel[REF].append(v[REF] / scale)
        for k, s in models.items():
            p = paired(v[s], v[REF], direction="lower", reference=REF,
                       metric="violations").to_json()  # fmt: skip
            counts[k][p["verdict"]] += 1
            rel[k].append(v[s] / scale)
            row[k] = {"mean": float(v[s].mean()), "verdict": p["verdict"]}
        per[f"cluster {c}"] = row
    return {k: np.concatenate(x) for k, x in rel.items()}, counts, per


def report(played: dict[int, dict[str, list[float]]], models: dict[str, str],
           pairs: dict[str, tuple[str, str]], head: dict, out: Path, t0: float) -> dict:
    """:func:`tally` of ``played`` written to ``out`` after ``head`` (the run's fields), with
    each model pooled against greedy_migration and each of ``pairs`` (label: (model, model
    it is paired with)); prints the verdicts."""
    pooled, counts, per = tally(played, models)

    def vs(a: str, b: str) -> dict:
        return paired(pooled[a], pooled[b], direction="lower", reference=b,
                      metric="violations / greedy_migration's cluster mean").to_json()

    rec = {
        **head, "counts_vs_greedy": counts,
        "relative_means": {k: float(x.mean()) for k, x in pooled.items()},
        "pooled_vs_greedy": {k: vs(k, REF) for k in models},
        **{label: vs(a, b) for label, (a, b) in pairs.items()},
        "per_cluster": per, "seconds": time.perf_counter() - t0,
    }  # fmt: skip
    out.write_text(json.dumps(rec, indent=1) + "\n")
    for k in models:
        print(f"{k}: {rec['relative_means'][k]:.3f} of greedy's; vs greedy per cluster "
              f"{counts[k]}")
    for label in pairs:
        p = rec[label]
        print(f"{label}: {p['mean_diff']:+.3f} [{p['ci95'][0]:+.3f}, {p['ci95'][1]:+.3f}] "
              f"{p['wins']}/{p['ties']}/{p['losses']} {p['verdict']}")
    print(f"{rec['seconds']:.0f} s")
    return rec


def main() -> None:
    t0 = time.perf_counter()
    with Pool(2) as pool:
        played = dict(pool.map(play, CLUSTERS))
    names = list(MODELS)
    head = {"clusters": list(CLUSTERS), "episodes_per_cluster": EPISODES, "seed": SEED,
            "models": {k: s.replace(f"{ROOT}/", "") for k, s in MODELS.items()}}  # fmt: skip
    pairs = {"round L5 vs round L": (names[1], names[0]),
             "round L6 vs round L5": (names[2], names[1])}  # fmt: skip
    report(played, MODELS, pairs, head, OUT, t0)

if __name__ == "__main__":
    main()
