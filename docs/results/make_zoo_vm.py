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

from make_zoo import Choice, pooled_choice

CHOICE = Choice(
    name="vm-recovering-5-ppo",
    env="rlsched/VMPlacement-v0",
    preset="recovering-5",
    extra={"grid_obs": False},
    pool=("vm_placement_recovering5_nodes", "vm_placement_recovering5_firstfit"),
    metric="placed",
    unit="VMs placed",
    results="vm_recovering5_choice",
    script="docs/results/make_zoo_vm.py",
    episodes=30,
)

if __name__ == "__main__":
    pooled_choice(CHOICE)
