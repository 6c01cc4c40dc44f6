"""Issue 13: a third, larger fixed test of the LLM residual entry shipped by
``make_zoo_llm_residual_hpa_ref.py`` (the fine-tune with its SLO penalty against HPA).

Why: it met the goal at all six settings on its two fixed tests (seeds 9900+ and 9950+, 10
episodes per preset), but at code-3x its attainment was below HPA's by 6-7 points (means) on
both, with intervals reaching only just above zero: 10 episodes cannot tell a loss of that size
from none. Three times as many episodes can.

Fixed here (2026-11-27, sixth session) and committed before any of its seeds played: fresh test
episodes, seeds 9960-9989 (every test before used seeds N00-N09 of 1000-9909 and 9950-9959),
30 per preset, code-1x to code-3x then conv-1x to conv-3x, the entry and the entry it replaced
(``runs/zoo/llm_residual_hpa_ref/entry_before``), each paired with HPA and threshold on SLO
attainment and cost, 95% paired intervals, the goal's verdict per preset as in every round.
Whatever it shows is reported beside the two tests before; the entry stays (no round follows
it this session), and if it finds a setting where the goal is missed, the goal is reported as
not met there.

Writes docs/results/llm_residual_hpa_ref_test3.json.

    python docs/results/make_zoo_llm_residual_hpa_ref_test3.py
"""

from make_zoo_llm_residual_down import second_test

if __name__ == "__main__":
    second_test("llm_residual_hpa_ref", 9960, "penalty against HPA", episodes=30, name="test3")
