"""Issue 13: residual policies over first_fit for the VMPlacement entry ``vm-recovering-5-ppo``.

Why: the entry (a first_fit clone fine-tuned by PPO) shows no significant difference from
first_fit on its tests, where the clairvoyant oracle's headroom over the best heuristic is
7.6%. ``configs/vm_placement_recovering5_residual.yaml`` makes the node network a residual
policy over first_fit (first_fit's key ``node_position`` as a prior, the network's own score
from zero), as WorkflowOffloading and PodRebalancing did:

    for c in vm_placement_recovering5_residual vm_placement_recovering5_residual_soft; do
      for s in 0 1 2 3 4; do rlsched train --config configs/$c.yaml \\
        --out runs/zoo/$c/seed$s --seed $s; done; done
    python docs/results/make_zoo_vm_residual.py

The rule, fixed here (2026-11-27, fourth session) while the runs trained and before any of
them was judged: the rule of ``make_zoo_vm.py`` (``make_zoo.pooled_choice``) with these
runs as the candidates (the softer recipe, ``configs/vm_placement_recovering5_residual_soft.yaml``,
prior coefficient from -1, joined the pool before anything was judged: at -10 the periodic
evaluations of seeds 0 and 1 stayed at their start's value from 60k steps on), on 100 fresh
validation episodes (seeds 11,000-11,099; 10,000-10,199
served the earlier choices). Every candidate's kept model, the entry and every plain
heuristic play them; eligible: not significantly worse than the best heuristic there; the
eligible candidate with the highest mean VMs placed replaces the entry only if the entry is
not eligible or that candidate is significantly better than the entry. A replacement is
judged afterwards on 30 fresh test episodes with the oracle, seeds 4000-4029
(``confirm_test.py vm-recovering-5-ppo --seed 4000``; 1000+ to 3000+ were used before).

Added after that test passed, before any of its seeds played: a second test fixed beforehand,
30 fresh test episodes, seeds 5000-5029 (``confirm_test.py vm-recovering-5-ppo --seed 5000``),
as the WorkflowOffloading round did. It can only take the pass back; the docs report both.
"""

from dataclasses import replace

from make_zoo import (
    Choice,
    pooled_choice,
)
from make_zoo_vm import CHOICE

RESIDUAL: Choice = replace(
    CHOICE,
    pool=("vm_placement_recovering5_residual", "vm_placement_recovering5_residual_soft"),
    results="vm_recovering5_residual_choice",
    script="docs/results/make_zoo_vm_residual.py",
    episodes=100,
    val_seed=11_000,
)

if __name__ == "__main__":
    pooled_choice(RESIDUAL)
