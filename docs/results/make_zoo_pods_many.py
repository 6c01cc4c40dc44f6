"""Issue 13 items 4 and 6: the anchored PodRebalancing entry ``pod-rebalancing-anchored-ppo``,
chosen again on a validation set of nine clusters, over anchored models trained on eight.

Why: one validation cluster cannot tell a model that holds across clusters from one that fails
on some (docs/results.md, "Four more clusters"). On the validation cluster (seed 1) the learned
models have about a quarter fewer violations than greedy_migration; on the test cluster (seed 2)
the entry showed no significant difference on two fresh tests (-8.4 [-17.5, +1.1] and +0.47
[-6.33, +5.63]); on clusters 6-9 the gains ranged from -26% to +12%.
``configs/pod_rebalancing_anchored_many.yaml`` trains the anchored recipe on eight clusters at
once (0, 3, 4, 5, 20-23; one sub-env each):

    docs/results/train_seeds.sh configs/pod_rebalancing_anchored_many.yaml \\
        runs/zoo/pods_anchored_many 0 1 2
    for s in 0 1 2; do
        rlsched train --resume runs/zoo/pods_anchored_many/seed$s --steps 120000; done
    python docs/results/make_zoo_pods_many.py
    python docs/results/confirm_test.py pod-rebalancing-anchored-ppo --seed 4000

The three runs are resumed from 60k to 120k steps (added before any of them was judged: seed
0's periodic evaluations on cluster 1 were still rising at 60k, -0.0937 at 45k and 50k, -0.0920
at 55k, -0.0915 at 60k).

The rule, fixed here before any of these models was judged:

- Validation: clusters 1 and 10-17 (nine generated clusters; none trains, none is the test
  cluster 2 or one of the descriptive clusters 6-9), 20 episodes each, seeds 22,000-22,019.
  greedy_migration (the best heuristic on the test cluster), the entry and every finished
  seed's kept model (its best periodic evaluation on cluster 1) play the same episodes.
- Each episode's violations are divided by greedy_migration's mean on that cluster, so that
  every cluster weighs by its share of greedy's violations, not by its size; the 180 episodes
  are pooled.
- A candidate is eligible when its paired 95% interval against greedy_migration on these
  relative violations is not "worse". The eligible candidate with the lowest mean replaces the
  entry only when it is significantly better than the entry on the same 180 episodes (or the
  entry is not eligible).
- Whatever it decides, the entry then takes a fourth test on 30 fresh test episodes of the
  test cluster, seeds 4000-4029 (the command above), also fixed here.

Writes ``docs/results/pods_anchored_many_choice.json`` and, on a replacement, the entry and its
card (its validation and test verdicts on the card's usual 10 episodes each).
"""

import json
import time

import numpy as np
from make_zoo import ROOT, Choice, _ship_choice, candidate_runs, compare_in_envs, label

from rlsched.splits import SPLITS
from rlsched.stats import paired
from rlsched.zoo import ZOO_DIR

ENV = "rlsched/PodRebalancing-v0"
CLUSTERS = (1, 10, 11, 12, 13, 14, 15, 16, 17)
EPISODES, SEED = 20, 22_000
REF = "greedy_migration"


def anchored_fields(trained_on: str) -> tuple[tuple[str, str], ...]:
    """The card fields of an anchored PodRebalancing entry trained on ``trained_on``."""
    anchor = "greedy_migration's first 8 moves and noop (candidates: 8, kept when it acts)"
    return (("anchor", anchor), ("trained_on", trained_on))


CHOICE = Choice(
    name="pod-rebalancing-anchored-ppo",
    env=ENV,
    preset="today",
    extra={},
    pool=("pods_anchored_many",),
    metric="violations",
    unit="violations",
    results="pods_anchored_many_choice",
    script="docs/results/make_zoo_pods_many.py",
    episodes=EPISODES * len(CLUSTERS),
    direction="lower",
    card_fields=anchored_fields(
        "synthetic:pods clusters 0, 3, 4, 5 and 20-23 (train_datasets), preset today"
    ),
)


