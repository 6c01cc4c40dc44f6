"""Issue 13 (descriptive, nothing chosen on it): is the search over the PodRebalancing entry
ahead of the entry itself on the validation clusters?

Why: round L fitted the entry to its Q-values from the clairvoyant oracle's rollouts (the true
future) and lost on the test cluster; the deployable search over greedy_migration
(``rollout:greedy_migration``, sampled futures) wins there (``pods_search_tests.py``). A step
from the deployable search's values over the entry (``rollout:learned:zoo/...``) has something
to teach only if that search is ahead of the entry. This looks before any rule: 4 episodes of
each validation cluster (1, 10-17), fresh seeds 42,000-42,003, greedy_migration, the entry,
the search over it and the search over greedy_migration, each with the env's rollout options
(8 candidates, 32 windows, 4 sampled futures). The seeds are not used again.

    python docs/results/pods_search_entry_probe.py   # about 8 min on two processes

Writes ``docs/results/pods_search_entry_probe.json``.
"""

import json
import time
from multiprocessing import Pool

import numpy as np
from make_zoo import ROOT
from make_zoo_pods_many import CLUSTERS, ENV, REF

from rlsched.evaluate import compare
from rlsched.splits import SPLITS
from rlsched.stats import paired
from rlsched.zoo import ZOO_DIR

ENTRY = "learned:zoo/pod-rebalancing-anchored-ppo"
SEARCHES = (f"rollout:{ENTRY}", f"rollout:{REF}")
EPISODES, SEED = 4, 42_000
OUT = ROOT / "docs/results/pods_search_entry_probe.json"


def kwargs() -> dict:
    card = json.loads((ZOO_DIR / "pod-rebalancing-anchored-ppo" / "card.json").read_text())
    return {**SPLITS[ENV].env_kwargs, "scenario": "today", **card["env_kwargs"]}


def play(job: tuple[int, str]) -> tuple[int, str, dict[str, list[float]]]:
    """One cluster's episodes of greedy, the entry and one search (the same seeded episodes:
    greedy's values are checked equal across the two jobs of a cluster)."""
    cluster, search = job
    rep = compare(ENV, f"synthetic:pods?seed={cluster}", [REF, ENTRY, search],
                  episodes=EPISODES, seed=SEED, env_kwargs=kwargs(), reference=REF)
    return cluster, search, {r["policy"]: r["episode_values"] for r in rep["results"]}


def main() -> None:
    t0 = time.time()
    jobs = [(c, s) for c in CLUSTERS for s in SEARCHES]
    with Pool(2) as pool:
        played = pool.map(play, jobs)
    rel: dict[str, list[float]] = {}
    per_cluster: dict[str, dict[str, float]] = {}
    for c in CLUSTERS:
        rows = {s: v for cc, s, v in played if cc == c}
        a, b = (rows[s] for s in SEARCHES)
        assert np.allclose(a[REF], b[REF]) and np.allclose(a[ENTRY], b[ENTRY])
        vals = {REF: a[REF], ENTRY: a[ENTRY], SEARCHES[0]: a[SEARCHES[0]],
                SEARCHES[1]: b[SEARCHES[1]]}  # fmt: skip
        scale = float(np.mean(vals[REF]))
        per_cluster[f"cluster {c}"] = {k: float(np.mean(v)) for k, v in vals.items()}
        for k, v in vals.items():
            rel.setdefault(k, []).extend((np.asarray(v) / scale).tolist())
        print(f"cluster {c}: " + ", ".join(f"{k} {np.mean(v):.1f}" for k, v in vals.items()),
              flush=True)

    def vs(a: str, b: str) -> dict:
        return paired(rel[a], rel[b], direction="lower", reference=b,
                      metric="violations / greedy_migration's cluster mean").to_json()

    out = {
        "script": "docs/results/pods_search_entry_probe.py", "clusters": list(CLUSTERS),
        "episodes_per_cluster": EPISODES, "seed": SEED,
        "relative_means": {k: float(np.mean(v)) for k, v in rel.items()},
        "search_over_entry_vs_entry": vs(SEARCHES[0], ENTRY),
        "search_over_greedy_vs_greedy": vs(SEARCHES[1], REF),
        "search_over_entry_vs_search_over_greedy": vs(SEARCHES[0], SEARCHES[1]),
        "entry_vs_greedy": vs(ENTRY, REF),
        "per_cluster_means": per_cluster, "seconds": round(time.time() - t0),
    }  # fmt: skip
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    for k in ("search_over_entry_vs_entry", "search_over_greedy_vs_greedy",
              "search_over_entry_vs_search_over_greedy", "entry_vs_greedy"):
        p = out[k]
        print(f"{k}: {p['mean_diff']:+.3f} [{p['ci95'][0]:+.3f}, {p['ci95'][1]:+.3f}] "
              f"{p['verdict']}")
    print(f"wrote {OUT} in {out['seconds']} s")


if __name__ == "__main__":
    main()
