"""Issue 13, round W5: round W4's recipe over five seeds, chosen on a fresh validation set.

Why: round W4 (``make_zoo_wf_small_contention.py``) chose between two seeds, and both were
significantly better than PEFT on its validation episodes; its kept model was then better than
PEFT on its own test and showed no significant difference on three earlier tests. Two seeds
say little about the recipe. Three more seeds of the same config
(``configs/workflow_offloading_small_contention_exit.yaml``) join W4's two::

    docs/results/train_seeds.sh configs/workflow_offloading_small_contention_exit.yaml \\
      runs/zoo/workflow_offloading_small_contention_exit 2 3 4
    python docs/results/make_zoo_wf_small_contention_more.py

The rule, fixed here (2026-11-29) before seeds 2-4 were trained: the rule of
``make_zoo_wf_small_residual.py`` over the five runs (seeds 0-4; seed 1 is the entry):

1. Candidates: the five runs' kept models.
2. Validation: 100 fresh episodes of 200 workflows that nothing else played
   (``synthetic:placement?workflows=200&tasks=15&seed=10``, seeds 17,000+). The candidates,
   the entry and every heuristic that does not search play them. Eligible: not
   significantly worse than the best heuristic there (paired 95%). The eligible candidate
   with the lowest mean completion replaces the entry only if it is significantly better than
   the entry on these episodes (the entry's own run, if kept, cannot be).
3. Test, whatever the choice: 40 fresh episodes of the test set (``seed=4``, seeds 7000+;
   1000+ to 6000+ served earlier tests), the kept candidate and the entry each beside every
   heuristic that does not search, the search teacher ``mdp_rollout`` and the CP-SAT
   ``optimal``, with every episode's gap to the optimum. Nothing is chosen on test.

Writes ``docs/results/wf_small_contention_more_choice.json`` and, on a replacement, the entry
and its card.
"""

from make_zoo import ROOT
from make_zoo_wf_small_residual import main

if __name__ == "__main__":
    main(
        pool=("workflow_offloading_small_contention_exit",),
        extra={"lookahead": True, "finish_gap": True, "optimistic_cost": True, "contention": True},
        val_seed=17_000,
        test_seed=7000,
        out_path=ROOT / "docs/results/wf_small_contention_more_choice.json",
        what="contention-aware students' (five seeds)",
        script="make_zoo_wf_small_contention_more.py",
        validation="synthetic:placement?workflows=200&tasks=15&seed=10",
        val_episodes=100,
    )
