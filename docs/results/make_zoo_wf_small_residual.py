"""Issue 13: residual policies over HEFT for the small-DAG WorkflowOffloading entry
``workflow-small-lookahead-ppo`` (one 15-task workflow at a time, judged against the CP-SAT
optimum as well).

Why: the entry (HEFT cloned, then expert iteration) shows no significant difference from HEFT
on test, with a mean gap of 6.4% to the optimum (the goal: 2%). A residual policy over
first_fit became VMPlacement's first entry significantly better than the best heuristic on
test (``make_zoo_vm_residual.py``). The same idea here:
``configs/workflow_offloading_small_residual.yaml`` (HEFT's key ``node_done_gap`` as a prior,
coefficient from -10, the network's score from zero, the look-ahead feature, no clone round)
and ``configs/workflow_offloading_small_residual_soft.yaml`` (coefficient from -1):

    for c in workflow_offloading_small_residual workflow_offloading_small_residual_soft; do
      for s in 0 1 2 3 4; do rlsched train --config configs/$c.yaml \\
        --out runs/zoo/$c/seed$s --seed $s; done; done
    python docs/results/make_zoo_wf_small_residual.py

The rule, fixed here (2026-11-27, fourth session) before any run was judged:

1. Candidates: the ten runs' kept models (each its best periodic evaluation).
2. Validation: 40 fresh episodes of the validation set (seeds 11,000+; 10,000+ served every
   earlier choice). The candidates, the entry and every heuristic that does not search play
   them. Eligible: not significantly worse than the best heuristic there (paired 95%). The
   eligible candidate with the lowest mean completion replaces the entry only if it is
   significantly better than the entry on these episodes.
3. Test, whatever the choice: 40 fresh test episodes (seeds 2000+; 1000+ served the cards),
   the kept candidate and the entry each beside every heuristic that does not search, the
   search teacher ``mdp_rollout`` and the CP-SAT ``optimal``, with every episode's gap to the
   optimum. Nothing is chosen on test.

A replacement's card takes its verdicts on the card's usual episodes (validation seeds 10,000+,
test seeds 1000+, 40 each) as ``make_zoo_wf_small.py`` writes them. Writes
``docs/results/wf_small_residual_choice.json``.
"""

import json
import time
from pathlib import Path

import numpy as np
from make_zoo import ROOT, candidate_runs, label
from make_zoo_wf_small import (
    TEST,
    TEST_SEED,
    VAL_SEED,
    VALIDATION,
    judge,
    round_tests,
    ship_entry,
)

from rlsched.agents.export import write_card
from rlsched.stats import paired
from rlsched.zoo import ZOO_DIR

NAME = "workflow-small-lookahead-ppo"
POOL = ("workflow_offloading_small_residual", "workflow_offloading_small_residual_soft")
EXTRA = {"lookahead": True, "finish_gap": True}
NEW_VAL_SEED, NEW_TEST_SEED = 11_000, 2000
OUT = ROOT / "docs/results/wf_small_residual_choice.json"


def main(
    pool: tuple[str, ...] = POOL,
    extra: dict = EXTRA,
    val_seed: int = NEW_VAL_SEED,
    test_seed: int = NEW_TEST_SEED,
    out_path: Path = OUT,
    what: str = "residual runs'",
    script: str = "make_zoo_wf_small_residual.py",
    validation: str = VALIDATION,
    val_episodes: int = 40,
) -> None:
    """The rule above for the runs of ``pool`` (each playing with ``extra``), on
    ``val_episodes`` fresh validation episodes of ``validation`` (seeds ``val_seed``+) and
    test seeds ``test_seed``+; writes ``out_path``."""
    t0 = time.perf_counter()
    runs = candidate_runs(pool)
    entry = f"learned:{ZOO_DIR / NAME / 'model'}"
    specs = {f"learned:{r / 'model'}": r for r in runs}
    # 2. validation (the entry reads no finish gap: the extra key only adds an observation)
    rep, _ = judge(validation, val_seed, ",".join(["plain", entry, *specs]), extra, val_episodes)
    rows = {r["policy"]: r for r in rep["results"]}

    def mean(s: str) -> float:
        return float(rows[s]["metrics"]["mean_completion"])

    eligible = [s for s in specs if rows[s]["paired"]["verdict"] != "worse"]
    kept = min(eligible, key=mean) if eligible else None
    vs_entry = None if kept is None else paired(
        rows[kept]["episode_values"], rows[entry]["episode_values"], direction="lower",
        reference="the entry so far", metric="mean_completion").to_json()  # fmt: skip
    replaces = vs_entry is not None and vs_entry["verdict"] == "better"
    out: dict = {
        "reference": rep["reference"],
        "validation": {
            "dataset": validation, "seed": val_seed,
            "episodes": len(rows[entry]["episode_values"]),
            "means": {(label(specs[s]) if s in specs else s): mean(s) for s in rows},
            "vs_best": {(label(specs[s]) if s in specs else s): rows[s]["paired"]
                        for s in rows if "paired" in rows[s]},
        },
        "kept": None if kept is None else label(specs[kept]),
        "kept_vs_entry": vs_entry,
        "replaces": replaces,
    }  # fmt: skip
    print(f"reference {rep['reference']}; entry {mean(entry):.3f}")
    for s, r in specs.items():
        p = rows[s]["paired"]
        print(f"  {label(r):45s} {mean(s):8.3f} {p['mean_diff']:+.3f} "
              f"[{p['ci95'][0]:+.3f}, {p['ci95'][1]:+.3f}] {p['verdict']}", flush=True)  # fmt: skip
    print(f"kept {out['kept']}; vs the entry {vs_entry}; replaces: {replaces}", flush=True)
    # 3. test, whatever the choice
    players = {"entry": entry, **({"kept": kept} if kept is not None else {})}
    out["test"] = round_tests(players, test_seed, extra)
    out["seconds"] = time.perf_counter() - t0
    out_path.write_text(json.dumps(out, indent=1) + "\n")
    if replaces:
        assert kept is not None and vs_entry is not None
        run = specs[kept]
        pols = f"plain,mdp_rollout,optimal,{kept}"
        val, _ = judge(VALIDATION, VAL_SEED, pols, extra)
        test, _ = judge(TEST, TEST_SEED, pols, extra)
        trows = {r["policy"]: r for r in test["results"]}
        val_means = {r: float(np.nan) for r in runs}
        val_means.update({specs[s]: mean(s) for s in specs})
        vs = dict(vs_entry, reference=NAME)
        ship_entry(NAME, extra, out_path.name, run, runs, val_means, val, test, trows, kept, vs)
        card = json.loads((ZOO_DIR / NAME / "card.json").read_text())
        card["selected_by"] = (
            f"lowest mean completion on {out['validation']['episodes']} fresh validation "
            f"episodes of {validation} (seeds {val_seed:,}+) among the {len(runs)} {what} kept models not "
            "significantly worse than the best heuristic there, and significantly better than "
            f"the entry so far there; docs/results/{script}")
        write_card(NAME, card)
        print(f"shipped {label(run)} as {NAME}", flush=True)


if __name__ == "__main__":
    main()
