"""Issue 13: residual scalers over ``threshold`` with the first recipes' exploration noise
(``configs/llm_autoscaling_residual_threshold_noise.yaml``), chosen as the rounds before.

Why: round J (``make_zoo_llm_residual_threshold.py``) trained the residual over threshold with
the low-noise recipe (``log_std_init`` -2.5). Threshold moves a pool by whole instances, and a
correction of 0.16 instances rounds back to its action: three of its four runs repeated the
start's periodic evaluations exactly and never departed from threshold. These
runs are the same with ``log_std_init`` -1 (0.74 instances per pool and decision), seeds 0-3,
120,832 steps each (``runs/zoo/llm_residual_threshold_noise/seedN``, one at a time). Like round
J, this follows the test of round I, where ``threshold`` met the goal against HPA at 4 of 6.

Before its runs trained, round J's candidate replaced the entry (it met the goal
in 8 of 12 validation settings against the entry's 7; ``make_zoo_llm_residual_threshold.py``):
the low-noise run of seed 3 did leave threshold, by a small correction. Its four runs were
first stopped at the start, so that the session's time went to shipping that entry, then
trained afresh later the same session (04:15 UTC on); "the entry" below is therefore
``llm-autoscaling-threshold-residual-ppo``, the zoo's residual LLM entry when this round runs
(a replacement keeps that name).

Fixed here (2026-11-28, tenth session) and committed before any candidate was judged:

1. Candidates: the four runs whose kept model departs from where they started (threshold:
   best periodic evaluation above the start's).
2. Validation, fresh episodes (seeds 54,000+; no seed of 54,000+ has played any episode of
   this env), 30 per setting, the twelve settings of ``make_zoo_llm_residual_bursty_trained.py``;
   counting, the kept candidate (the most settings, ties by mean attainment) and the
   replacement rule as there: it replaces the entry only if it meets the goal in more
   settings than the entry on the same episodes; a tie keeps the entry.
3. Test, without bursts: fresh episodes (seeds 55,000-55,029), 30 per preset, code-1x to
   code-3x then conv-1x to conv-3x, the kept candidate and the entry as it was before this
   script, each paired with HPA and threshold. Nothing is chosen on test.

    python docs/results/make_zoo_llm_residual_threshold_noise.py
"""

from make_zoo_llm_residual_bursty_trained import SETTINGS
from make_zoo_llm_residual_down import residual_round

if __name__ == "__main__":
    residual_round(
        "llm_residual_threshold_noise", range(4), (54_000, 55_000),
        "residual over threshold, log_std_init -1",
        "docs/results/make_zoo_llm_residual_threshold_noise.py",
        "the residual scalers over threshold with log_std_init -1 "
        "(configs/llm_autoscaling_residual_threshold_noise.yaml)",
        episodes=30, env_extra=SETTINGS, test_episodes=30,
    )  # fmt: skip
