"""Issue 13: the LLM residual fine-tuned with its SLO penalty taken against HPA itself
(``slo_reference: hpa``), chosen on the same twelve validation settings as the two rounds
before.

Why: the goal is HPA's SLO attainment at no more than HPA's cost in every setting. With a fixed
target (0.9) and one multiplier the scaler trades the settings against each other: at
``slo_penalty`` 5 it gave up attainment at code-3x, at 10 (the entry now) at conv-2x and
code-2x. ``configs/llm_autoscaling_residual_hpa_ref.yaml`` fine-tunes the same starting model
as those rounds (``configs/zoo/start/llm-hpa-residual-lownoise-481k``) for 120k steps with a
penalty that binds only while the scaler has missed more requests than HPA had by the same time
on the same episode (``slo_penalty`` 20), seeds 0-3 (``runs/zoo/llm_residual_hpa_ref/seedN``,
one at a time).

Fixed here (2026-11-27, sixth session) and committed before any candidate was judged:

1. Candidates: the four runs whose kept model departs from where they started (best periodic
   evaluation above the start's).
2. Validation, fresh episodes (seeds 27,000+; 10,000+ to 26,000+ were used before), 10 per
   setting, the twelve settings of ``make_zoo_llm_residual_bursty_trained.py``; counting, the
   kept candidate and the replacement rule as there (it replaces the entry only if it meets
   the goal in more settings than the entry on the same episodes).
3. Test, without bursts: fresh episodes (seeds 9900+; 1000+ to 9800+ were used before), 10 per
   preset, code-1x to code-3x then conv-1x to conv-3x, the kept candidate and the entry as it
   was before this script, each paired with HPA and threshold. Nothing is chosen on test.

    python docs/results/make_zoo_llm_residual_hpa_ref.py
"""

from make_zoo_llm_residual_bursty_trained import SETTINGS
from make_zoo_llm_residual_down import residual_round

if __name__ == "__main__":
    residual_round(
        "llm_residual_hpa_ref", range(4), (27_000, 9900), "residual, penalty against HPA",
        "docs/results/make_zoo_llm_residual_hpa_ref.py",
        "the fine-tunes with the SLO penalty against HPA "
        "(configs/llm_autoscaling_residual_hpa_ref.yaml)",
        episodes=10, env_extra=SETTINGS,
    )  # fmt: skip
