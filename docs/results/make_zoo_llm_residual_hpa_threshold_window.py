"""Issue 13, LLM round Q: round N's low-noise residual trained over ``hpa_threshold`` as it is
since round P (its switch reads each pool's demand averaged over the last 16 decisions;
``configs/llm_autoscaling_residual_hpa_threshold_window.yaml``), chosen as the rounds before.

Why: round P made the window of 16 decisions hpa_threshold's default (8 of 12 validation
settings against 7); on its two fixed tests that heuristic met the LLM goal at 6 and 5 of 6
presets, where the shipped entry's base (the window of 1) met it at 4 and 4. The entry is a
correction learned over the window of 1. These runs learn one over the window of 16, from
scratch (the untrained model is that heuristic), 120,832 steps, seeds 0-1
(``runs/zoo/llm_residual_hpa_threshold_window/seedN``, two at a time).

Fixed here (2026-11-28, twelfth session) and committed before any run trained:

1. Candidates: the runs whose kept model departs from where they started (best periodic
   evaluation above the start's, run.json ``start_eval_mean_reward``).
2. Validation, fresh episodes (seeds 69,000+; no seed of 69,000+ has played any episode of
   this env), 30 per setting, the twelve settings of the rounds since K; counting, the kept
   candidate and the replacement rule as there: it replaces the entry
   (``llm-autoscaling-hpa-threshold-residual-ppo``, whose name it keeps) only if it meets the
   goal in more settings than the entry on the same episodes; a tie keeps the entry.
3. Test, without bursts: fresh episodes (seeds 70,000-70,029), 30 per preset, code-1x to
   code-3x then conv-1x to conv-3x, the kept candidate and the entry as it was before this
   script, each paired with HPA and threshold. Nothing is chosen on test.
4. Described, not chosen: ``hpa_threshold`` (window 16) alone on the same validation and test
   episodes, counted and paired with HPA the same way (the part of any gain that is the
   heuristic's).

    OMP_NUM_THREADS=1 python docs/results/make_zoo_llm_residual_hpa_threshold_window.py
"""

from make_zoo_llm_residual_hpa_threshold import round_with_base

FOLDER = "llm_residual_hpa_threshold_window"
SEEDS = (69_000, 70_000)

if __name__ == "__main__":
    round_with_base(
        FOLDER, range(2), SEEDS, "residual over hpa_threshold (window 16)",
        "docs/results/make_zoo_llm_residual_hpa_threshold_window.py",
        "the low-noise residual scalers over hpa_threshold with its 16-decision window "
        "(configs/llm_autoscaling_residual_hpa_threshold_window.yaml)", "hpa_threshold",
    )  # fmt: skip
