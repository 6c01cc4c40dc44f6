"""Issue 13: residual scalers over ``hpa_threshold`` with the low-noise recipe
(``configs/llm_autoscaling_residual_hpa_threshold_lownoise.yaml``, ``log_std_init`` -2.5),
chosen as the rounds before.

Why: in round M (``make_zoo_llm_residual_hpa_threshold.py``, ``log_std_init`` -1) three of
four runs fell from their first update and never beat their start; the fourth beat it at its
first evaluation and shipped as the entry, in effect hpa_threshold (8 of 2,700 decisions
changed). These runs explore less, so that PPO's updates start from returns near the base's;
seeds 0-1, 120,832 steps each (``runs/zoo/llm_residual_hpa_threshold_lownoise/seedN``, one
at a time; two seeds, as the session's time allows).

Fixed here (2026-11-28, eleventh session) and committed before any run trained:

1. Candidates: the runs whose kept model departs from where they started (best periodic
   evaluation above the start's, run.json ``start_eval_mean_reward``).
2. Validation, fresh episodes (seeds 61,000+; no seed of 61,000+ has played any episode of
   this env), 30 per setting, the twelve settings of ``make_zoo_llm_residual_bursty_trained.py``;
   counting, the kept candidate and the replacement rule as there: it replaces the entry
   (``llm-autoscaling-hpa-threshold-residual-ppo``, whose name it keeps) only if it meets the
   goal in more settings than the entry on the same episodes; a tie keeps the entry.
3. Test, without bursts: fresh episodes (seeds 62,000-62,029), 30 per preset, code-1x to
   code-3x then conv-1x to conv-3x, the kept candidate and the entry as it was before this
   script, each paired with HPA and threshold. Nothing is chosen on test.

    python docs/results/make_zoo_llm_residual_hpa_threshold_lownoise.py
"""

from make_zoo_llm_residual_bursty_trained import SETTINGS
from make_zoo_llm_residual_down import residual_round

if __name__ == "__main__":
    residual_round(
        "llm_residual_hpa_threshold_lownoise", range(2), (61_000, 62_000),
        "residual over hpa_threshold, log_std_init -2.5",
        "docs/results/make_zoo_llm_residual_hpa_threshold_lownoise.py",
        "the low-noise residual scalers over hpa_threshold "
        "(configs/llm_autoscaling_residual_hpa_threshold_lownoise.yaml)",
        episodes=30, env_extra=SETTINGS, test_episodes=30,
    )  # fmt: skip
