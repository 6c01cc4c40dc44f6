"""Issue 13: the log-uniform-load residual scalers over HPA with a critic warm-up
(configs/llm_autoscaling_residual_warmup.yaml, seeds 0-7, runs/zoo/llm_residual_warmup/seedN),
against the entry `llm-autoscaling-hpa-residual-ppo` as it is when this script first runs.

Why: in ``make_zoo_llm_residual_lograte.py``'s runs the periodic evaluations fell below HPA's
reward within the first 24k steps in every seed looked at while training ran, with a critic
that explained none of the returns yet (explained variance -0.15 to +0.01 over the first
updates). This recipe trains the value network alone for 30,720 steps first (the actor stays
HPA), then as before.

Fixed here (2026-11-27, fifth session) and committed before the runs trained and before
anything of the log-uniform round was judged:

1. Candidates: every run of the recipe, seeds 0-7, whose kept model departs from HPA.
2. Validation, fresh episodes (seeds 19,000+; 10,000+ to 18,000+ were used before), 10 per
   setting, the six settings of ``make_zoo_llm_residual_down.py``; counting, the kept
   candidate and the replacement rule as in ``make_zoo_llm_residual_lograte.py``.
3. Test, fresh episodes (seeds 9100+; 1000+ to 9000+ were used before), 10 per preset, code-1x
   to code-3x then conv-1x to conv-3x: the kept candidate and the entry as it was before this
   script, each paired with HPA and threshold. Nothing is chosen on test.

    for s in 0 1 2 3 4 5 6 7; do rlsched train --config \\
        configs/llm_autoscaling_residual_warmup.yaml \\
        --out runs/zoo/llm_residual_warmup/seed$s --seed $s; done
    python docs/results/make_zoo_llm_residual_warmup.py
"""

from make_zoo_llm_residual_down import residual_round

POOL_WORDS = "the critic-warm-up runs (log-uniform loads, slo_penalty 5, 30,720 value-only steps)"


def main() -> None:
    # the runs runs/zoo/FOLDER/seedN; (validation seeds, test seeds), 10 episodes each
    residual_round(
        "llm_residual_warmup", range(8), (19_000, 9100), "critic-warm-up residual",
        "docs/results/make_zoo_llm_residual_warmup.py", POOL_WORDS,
    )  # fmt: skip


if __name__ == "__main__":
    main()
