"""Issue 13: PPO from anchored HEFT clones that read ``node_done_gap`` (``finish_gap: true``),
judged for the zoo entry ``workflow-congested-ppo`` by the rule of
``make_zoo_wf_congested_broad.py``.

Why: the gap clones (``make_zoo_wf_congested_gap_clone.py``) each showed no significant
difference from HEFT on the unused families, where every earlier candidate but one was worse;
none was significantly better than the entry. PPO on the makespan reward from such a clone,
under the same anchor (``configs/workflow_offloading_congested_gap_ppo.yaml``), may find where
deviating from HEFT pays.

    for s in 0 1 2 3; do rlsched train --seed $s \\
        --config configs/workflow_offloading_congested_gap_ppo.yaml \\
        --out runs/zoo/workflow_offloading_congested_gap_ppo/seed$s; done
    python docs/results/make_zoo_wf_congested_gap_ppo.py
    python docs/results/zoo_oracle.py   # after a replacement: the card's oracle record

The rule, fixed here before any of these runs was judged: that script's rule with these four
runs as the candidates (in envs with ``finish_gap``, which only adds that observation) and the
shipped entry as the entry, on fresh validation episodes of the same three families (seeds
14,000-14,009 of each; 10,000+ to 13,000+ served the earlier choices). A replacement is judged
afterwards on 30 fresh test episodes, seeds 5000-5029 (``confirm_test.py workflow-congested-ppo
--seed 5000 --plain``), fixed before this ran.
"""

from dataclasses import replace

from make_zoo_wf_congested_broad import CHOICE, main

GAP_PPO = replace(
    CHOICE,
    pool=("workflow_offloading_congested_gap_ppo",),
    extra={"finish_gap": True},  # the models read node_done_gap; HEFT and the entry not
    results="wf_congested_gap_ppo_choice",
    script="docs/results/make_zoo_wf_congested_gap_ppo.py",
)

if __name__ == "__main__":
    main(GAP_PPO, first_seed=14_000)
