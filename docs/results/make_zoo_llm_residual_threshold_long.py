"""Issue 13: the residual over ``threshold`` trained four times as long
(``configs/llm_autoscaling_residual_threshold_long.yaml``), chosen as the rounds before.

Why: the residual over HPA left HPA's ties only after 481,280 steps; the residuals over
threshold (rounds J and K) trained 120,832. These runs go on from the model round K kept on
validation (its rule 2: seed 1, kept before its test was played) with round K's recipe
(``log_std_init`` -1) for 360,448 steps more, 481,280 in all; seeds 0-1
(``runs/zoo/llm_residual_threshold_long/seedN``, one at a time). Said plainly: round K's test
(seed 1 met the goal at 3 of 6 presets, the entry at 2) was known when this round was set;
the start is the model K's validation kept, the one it would be whatever that test said, and
every verdict below is read on episodes no earlier round has played.

Fixed here (2026-11-28, eleventh session) and committed before any run trained:

1. Candidates: the runs whose kept model departs from where they started (best periodic
   evaluation above the start's, run.json ``start_eval_mean_reward``).
2. Validation, fresh episodes (seeds 56,000+; no seed of 56,000+ has played any episode of
   this env), 30 per setting, the twelve settings of ``make_zoo_llm_residual_bursty_trained.py``;
   counting, the kept candidate (the most settings, ties by mean attainment) and the
   replacement rule as there: it replaces the entry (``llm-autoscaling-threshold-residual-ppo``,
   whose name it keeps) only if it meets the goal in more settings than the entry on the same
   episodes; a tie keeps the entry.
3. Test, without bursts: fresh episodes (seeds 57,000-57,029), 30 per preset, code-1x to
   code-3x then conv-1x to conv-3x, the kept candidate and the entry as it was before this
   script, each paired with HPA and threshold. Nothing is chosen on test.

    python docs/results/make_zoo_llm_residual_threshold_long.py
"""

from make_zoo_llm_residual_bursty_trained import SETTINGS
from make_zoo_llm_residual_down import residual_round

if __name__ == "__main__":
    residual_round(
        "llm_residual_threshold_long", range(2), (56_000, 57_000),
        "residual over threshold, 481k steps",
        "docs/results/make_zoo_llm_residual_threshold_long.py",
        "the residual scalers over threshold trained to 481,280 steps "
        "(configs/llm_autoscaling_residual_threshold_long.yaml)",
        episodes=30, env_extra=SETTINGS, test_episodes=30,
    )  # fmt: skip
