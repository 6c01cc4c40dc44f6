"""Issue 13: the anchored PodRebalancing entry chosen again by a rule that asks for no
validation cluster where greedy_migration is significantly better (round M).

Why: round L's step over the learned entry (``make_zoo_pods_qvalues.py``) was significantly
better than greedy_migration pooled over the nine validation clusters and is significantly
worse on the test cluster; the anchored models lose to greedy on some clusters (17 on
validation, 9 and 25 among unseen ones, ``pods_step_unseen.py``). The issue's second goal asks
that the shipped policy be significantly worse than the best heuristic nowhere. This round's
candidates take one soft policy-improvement step over greedy_migration itself: a greedy clone
(``configs/pod_rebalancing_anchored_greedy_clone.yaml``, seed 0) fitted to its own logits plus
greedy's Q-values from the oracle over greedy on the eight training clusters
(``configs/pod_rebalancing_anchored_greedy_qvalues.yaml``, seeds 0-1). Where the values tie
they keep greedy's move, so they should hold where greedy does.

    docs/results/train_seeds.sh configs/pod_rebalancing_anchored_greedy_clone.yaml \\
        runs/zoo/pods_anchored_greedy_clone 0
    docs/results/train_seeds.sh configs/pod_rebalancing_anchored_greedy_qvalues.yaml \\
        runs/zoo/pods_anchored_greedy_qvalues 0 &
    docs/results/train_seeds.sh configs/pod_rebalancing_anchored_greedy_qvalues.yaml \\
        runs/zoo/pods_anchored_greedy_qvalues 1
    python docs/results/make_zoo_pods_greedy_qvalues.py

The rule, fixed here before these models were trained:

- Validation: clusters 1 and 10-17, 20 episodes each, fresh seeds 35,000-35,019; greedy_migration,
  the entry (its card's env arguments) and both candidates play the same episodes.
- A policy is *robust* when, against greedy_migration, it is significantly better on the 180
  episodes pooled (violations divided by greedy's cluster mean) and significantly worse on no
  single cluster (paired 95% interval on its 20 episodes' violations).
- The robust candidate with the lowest pooled mean replaces the entry when the entry is not
  robust, or when it is significantly better than the entry pooled. Otherwise the entry stays.
- A replacement takes a test on 30 fresh test episodes, seeds 9200-9229 (``confirm_test.py
  pod-rebalancing-anchored-ppo --seed 9200``), with the replaced model on the same episodes
  (``confirm_vs_replaced.py``; recorded, not used to choose); otherwise nothing is tested.

Writes ``docs/results/pods_anchored_greedy_qvalues_choice.json`` and, on a replacement, the
entry and its card.
"""

import json
import time
from dataclasses import replace

import numpy as np
from make_zoo import ROOT, _ship_choice, candidate_runs, compare_in_envs, label
from make_zoo_pods_many import CLUSTERS, ENV, EPISODES, REF, anchored_fields
from make_zoo_pods_qvalues import CHOICE as ROUND_L

from rlsched.splits import SPLITS
from rlsched.stats import paired
from rlsched.zoo import ZOO_DIR

CHOICE = replace(
    ROUND_L,
    pool=("pods_anchored_greedy_qvalues",),
    results="pods_anchored_greedy_qvalues_choice",
    script="docs/results/make_zoo_pods_greedy_qvalues.py",
    card_fields=anchored_fields(
        "synthetic:pods clusters 0, 3, 4, 5 and 20-23, preset today, with history_features; a "
        "greedy_migration clone fitted to its own logits plus greedy's Q-values from the "
        "clairvoyant oracle's rollouts"
    ),
)
SEED = 35_000


