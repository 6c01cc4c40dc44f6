"""Issue 13: the VMPlacement zoo entry ``vm-recovering-5-ppo``, chosen again over a pool of
candidates by a stricter rule on more validation episodes.

Why: a second test on 30 fresh test episodes (``confirm_test.py``, seeds 2000-2029) found the
entry, a best_fit clone, significantly worse than first_fit. Its card's 10 validation
episodes had already named first_fit the best heuristic. ``configs/vm_placement_recovering5_
firstfit.yaml`` clones first_fit instead:

    for s in 0 1 2 3 4; do rlsched train --config configs/vm_placement_recovering5_firstfit.yaml \\
        --out runs/zoo/vm_placement_recovering5_firstfit/seed$s --seed $s; done
    python docs/results/make_zoo_vm.py

The rule, fixed here before any candidate of the new recipe was judged:

- candidates: every seed of ``vm_placement_recovering5_nodes`` (the best_fit recipe the entry
  came from) and of ``vm_placement_recovering5_firstfit``; each run's kept model (its best
  periodic evaluation);
- they, the shipped entry and every heuristic play the same 30 validation episodes (the
  validation set, seeds 10,000-10,029; the card's 10 were too few to tell first_fit from
  best_fit);
- eligible: not significantly worse than the best heuristic there (paired 95% interval);
- the eligible candidate with the highest mean VMs placed replaces the entry when the entry is
  not eligible, or when it is significantly better than the entry on these episodes; otherwise
  the entry stays (a mean difference alone is noise: the WorkflowOffloading small-DAG entry
  followed one, docs/offloading.md);
- a replacement's card takes its verdicts on the card's usual episodes (validation seeds
  10,000+, test seeds 1000+, 10 each). A third test, on fresh test episodes (seeds
  3000-3029: ``confirm_test.py vm-recovering-5-ppo --seed 3000``), is the one that says
  whether the change holds, as 2000-2029 motivated it.

Writes ``docs/results/vm_recovering5_choice.json`` and, on a replacement, the entry and its card.

``--episodes N`` runs the same rule on the first N validation episodes (seeds 10,000+) and
writes ``vm_recovering5_choice_N.json``. 200 (2026-11-27): on 30, first_fit and best_fit
were 1.6 VMs apart and no model differed significantly from either, so the rule could not
tell a best_fit clone from a first_fit one. Validation episodes cost about 0.4 s each here;
the test set is not touched, and a replacement is judged by the third test above.
"""

import argparse

import json
import time
from pathlib import Path

import numpy as np
from make_zoo import (
    ROOT,
    best_validation,
    candidate_runs,
    label,
    ship,
    training_card,
    verdict,
)

from rlsched.agents.export import export_model
from rlsched.evaluate import compare
from rlsched.splits import SPLITS, TEST_SEED
from rlsched.stats import paired
from rlsched.zoo import ZOO_DIR

