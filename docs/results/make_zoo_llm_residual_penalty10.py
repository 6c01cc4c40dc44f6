"""Issue 13: the LLM residual entry fine-tuned with the SLO multiplier doubled, chosen on the
same twelve validation settings as the last round.

Why: the entry (`llm-autoscaling-hpa-residual-ppo`, trained at ``slo_penalty`` 5) missed the
goal at code-3x on all three of its fixed tests, cheaper than HPA at lower attainment; a
residual at ``slo_penalty`` 20 (third session) held HPA's attainment on code at a
significantly higher cost. ``configs/llm_autoscaling_residual_penalty10.yaml`` fine-tunes the
entry for 120k steps at ``slo_penalty`` 10, nothing else changed (seeds 0-3,
``runs/zoo/llm_residual_penalty10/seedN``, one at a time).

Fixed here (2026-11-27, sixth session) and committed before any candidate was judged:

1. Candidates: the four runs whose kept model departs from where they started (best periodic
   evaluation above the start's; the start is the entry).
2. Validation, fresh episodes (seeds 26,000+; 10,000+ to 25,000+ were used before), 10 per
   setting, the twelve settings of ``make_zoo_llm_residual_bursty_trained.py`` (the six of
   every round as they are and with ``burst: 0.5``); counting, the kept candidate and the
   replacement rule as there (it replaces the entry only if it meets the goal in more
   settings than the entry on the same episodes).
3. Test, without bursts: fresh episodes (seeds 9700+; 1000+ to 9600+ were used before), 10 per
   preset, code-1x to code-3x then conv-1x to conv-3x, the kept candidate and the entry as it
   was before this script, each paired with HPA and threshold. Nothing is chosen on test.

    python docs/results/make_zoo_llm_residual_penalty10.py
"""

from make_zoo_llm_residual_bursty_trained import SETTINGS
from make_zoo_llm_residual_down import residual_round

if __name__ == "__main__":
    residual_round(
        "llm_residual_penalty10", range(4), (26_000, 9700), "residual at slo_penalty 10",
        "docs/results/make_zoo_llm_residual_penalty10.py",
        "the entry's fine-tunes at slo_penalty 10 "
        "(configs/llm_autoscaling_residual_penalty10.yaml)",
        episodes=10, env_extra=SETTINGS,
    )  # fmt: skip