def main() -> None:
    t0 = time.perf_counter()
    kwargs = {**SPLITS[ENV].env_kwargs, "scenario": CHOICE.preset}
    card = json.loads((ZOO_DIR / CHOICE.name / "card.json").read_text())
    entry_kwargs = {**kwargs, **card["env_kwargs"]}
    cand_kwargs = {**kwargs, **CHOICE.extra}
    runs = candidate_runs(CHOICE.pool)
    entry = f"learned:{ZOO_DIR / CHOICE.name / 'model'}"
    specs = {f"learned:{r / 'model'}": r for r in runs}
    names = {REF: REF, entry: "entry"} | {s: label(r) for s, r in specs.items()}
    raw: dict[str, list[np.ndarray]] = {s: [] for s in names}
    groups = [([entry], entry_kwargs), (list(specs), cand_kwargs)]
    for c in CLUSTERS:
        rows = compare_in_envs(ENV, f"synthetic:pods?seed={c}", REF, groups, EPISODES, SEED)
        for r in rows:
            raw[r["policy"]].append(np.asarray(r["episode_values"], float))
        print(f"cluster {c}: " + ", ".join(f"{names[s]} {raw[s][-1].mean():.1f}" for s in names),
              flush=True)
    rel = {s: np.concatenate([v / g.mean() for v, g in zip(x, raw[REF], strict=True)])
           for s, x in raw.items()}  # fmt: skip
    metric = "violations / greedy_migration's cluster mean"

    def pooled(s: str, ref: str, what: str) -> dict:
        return paired(rel[s], rel[ref], direction="lower", reference=what, metric=metric).to_json()

    report: dict[str, dict] = {}
    for s in names:
        if s == REF:
            continue
        per = {f"cluster {c}": paired(raw[s][k], raw[REF][k], direction="lower", reference=REF,
                                      metric="violations").to_json()
               for k, c in enumerate(CLUSTERS)}  # fmt: skip
        worse = [c for c, p in per.items() if p["verdict"] == "worse"]
        vs = pooled(s, REF, REF)
        report[s] = {"relative_mean": float(rel[s].mean()), "vs_greedy": vs,
                     "clusters_worse_than_greedy": worse, "per_cluster_vs_greedy": per,
                     "robust": vs["verdict"] == "better" and not worse}  # fmt: skip
    robust = [s for s in specs if report[s]["robust"]]
    kept = min(robust, key=lambda s: rel[s].mean()) if robust else None
    vs_entry = None if kept is None else pooled(kept, entry, "the entry so far")
    entry_ok = report[entry]["robust"]
    swap = kept is not None and (not entry_ok or vs_entry["verdict"] == "better")
    out = {
        "validation": {"clusters": list(CLUSTERS), "episodes_per_cluster": EPISODES, "seed": SEED,
                       "reference": REF, "policies": {names[s]: r for s, r in report.items()}},
        "entry_robust": entry_ok, "kept": None if kept is None else names[kept],
        "kept_vs_entry": vs_entry, "replaces": swap, "seconds": time.perf_counter() - t0,
    }  # fmt: skip
    (ROOT / f"docs/results/{CHOICE.results}.json").write_text(json.dumps(out, indent=1) + "\n")
    for s, r in report.items():
        lo, hi = r["vs_greedy"]["ci95"]
        print(f"  {names[s]:36s} {r['relative_mean']:.3f} of greedy's: "
              f"{r['vs_greedy']['mean_diff']:+.3f} [{lo:+.3f}, {hi:+.3f}] "
              f"{r['vs_greedy']['verdict']}; worse on {r['clusters_worse_than_greedy']}")
    print(f"entry robust: {entry_ok}; kept {out['kept']}; vs the entry {vs_entry}; "
          f"replaces: {swap}")
    if swap:
        assert kept is not None and vs_entry is not None
        _ship_choice(
            CHOICE, specs[kept], runs, cand_kwargs,
            {label(r): float(rel[s].mean()) for s, r in specs.items()}, vs_entry, REF,
            EPISODES * len(CLUSTERS),
            selected_by=f"robust on {EPISODES} validation episodes (seeds {SEED:,}+) of each of "
            f"clusters {CLUSTERS} (significantly better than greedy_migration pooled, "
            f"significantly worse on no cluster), then the lowest mean violations relative to "
            f"greedy's among the {len(runs)} candidate runs' kept models; {CHOICE.script}",
            replaced_because="the entry so far was not robust there" if not entry_ok else
            f"significantly better than the entry so far on the same validation episodes "
            f"({vs_entry['mean_diff']:+.3f} [{vs_entry['ci95'][0]:+.3f}, "
            f"{vs_entry['ci95'][1]:+.3f}] of greedy's cluster mean)",
        )


if __name__ == "__main__":
    main()
