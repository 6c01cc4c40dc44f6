"""Issue 13: the WorkflowOffloading ``congested`` entry retired again by its failed test, and
its successor chosen from the same residual pool on fresh validation episodes.

Why: the residual entry that ``make_zoo_wf_congested_retire.py`` shipped
(``workflow_offloading_congested_residual_clone/seed2``) failed the test fixed before it ran:
on 30 fresh test episodes (seeds 6000-6029) it is significantly worse than HEFT, +0.71 s
[+0.38, +1.24], +0.44%, 1 win and 29 losses (``confirm_workflow-congested-ppo_seed6000.json``).

The rule, written on 2026-11-27 (fourth session) and fixed before these seeds played: the rule
of ``make_zoo_wf_congested_retire.py`` (the broad rule of ``make_zoo_wf_congested_broad.py``
with the retiring clause) over the same eight residual runs less the retired one, which a failed
test removes from the candidates for good, on fresh validation episodes of the same three
unused families (seeds 17,000-17,009 of each; 10,000+ to 16,000+ served the earlier choices).
With no eligible candidate the entry stays. A replacement is judged afterwards on 30 fresh test
episodes, seeds 7000-7029 (``confirm_test.py workflow-congested-ppo --seed 7000 --plain``),
fixed before this ran.

Added after that test, before any of its seeds played: a second test fixed beforehand, 30 fresh
test episodes, seeds 8000-8029 (``confirm_test.py workflow-congested-ppo --seed 8000 --plain``).
Why: the replacement passed its first test (no significant difference from HEFT, -0.11 s
[-0.56, +0.005], 1 win, 8 ties, 21 losses), but it is the third model in a row tested on this
preset, and retiring and re-testing until one passes would make a pass partly a product of
chance. A second test can only take the pass back, never grant one: the entry stays either way
(no further round follows on this preset), and the docs report both tests.

    python docs/results/make_zoo_wf_congested_retire2.py
    python docs/results/zoo_oracle.py   # after a replacement: the card's oracle record
"""

from dataclasses import replace
from pathlib import Path

from make_zoo_wf_congested_broad import main
from make_zoo_wf_congested_residual import RESIDUAL

RETIRE2 = replace(
    RESIDUAL,
    results="wf_congested_retire2_choice",
    script="docs/results/make_zoo_wf_congested_retire2.py",
)
FAILED_TEST = Path(__file__).with_name("confirm_workflow-congested-ppo_seed6000.json")
RETIRED = ("workflow_offloading_congested_residual_clone/seed2",)

if __name__ == "__main__":
    main(RETIRE2, first_seed=17_000, failed_test=str(FAILED_TEST), retired=RETIRED)
