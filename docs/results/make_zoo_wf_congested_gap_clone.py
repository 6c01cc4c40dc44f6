"""Issue 13: the anchored HEFT clone reading ``node_done_gap`` (``finish_gap: true``), judged
for the zoo entry ``workflow-congested-ppo`` by the rule of ``make_zoo_wf_congested_broad.py``.

Why: the anchored clones (``make_zoo_wf_congested_anchored_clone.py``) matched only 88-89% of
HEFT's labels out of two servers and were significantly worse than HEFT on the unused families.
The observation holds HEFT's key, ``node_done``, but in a congested queue its values are
hundreds of time units apart by a few; the gap to the earliest finish reads 0 for HEFT's server
(``configs/workflow_offloading_congested_gap_clone.yaml``).

    for s in 0 1 2 3; do rlsched train --seed $s \\
        --config configs/workflow_offloading_congested_gap_clone.yaml \\
        --out runs/zoo/workflow_offloading_congested_gap_clone/seed$s; done
    python docs/results/make_zoo_wf_congested_gap_clone.py

The rule, fixed here before any of these clones was judged: that script's rule with these four
runs as the candidates (in envs with ``finish_gap``, which only adds that observation) and the
shipped entry as the entry, on fresh validation episodes of the
same three families (seeds 13,000-13,009 of each; 10,000+, 11,000+ and 12,000+ served the
earlier choices). A replacement is judged afterwards on 30 fresh test episodes, seeds
5000-5029 (``confirm_test.py workflow-congested-ppo --seed 5000 --plain``), fixed before this
ran.
"""

from dataclasses import replace

from make_zoo_wf_congested_broad import CHOICE, main

GAP_CLONES = replace(
    CHOICE,
    pool=("workflow_offloading_congested_gap_clone",),
    extra={"finish_gap": True},  # the clones read node_done_gap; HEFT and the entry not
    results="wf_congested_gap_clone_choice",
    script="docs/results/make_zoo_wf_congested_gap_clone.py",
)

if __name__ == "__main__":
    main(GAP_CLONES, first_seed=13_000)
