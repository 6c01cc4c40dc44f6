"""Issue 13: a second fixed test of the LLM residual entry shipped by
``make_zoo_llm_residual_penalty10.py`` (the fine-tune at ``slo_penalty`` 10).

Why: on its first fixed test (seeds 9700+) it met the goal at 5 of the 6 settings, code-3x
included for the first time, missing conv-2x by an interval that just excluded zero
(-0.0038 [-0.0105, -0.0002]); on its card's code-1x episodes (seeds 1000+) its attainment was
significantly below HPA's. One test of a model chosen by a new rule is thin evidence either way.

Fixed here (2026-11-27, sixth session) and committed before any of its seeds played: fresh test
episodes, seeds 9800+ (1000+ to 9700+ were used before), 10 per preset, code-1x to code-3x then
conv-1x to conv-3x, the entry and the entry it replaced (``runs/zoo/llm_residual_penalty10/
entry_before``, the copy that round kept), each paired with HPA and threshold on SLO attainment
and cost, 95% paired intervals, the goal's verdict per preset as in every round. The entry
stays whatever this shows: a second test can only qualify the first, and no round follows it
this session.

Writes docs/results/llm_residual_penalty10_test2.json.

    python docs/results/make_zoo_llm_residual_penalty10_test2.py
"""

from make_zoo_llm_residual_down import second_test

if __name__ == "__main__":
    second_test("llm_residual_penalty10", 9800, "slo_penalty 10")
