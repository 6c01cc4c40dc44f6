"""Issue 13: a second fixed test of the LLM residual entry shipped by
``make_zoo_llm_residual_hpa_ref.py`` (the fine-tune with its SLO penalty against HPA).

Why: on its first fixed test (seeds 9900+) it met the goal at all 6 settings, the first model
to do so on any test; but the entry it replaced met it at all 6 on those episodes too, and at
code-2x and code-3x the new entry's attainment intervals reach only just above zero (-0.042
[-0.117, +0.029], -0.066 [-0.141, +0.006]). One test is thin evidence.

Fixed here (2026-11-27, sixth session) and committed before any of its seeds played: fresh test
episodes, seeds 9950+ (every test before used seeds N00-N09 of 1000-9909, so 9950-9959 are
unused), 10 per preset, code-1x to code-3x then conv-1x to conv-3x, the entry and the entry it
replaced (``runs/zoo/llm_residual_hpa_ref/entry_before``), each paired with HPA and threshold on
SLO attainment and cost, 95% paired intervals, the goal's verdict per preset as in every round.
The entry stays whatever this shows, and no round follows it this session.

Writes docs/results/llm_residual_hpa_ref_test2.json.

    python docs/results/make_zoo_llm_residual_hpa_ref_test2.py
"""

from make_zoo_llm_residual_down import second_test

if __name__ == "__main__":
    second_test("llm_residual_hpa_ref", 9950, "penalty against HPA")
