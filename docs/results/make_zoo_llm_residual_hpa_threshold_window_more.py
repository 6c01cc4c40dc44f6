"""Issue 13, LLM round R: two more seeds of round Q's recipe (the low-noise residual over
``hpa_threshold`` with its 16-decision window), judged with round Q's seed 0 on fresh episodes.

Why: round Q trained two seeds; one never beat its start, and the other met the goal in 7 of 12
validation settings against the entry's 8, then at 5 of 6 on its test, where the entry met 3.
One candidate on one validation set says little; these add seeds 2-3
(``runs/zoo/llm_residual_hpa_threshold_window/seedN``, the two side by side, 120,832 steps).

Fixed here (2026-11-28, twelfth session) and committed before seeds 2-3 trained:

1. Candidates: seeds 0-3 of ``configs/llm_autoscaling_residual_hpa_threshold_window.yaml``
   whose kept model departs from where it started (round Q's rule 1; seed 1 did not).
2. Validation, fresh episodes (seeds 71,000+; no seed of 71,000+ has played any episode of
   this env), 30 per setting, the twelve settings of the rounds since K; counting, the kept
   candidate and the replacement rule as in round Q: it replaces the entry
   (``llm-autoscaling-hpa-threshold-residual-ppo``, whose name it keeps) only if it meets the
   goal in more settings than the entry on the same episodes; a tie keeps the entry.
3. Test, without bursts: fresh episodes (seeds 72,000-72,029), 30 per preset, code-1x to
   code-3x then conv-1x to conv-3x, the kept candidate and the entry as it was before this
   script, each paired with HPA and threshold. Nothing is chosen on test.

    OMP_NUM_THREADS=1 python docs/results/make_zoo_llm_residual_hpa_threshold_window_more.py
"""

from make_zoo_llm_residual_bursty_trained import SETTINGS
from make_zoo_llm_residual_down import residual_round

if __name__ == "__main__":
    residual_round(
        "llm_residual_hpa_threshold_window_more", range(4), (71_000, 72_000),
        "residual over hpa_threshold (window 16), more seeds",
        "docs/results/make_zoo_llm_residual_hpa_threshold_window_more.py",
        "the low-noise residual scalers over hpa_threshold with its 16-decision window "
        "(configs/llm_autoscaling_residual_hpa_threshold_window.yaml), seeds 0-3",
        episodes=30, env_extra=SETTINGS, test_episodes=30,
        runs_folder="llm_residual_hpa_threshold_window",
    )  # fmt: skip
