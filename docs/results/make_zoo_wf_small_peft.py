"""Issue 13, round W2: the small-DAG WorkflowOffloading entry ``workflow-small-lookahead-ppo``
chosen again, over students anchored to PEFT instead of HEFT.

Why: every student so far started from HEFT, whose server choice sees the task alone; the
refits and value fits reproduced few of the decisions the search teacher changes, which depend
on the rest of the DAG (docs/offloading.md). PEFT (Arabnejad & Barbosa 2014, now the heuristic
``peft``) adds to each server's earliest finish the optimistic cost of the rest of the task's
longest path from there: a whole-DAG view, computed once per workflow, so a step reads one row
of a table. Screened before this round on the training workflows (200 episodes, seeds
50,000+): 6.9% mean gap to the optimum against HEFT's 8.9%, HEFT significantly slower (+1.90 s
[+0.73, +4.06] of mean completion). Three recipes start from it:

- ``configs/workflow_offloading_small_peft_residual.yaml``: PEFT's key as a prior (coefficient
  from -1), MaskablePPO, 100,000 steps, seeds 0-4;
- ``configs/workflow_offloading_small_peft_residual_sharp.yaml``: the same from -10, seeds 0-4;
- ``configs/workflow_offloading_small_peft_exit.yaml``: PEFT cloned, then 4 rounds of expert
  iteration (the rollout over the student labels what it reaches), seeds 0-1::

    for c in workflow_offloading_small_peft_residual workflow_offloading_small_peft_residual_sharp; do
      docs/results/train_seeds.sh configs/$c.yaml runs/zoo/$c 0 1 2 3 4; done
    docs/results/train_seeds.sh configs/workflow_offloading_small_peft_exit.yaml \\
      runs/zoo/workflow_offloading_small_peft_exit 0 1
    python docs/results/make_zoo_wf_small_peft.py

The rule, fixed here (2026-11-29) before any of these models was trained: the rule of
``make_zoo_wf_small_residual.py`` over these twelve runs, on fresh episodes:

1. Candidates: the twelve runs' kept models (each its best periodic evaluation, the untrained
   PEFT prior included for the residual recipes).
2. Validation: 40 fresh episodes of the validation set (seeds 14,000+; 10,000+ to 12,000+
   served earlier choices, 13,000+ a check of ``peft`` itself). The candidates, the entry and
   every heuristic that does not search play them (``peft`` among them). Eligible: not
   significantly worse than the best heuristic there (paired 95%). The eligible candidate with
   the lowest mean completion replaces the entry only if it is significantly better than the
   entry on these episodes.
3. Test, whatever the choice: 40 fresh test episodes (seeds 4000+; 1000+ to 3000+ served
   earlier tests), the kept candidate and the entry each beside every heuristic that does not
   search, the search teacher ``mdp_rollout`` and the CP-SAT ``optimal``, with every episode's
   gap to the optimum. Nothing is chosen on test.

Writes ``docs/results/wf_small_peft_choice.json`` and, on a replacement, the entry and its card.
"""

from make_zoo import ROOT
from make_zoo_wf_small_residual import main

POOL = (
    "workflow_offloading_small_peft_residual",
    "workflow_offloading_small_peft_residual_sharp",
    "workflow_offloading_small_peft_exit",
)

if __name__ == "__main__":
    main(
        pool=POOL,
        extra={"lookahead": True, "finish_gap": True, "optimistic_cost": True},
        val_seed=14_000,
        test_seed=4000,
        out_path=ROOT / "docs/results/wf_small_peft_choice.json",
        what="PEFT-anchored runs'",
        script="make_zoo_wf_small_peft.py",
    )
