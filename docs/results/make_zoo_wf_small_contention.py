"""Issue 13, round W4: the small-DAG WorkflowOffloading entry ``workflow-small-lookahead-ppo``
chosen again, over students of the search teacher that see the workflow's own contention.

Why: in round W2's expert iteration (``configs/workflow_offloading_small_peft_exit.yaml``) the
refits matched only 4-20% of the labels where the teacher changed the student's decision, and
where the teacher over PEFT departs from PEFT (``wf_small_peft_departures.py``) it moves early
tasks off the origin and off servers that PEFT piles tasks on: what PEFT's optimistic cost
leaves out, the workflow's tasks queueing behind each other on a server's few cores. The env's
``contention`` keys give the network that (``node_subtree``: the cpu-work of the task's
descendants over each server's cores times speed; ``node_width``: the share of the subtree's
widest level a server runs at once; ``subtree``: the descendants' work, number and widest
level). The recipe is W2's expert iteration with those keys, its periodic evaluations on a
set of their own (``seed=7``, 100 episodes), seeds 0-1 (as W2's)::

    docs/results/train_seeds.sh configs/workflow_offloading_small_contention_exit.yaml \\
      runs/zoo/workflow_offloading_small_contention_exit 0 1
    python docs/results/make_zoo_wf_small_contention.py

(Round W5, ``make_zoo_wf_small_contention_more.py``, later trained seeds 2-4 into the same
folder; W4's choice was between seeds 0 and 1, so a rerun of this rule moves them aside first.)

The rule, fixed here (2026-11-29) before these models were trained: the rule of
``make_zoo_wf_small_residual.py`` over these two runs:

1. Candidates: the two runs' kept models (each its best periodic evaluation, the PEFT clone
   included).
2. Validation: 100 fresh episodes of 200 workflows that nothing else played
   (``synthetic:placement?workflows=200&tasks=15&seed=9``, seeds 16,000+). The candidates,
   the entry and every heuristic that does not search play them. Eligible: not
   significantly worse than the best heuristic there (paired 95%). The eligible candidate
   with the lowest mean completion replaces the entry only if it is significantly better than
   the entry on these episodes.
3. Test, whatever the choice: 40 fresh episodes of the test set (``seed=4``, seeds 6000+;
   1000+ to 5000+ served earlier tests), the kept candidate and the entry each beside every
   heuristic that does not search, the search teacher ``mdp_rollout`` and the CP-SAT
   ``optimal``, with every episode's gap to the optimum. Nothing is chosen on test.

A replacement's card takes its verdicts on the card's usual episodes (validation set
``seed=3``, seeds 10,000+; test seeds 1000+; 40 each). Also printed (descriptive, in sample):
each expert round's fit to its labels here and in W2's runs, overall and on the labels the
teacher changed. Writes ``docs/results/wf_small_contention_choice.json`` and, on a
replacement, the entry and its card.
"""

import json

from make_zoo import ROOT
from make_zoo_wf_small_residual import main

POOL = "workflow_offloading_small_contention_exit"
OUT = ROOT / "docs/results/wf_small_contention_choice.json"


def fits() -> dict:
    """Per run: each expert round's accuracy on all labels so far and on the changed ones."""
    out = {}
    for pool in ("workflow_offloading_small_peft_exit", POOL):
        for run in sorted((ROOT / "runs/zoo" / pool).glob("seed*")):
            rounds = json.loads((run / "run.json").read_text())["expert_rounds"]
            out[f"{pool}/{run.name}"] = [
                {k: r[k] for k in ("accuracy", "changed_accuracy", "student_agreement")}
                for r in rounds
            ]
    return out


if __name__ == "__main__":
    main(
        pool=(POOL,),
        extra={"lookahead": True, "finish_gap": True, "optimistic_cost": True, "contention": True},
        val_seed=16_000,
        test_seed=6000,
        out_path=OUT,
        what="contention-aware students'",
        script="make_zoo_wf_small_contention.py",
        validation="synthetic:placement?workflows=200&tasks=15&seed=9",
        val_episodes=100,
    )
    result = json.loads(OUT.read_text())
    result["expert_fits"] = fits()
    OUT.write_text(json.dumps(result, indent=2) + "\n")
    for name, rounds in result["expert_fits"].items():
        cells = "  ".join(f"{r['accuracy']:.3f}/{r['changed_accuracy']:.3f}" for r in rounds)
        print(f"{name}: accuracy / on changed labels by round: {cells}")
