"""Issue 13, round W1: the small-DAG WorkflowOffloading entry ``workflow-small-lookahead-ppo``
chosen again, over one soft policy-improvement step from it.

Why: every student here fitted a teacher's *choices* (HEFT, the rollout over the student, the
CP-SAT plan), and the refits reproduced only 10-38% of the decisions the teacher changed
(docs/offloading.md). PodRebalancing's round L fitted the entry's Q-values instead (the oracle
over the entry values every move; the entry's logits are fitted to themselves plus those
values), and that step was significantly better on validation than its start
(``make_zoo_pods_qvalues.py``). One 15-task workflow per episode is deterministic, so the
clairvoyant oracle over the entry gives exact Q-values: each valid server for the task, then
the entry for the rest. ``configs/workflow_offloading_small_qvalues.yaml`` (values prior 1, as
round L) and ``configs/workflow_offloading_small_qvalues_step.yaml`` (prior 0.5: a larger
step), 1,000 oracle episodes on the training workflows each, seeds 0 and 1:

    for c in workflow_offloading_small_qvalues workflow_offloading_small_qvalues_step; do
      docs/results/train_seeds.sh configs/$c.yaml runs/zoo/$c 0 1; done
    python docs/results/make_zoo_wf_small_qvalues.py

The rule, fixed here (2026-11-29) before these models were trained: the rule of
``make_zoo_wf_small_residual.py`` over these four runs, on fresh episodes:

1. Candidates: the four runs' kept models (each the fitted model: no evaluation runs during
   the 1,024 closing PPO steps).
2. Validation: 40 fresh episodes of the validation set (seeds 12,000+; 10,000+ and 11,000+
   served earlier choices). Eligible: not significantly worse than the best heuristic there
   (paired 95%). The eligible candidate with the lowest mean completion replaces the entry only
   if it is significantly better than the entry on these episodes.
3. Test, whatever the choice: 40 fresh test episodes (seeds 3000+; 1000+ and 2000+ served
   earlier tests), the kept candidate and the entry each beside every heuristic that does not
   search, the search teacher ``mdp_rollout`` and the CP-SAT ``optimal``, with every episode's
   gap to the optimum. Nothing is chosen on test.

Writes ``docs/results/wf_small_qvalues_choice.json`` and, on a replacement, the entry and its
card.
"""

from make_zoo import ROOT
from make_zoo_wf_small_residual import main

POOL = ("workflow_offloading_small_qvalues", "workflow_offloading_small_qvalues_step")

if __name__ == "__main__":
    main(
        pool=POOL,
        extra={"lookahead": True},
        val_seed=12_000,
        test_seed=3000,
        out_path=ROOT / "docs/results/wf_small_qvalues_choice.json",
        what="soft policy-improvement runs'",
        script="make_zoo_wf_small_qvalues.py",
    )
