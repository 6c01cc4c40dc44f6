"""Issue 13: HEFT cloned under the anchor ``candidates: 2`` without RL, judged for the zoo entry
``workflow-congested-ppo`` by the rule of ``make_zoo_wf_congested_broad.py``.

Why: the anchored runs fine-tuned by PPO (``make_zoo_wf_congested_anchored.py``) left HEFT's
server on 16-59% of decisions and were significantly worse than HEFT on the three unused
families (+5.2% to +8.1%). A clone stays near its teacher, and under the anchor its errors can
only be the second-earliest server (``configs/workflow_offloading_congested_anchored_clone.yaml``).

    for s in 0 1 2 3; do rlsched train --seed $s \\
        --config configs/workflow_offloading_congested_anchored_clone.yaml \\
        --out runs/zoo/workflow_offloading_congested_anchored_clone/seed$s; done
    python docs/results/make_zoo_wf_congested_anchored_clone.py

The rule, fixed here before any of these clones was judged: that script's rule with these four
runs as the candidates and the shipped entry as the entry, on fresh validation episodes of the
same three families (seeds 12,000-12,009 of each; 10,000+ and 11,000+ served the two earlier
choices). A replacement is judged afterwards on 30 fresh test episodes, seeds 5000-5029
(``confirm_test.py workflow-congested-ppo --seed 5000 --plain``), fixed before this ran.
"""

from dataclasses import replace

from make_zoo_wf_congested_broad import CHOICE, main

CLONES = replace(
    CHOICE,
    pool=("workflow_offloading_congested_anchored_clone",),
    results="wf_congested_anchored_clone_choice",
    script="docs/results/make_zoo_wf_congested_anchored_clone.py",
)

if __name__ == "__main__":
    main(CLONES, first_seed=12_000)