NAME = "vm-recovering-5-ppo"
ENV = "rlsched/VMPlacement-v0"
PRESET = "recovering-5"
EXTRA = {"grid_obs": False}
POOL = ("vm_placement_recovering5_nodes", "vm_placement_recovering5_firstfit")
CHOICE_EPISODES, CARD_EPISODES, VAL_SEED = 30, 10, 10_000
METRIC = "placed"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--episodes", type=int, default=CHOICE_EPISODES)
    episodes = ap.parse_args().episodes
    t0 = time.perf_counter()
    split = SPLITS[ENV]
    kwargs = {**split.env_kwargs, **EXTRA, "scenario": PRESET}
    runs = candidate_runs(POOL)
    entry = f"learned:{ZOO_DIR / NAME / 'model'}"
    specs = {f"learned:{r / 'model'}": r for r in runs}
    rep = compare(ENV, split.validation, ["plain", entry, *specs], episodes=episodes,
                  seed=VAL_SEED, env_kwargs=kwargs)
    rows = {r["policy"]: r for r in rep["results"]}
    ref = rep["reference"]

    def mean(spec: str) -> float:
        return float(rows[spec]["metrics"][METRIC])

    def eligible(spec: str) -> bool:
        return rows[spec]["paired"]["verdict"] != "worse"

    pool = [s for s in specs if eligible(s)]
    kept = max(pool, key=mean) if pool else None
    vs_entry = None if kept is None else paired(
        rows[kept]["episode_values"], rows[entry]["episode_values"], direction="higher",
        reference="the entry so far", metric=METRIC).to_json()
    replace = kept is not None and (not eligible(entry) or vs_entry["verdict"] == "better")
    out = {
        "validation": {"dataset": split.validation, "episodes": episodes,
                       "seed": VAL_SEED, "reference": ref,
                       "means": {(label(specs[s]) if s in specs else s): mean(s) for s in rows},
                       "vs_best": {(label(specs[s]) if s in specs else s): rows[s]["paired"]
                                   for s in rows if "paired" in rows[s]}},
        "entry_eligible": eligible(entry),
        "kept": None if kept is None else label(specs[kept]),
        "kept_vs_entry": vs_entry,
        "replaces": replace,
        "seconds": time.perf_counter() - t0,
    }  # fmt: skip
    name = "vm_recovering5_choice" + ("" if episodes == CHOICE_EPISODES else f"_{episodes}")
    (ROOT / f"docs/results/{name}.json").write_text(json.dumps(out, indent=1) + "\n")
    print(f"reference {ref} {mean(ref):.2f}; entry {mean(entry):.2f} "
          f"({rows[entry]['paired']['verdict']})")
    for s, r in specs.items():
        p = rows[s]["paired"]
        print(f"  {label(r):45s} {mean(s):8.2f} {p['mean_diff']:+.2f} "
              f"[{p['ci95'][0]:+.2f}, {p['ci95'][1]:+.2f}] {p['verdict']}")
    print(f"kept {out['kept']}; vs the entry {vs_entry}; replaces: {replace}")
    if replace:
        ship_entry(specs[kept], runs, kwargs, {label(r): mean(s) for s, r in specs.items()},
                   vs_entry, ref, episodes)


def ship_entry(run: Path, runs: list[Path], kwargs: dict, val_means: dict, vs_entry: dict,
               ref: str, episodes: int) -> None:
    size = export_model(run, ZOO_DIR / NAME / "model")
    split = SPLITS[ENV]
    spec = f"learned:{ZOO_DIR / NAME / 'model'}"
    val = compare(ENV, split.validation, f"plain,{spec}", episodes=CARD_EPISODES,
                  seed=VAL_SEED, env_kwargs=kwargs)
    test = compare(ENV, split.test, f"plain,{spec}", episodes=CARD_EPISODES, seed=TEST_SEED,
                   env_kwargs=kwargs)
    lo, hi = vs_entry["ci95"]
    card = {
        **training_card(NAME, ENV, run, {r: best_validation(r) for r in runs}, size,
            f"highest mean {METRIC} on the same {episodes} validation episodes (seeds "
            f"10,000+) among the {len(runs)} candidate runs' kept models not significantly "
            f"worse than the best heuristic there ({ref}); docs/results/make_zoo_vm.py"),
        "env_kwargs": {**split.env_kwargs, **EXTRA},
        "preset": PRESET,
        "trained_on": f"{split.train}, preset {PRESET}",
        "algo": "maskable_ppo",
        "policy_net": "node",
        "validation_mean_per_seed": val_means,
        "replaced_because": (
            f"on the same {episodes} validation episodes, against the entry so far: "
            f"{vs_entry['verdict']} ({vs_entry['mean_diff']:+.2f} VMs placed, 95% CI "
            f"{lo:+.2f} to {hi:+.2f})"),
        "validation": {**verdict(val, spec, CARD_EPISODES, (METRIC,)), "seed": VAL_SEED},
        "test": {**verdict(test, spec, CARD_EPISODES, (METRIC,)), "seed": TEST_SEED},
    }  # fmt: skip
    card["seeds_trained"] = [label(r) for r in runs]
    card["training"]["best_validation_reward_per_seed"] = {
        label(r): best_validation(r) for r in runs}
    ship(card, run)
    print(json.dumps({k: np.round(v, 3) if isinstance(v, float) else v
                      for k, v in card["test"]["paired"].items()}))


if __name__ == "__main__":
    main()
