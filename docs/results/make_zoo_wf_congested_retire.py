"""Issue 13: the WorkflowOffloading ``congested`` entry retired by its failed test, and a
residual policy over HEFT chosen in its place on fresh validation episodes.

Why: the entry ``workflow-congested-ppo`` (PPO from an anchored gap clone, chosen by
``make_zoo_wf_congested_gap_ppo.py``) failed the test fixed before it ran: on 30 fresh test
episodes (seeds 5000-5029) it is significantly worse than HEFT, +1.63 s [+1.05, +2.21], 3 wins
and 27 losses (``confirm_workflow-congested-ppo_seed5000.json``). The residual round
(``make_zoo_wf_congested_residual.py``, seeds 15,000+) could not tell it from HEFT on the unused
families (+0.06% [-0.37, +0.36]), nor any of the eight residual runs from it, so by that rule it
stayed: a rule that only compares on validation keeps an entry that its own test found worse
than the heuristic, however many rounds follow. Here the test result retires it. Using a test
result to retire a model is not selecting on test: what replaces it is chosen on validation
episodes alone, and it is judged afterwards on fresh test episodes that no choice has seen.

The rule, written after the residual round and fixed before these seeds played: the rule of
``make_zoo_wf_congested_broad.py`` with the same eight residual runs as candidates
(``configs/workflow_offloading_congested_residual{_clone,}.yaml`` seeds 0-3, in envs with
``finish_gap``) on fresh validation episodes of the same three unused families (seeds
16,000-16,009 of each; 10,000+ to 15,000+ served the earlier choices), plus one clause: when the
entry's last test fixed beforehand found it significantly worse than HEFT, the eligible
candidate with the lowest mean (not significantly worse than HEFT there) replaces it whatever
the entry's verdicts on these episodes. With no eligible candidate the entry stays. A
replacement is judged afterwards on 30 fresh test episodes, seeds 6000-6029
(``confirm_test.py workflow-congested-ppo --seed 6000 --plain``), fixed before the residual
round ran.

    python docs/results/make_zoo_wf_congested_retire.py
    python docs/results/zoo_oracle.py   # after a replacement: the card's oracle record
"""

from dataclasses import replace
from pathlib import Path

from make_zoo_wf_congested_broad import main
from make_zoo_wf_congested_residual import RESIDUAL

RETIRE = replace(
    RESIDUAL,
    results="wf_congested_retire_choice",
    script="docs/results/make_zoo_wf_congested_retire.py",
)
FAILED_TEST = Path(__file__).with_name("confirm_workflow-congested-ppo_seed5000.json")

if __name__ == "__main__":
    main(RETIRE, first_seed=16_000, failed_test=str(FAILED_TEST))
