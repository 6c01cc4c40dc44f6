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

from make_zoo import ROOT
from make_zoo_llm_residual_down import six_setting_round

ENTRY_COPY = ROOT / "runs/zoo/llm_residual_warmup/entry_before"
RUNS = [ROOT / f"runs/zoo/llm_residual_warmup/seed{s}" for s in range(8)]
VAL_SEED, VAL_EPISODES = 19_000, 10
TEST_SEED_NEW = 9100  # 10 episodes per preset (make_zoo_llm_residual_down.TEST_EPISODES)
OUT = ROOT / "docs/results/llm_residual_warmup_choice.json"
POOL_WORDS = "the critic-warm-up runs (log-uniform loads, slo_penalty 5, 30,720 value-only steps)"


def main() -> None:
    six_setting_round(
        [r for r in RUNS if (r / "run.json").exists()], ENTRY_COPY, (VAL_SEED, TEST_SEED_NEW),
        OUT, "critic-warm-up residual", "docs/results/make_zoo_llm_residual_warmup.py",
        POOL_WORDS, episodes=VAL_EPISODES, validation_episodes=VAL_EPISODES,
    )  # fmt: skip


if __name__ == "__main__":
    main()
