"""Issue 13: the log-uniform-load residual scalers over HPA with a fifth of the exploration
noise's std (configs/llm_autoscaling_residual_lownoise.yaml: log_std_init -2.5 instead of
-1; seeds 0-7, runs/zoo/llm_residual_lownoise/seedN), against the entry
`llm-autoscaling-hpa-residual-ppo` as it is when this script first runs.

Why: HPA plus the starting noise of the earlier residual recipes (std 0.37 of the output, 0.74
instances per pool and decision) scaled 155 times per conv-1x episode instead of HPA's 0 and
fell from 0.992 to 0.756 attainment at 1.7x the cost (seeds 20,600+, 3 episodes; a diagnosis,
not a verdict). PPO learned under that thrash. At std 0.08 the same play scaled 2.3 times and
kept 0.943. The critic warm-up round (``make_zoo_llm_residual_warmup.py``) did not stop the
periodic evaluations from falling once the actor trained, which points at the exploration
noise rather than at the critic.

Fixed here (2026-11-27, fifth session) and committed before the runs trained and before the
critic warm-up round was judged:

1. Candidates: every run of the recipe, seeds 0-7, whose kept model departs from HPA.
2. Validation, fresh episodes (seeds 21,000+; 10,000+ to 19,000+ and the diagnoses' 20,500+
   and 20,600+ were used before), 10 per setting, the six settings of
   ``make_zoo_llm_residual_down.py``; counting, the kept candidate and the replacement rule as
   in ``make_zoo_llm_residual_lograte.py``.
3. Test, fresh episodes (seeds 9200+; 1000+ to 9100+ were used before), 10 per preset, code-1x
   to code-3x then conv-1x to conv-3x: the kept candidate and the entry as it was before this
   script, each paired with HPA and threshold. Nothing is chosen on test.

    for s in 0 1 2 3 4 5 6 7; do rlsched train --config \\
        configs/llm_autoscaling_residual_lownoise.yaml \\
        --out runs/zoo/llm_residual_lownoise/seed$s --seed $s; done
    python docs/results/make_zoo_llm_residual_lownoise.py
"""

from make_zoo_llm_residual_down import residual_round

POOL_WORDS = "the low-noise runs (log_std_init -2.5, log-uniform loads, slo_penalty 5)"


def main() -> None:
    # the runs runs/zoo/FOLDER/seedN; (validation seeds, test seeds), 10 episodes each
    residual_round(
        "llm_residual_lownoise", range(8), (21_000, 9200), "low-noise residual",
        "docs/results/make_zoo_llm_residual_lownoise.py", POOL_WORDS,
    )  # fmt: skip


if __name__ == "__main__":
    main()
