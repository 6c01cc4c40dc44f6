"""Issue 13: residual policies over HEFT, judged for the zoo entry ``workflow-congested-ppo``
by the rule of ``make_zoo_wf_congested_broad.py``.

Why: the entry (PPO from an anchored HEFT clone reading ``node_done_gap``, chosen by
``make_zoo_wf_congested_gap_ppo.py``) is still significantly worse than HEFT on 30 fresh test
episodes (+1.1%, 3 wins and 27 losses): a clone that matches 94-96% of HEFT's labels starts
below HEFT, and PPO did not make that up. A residual policy starts at HEFT exactly: every
server's logit is a learned coefficient times symlog(``node_done_gap``), HEFT's key, plus the
network's score, which starts at zero (``node_prior_key``), so training only learns where to
leave HEFT's server. Two recipes, seeds 0-3 each:
``configs/workflow_offloading_congested_residual_clone.yaml`` (the entry's recipe with the
prior: the clone round fits the critic) and ``configs/workflow_offloading_congested_residual.
yaml`` (no clone round).

    for c in workflow_offloading_congested_residual_clone workflow_offloading_congested_residual
    do for s in 0 1 2 3; do rlsched train --seed $s --config configs/$c.yaml \\
        --out runs/zoo/$c/seed$s; done; done
    python docs/results/make_zoo_wf_congested_residual.py
    python docs/results/zoo_oracle.py   # after a replacement: the card's oracle record

The rule, fixed here before any of these runs was judged: that script's rule with these eight
runs as the candidates (in envs with ``finish_gap``, which only adds that observation) and the
shipped entry as the entry, on fresh validation episodes of the same three families (seeds
15,000-15,009 of each; 10,000+ to 14,000+ served the earlier choices). A replacement is judged
afterwards on 30 fresh test episodes, seeds 6000-6029 (``confirm_test.py workflow-congested-ppo
--seed 6000 --plain``), fixed before this ran.
"""

from dataclasses import replace

from make_zoo_wf_congested_broad import CHOICE, main

RESIDUAL = replace(
    CHOICE,
    pool=(
        "workflow_offloading_congested_residual_clone",
        "workflow_offloading_congested_residual",
    ),
    extra={"finish_gap": True},  # the models read node_done_gap; HEFT and the entry not
    results="wf_congested_residual_choice",
    script="docs/results/make_zoo_wf_congested_residual.py",
)

if __name__ == "__main__":
    main(RESIDUAL, first_seed=15_000)