def judge(choice: Choice, seed: int) -> None:
    """The rule above for ``choice``'s pool on ``EPISODES`` episodes (seeds ``seed``+) of each
    validation cluster. The candidates play with ``choice.extra`` (the observation features
    they were trained on), the entry with its card's env arguments, greedy_migration with the
    split's; such features draw nothing from the env's rng, so the episodes are the same
    (checked: :func:`compare_in_envs`)."""
    t0 = time.perf_counter()
    kwargs = {**SPLITS[ENV].env_kwargs, "scenario": choice.preset}
    cand_kwargs = {**kwargs, **choice.extra}
    runs = candidate_runs(choice.pool)
    entry = f"learned:{ZOO_DIR / choice.name / 'model'}"
    card = json.loads((ZOO_DIR / choice.name / "card.json").read_text())
    entry_kwargs = {**kwargs, **card["env_kwargs"]}
    specs = {f"learned:{r / 'model'}": r for r in runs}
    names = {REF: REF, entry: "entry"} | {s: label(r) for s, r in specs.items()}
    rel: dict[str, list[np.ndarray]] = {s: [] for s in names}
    per_cluster: dict[str, dict] = {}
    groups = [([entry], entry_kwargs), (list(specs), cand_kwargs)]
    for c in CLUSTERS:
        results = compare_in_envs(ENV, f"synthetic:pods?seed={c}", REF, groups, EPISODES, seed)
        vals = {r["policy"]: np.asarray(r["episode_values"], float) for r in results}
        scale = float(vals[REF].mean())
        per_cluster[f"cluster {c}"] = {names[s]: float(v.mean()) for s, v in vals.items()}
        for s in names:
            rel[s].append(vals[s] / scale)
        print(f"cluster {c}: " + ", ".join(f"{names[s]} {vals[s].mean():.1f}" for s in names),
              flush=True)
    pooled = {s: np.concatenate(v) for s, v in rel.items()}

    def against(s: str, ref: str, what: str) -> dict:
        return paired(pooled[s], pooled[ref], direction="lower", reference=what,
                      metric="violations / greedy_migration's cluster mean").to_json()

    vs_greedy = {s: against(s, REF, REF) for s in names if s != REF}
    eligible = [s for s in specs if vs_greedy[s]["verdict"] != "worse"]
    kept = min(eligible, key=lambda s: pooled[s].mean()) if eligible else None
    vs_entry = None if kept is None else against(kept, entry, "the entry so far")
    entry_ok = vs_greedy[entry]["verdict"] != "worse"
    replace = kept is not None and (not entry_ok or vs_entry["verdict"] == "better")
    out = {
        "validation": {"clusters": list(CLUSTERS), "episodes_per_cluster": EPISODES,
                       "seed": seed, "reference": REF,
                       "relative_means": {names[s]: float(v.mean()) for s, v in pooled.items()},
                       "vs_greedy": {names[s]: p for s, p in vs_greedy.items()},
                       "per_cluster_means": per_cluster},
        "entry_eligible": entry_ok, "kept": None if kept is None else names[kept],
        "kept_vs_entry": vs_entry, "replaces": replace, "seconds": time.perf_counter() - t0,
    }  # fmt: skip
    if choice.extra:
        out["candidate_env_kwargs"] = choice.extra
    (ROOT / f"docs/results/{choice.results}.json").write_text(json.dumps(out, indent=1) + "\n")
    for s, p in vs_greedy.items():
        lo, hi = p["ci95"]
        print(f"  {names[s]:30s} {pooled[s].mean():.3f} of greedy's: {p['mean_diff']:+.3f} "
              f"[{lo:+.3f}, {hi:+.3f}] {p['verdict']}")
    print(f"kept {out['kept']}; vs the entry {vs_entry}; replaces: {replace}")
    if replace:
        assert kept is not None and vs_entry is not None
        _ship_choice(
            choice, specs[kept], runs, cand_kwargs,
            {label(r): float(pooled[s].mean()) for s, r in specs.items()}, vs_entry, REF,
            choice.episodes,
            selected_by=f"lowest mean violations relative to greedy_migration on {EPISODES} "
            f"validation episodes (seeds {seed:,}+) of each of clusters {CLUSTERS}, among the "
            f"{len(runs)} candidate runs' kept models not significantly worse than "
            f"greedy_migration there; {choice.script}",
            replaced_because=f"on the same {choice.episodes} validation episodes, against the "
            f"entry so far: {vs_entry['verdict']} ({vs_entry['mean_diff']:+.3f} of "
            f"greedy_migration's cluster mean, 95% CI {vs_entry['ci95'][0]:+.3f} to "
            f"{vs_entry['ci95'][1]:+.3f})",
        )


def main() -> None:
    judge(CHOICE, SEED)


if __name__ == "__main__":
    main()
