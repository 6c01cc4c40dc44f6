"""Issue 13, round W3: the small-DAG WorkflowOffloading entry ``workflow-small-lookahead-ppo``
chosen again, over residual policies over PEFT whose periodic evaluations play a set of their
own.

Why: in round W2 (``make_zoo_wf_small_peft.py``) the 30 workflows of the validation set
(``seed=3``) served twice: each run's periodic evaluations kept its model on them, and the
choice between runs was made on them. The two candidates validation called better than PEFT
departed from it on a few of those workflows (3 wins, 1 loss in 40 episodes), and the kept one
is worse than PEFT on test. Here the two selections play disjoint, larger sets:
``configs/workflow_offloading_small_peft_residual_apart.yaml`` (W2's soft residual recipe,
200,704 steps, periodic evaluations on 100 episodes of 200 workflows of ``seed=7``), seeds
0-4::

    docs/results/train_seeds.sh configs/workflow_offloading_small_peft_residual_apart.yaml \\
      runs/zoo/workflow_offloading_small_peft_residual_apart 0 1 2 3 4
    python docs/results/make_zoo_wf_small_peft_apart.py

The rule, fixed here (2026-11-29) before these models were trained: the rule of
``make_zoo_wf_small_residual.py`` over these five runs, with a larger validation set:

1. Candidates: the five runs' kept models (each its best periodic evaluation, the untrained
   PEFT prior included).
2. Validation: 100 fresh episodes of 200 workflows that no run trained or was evaluated on
   (``synthetic:placement?workflows=200&tasks=15&seed=8``, seeds 15,000+). The candidates,
   the entry and every heuristic that does not search play them. Eligible: not
   significantly worse than the best heuristic there (paired 95%). The eligible candidate
   with the lowest mean completion replaces the entry only if it is significantly better than
   the entry on these episodes.
3. Test, whatever the choice: 40 fresh episodes of the test set (``seed=4``, seeds 5000+;
   1000+ to 4000+ served earlier tests), the kept candidate and the entry each beside every
   heuristic that does not search, the search teacher ``mdp_rollout`` and the CP-SAT
   ``optimal``, with every episode's gap to the optimum. Nothing is chosen on test.

A replacement's card takes its verdicts on the card's usual episodes (validation set
``seed=3``, seeds 10,000+; test seeds 1000+; 40 each). Writes
``docs/results/wf_small_peft_apart_choice.json`` and, on a replacement, the entry and its
card.
"""

from make_zoo import ROOT
from make_zoo_wf_small_residual import main

if __name__ == "__main__":
    main(
        pool=("workflow_offloading_small_peft_residual_apart",),
        extra={"lookahead": True, "finish_gap": True, "optimistic_cost": True},
        val_seed=15_000,
        test_seed=5000,
        out_path=ROOT / "docs/results/wf_small_peft_apart_choice.json",
        what="PEFT-anchored runs' (periodic evaluations apart)",
        script="make_zoo_wf_small_peft_apart.py",
        validation="synthetic:placement?workflows=200&tasks=15&seed=8",
        val_episodes=100,
    )
