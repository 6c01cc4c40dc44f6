"""Issue 13: the low-noise residual scalers over HPA trained four times as long (a copy of
runs/zoo/llm_residual_lownoise/seedN resumed from its checkpoint to 481,280 steps, in
runs/zoo/llm_residual_lownoise_long/seedN), against the entry
`llm-autoscaling-hpa-residual-ppo` as it is when this script first runs.

Why: in ``make_zoo_llm_residual_lownoise.py`` the low-noise runs no longer fell below HPA on
their periodic evaluations, but in 120,832 steps they moved little: on validation they were
HPA exactly at 1x and within a few cents or points of it elsewhere, and none met the goal in
more settings than the entry. The issue asks for training as long as validation improves.

Fixed here (2026-11-27, fifth session) and committed before the runs were resumed:

1. Runs: the four low-noise seeds whose best periodic evaluation gained most over their start
   (HPA) during their own training (run.json; not the round's validation): seeds 0 (+7.95),
   3 (+3.90), 6 (+3.45) and 2 (+1.19). Candidates: those whose kept model departs from HPA.
2. Validation, fresh episodes (seeds 22,000+; 10,000+ to 21,000+ were used before), 10 per
   setting, the six settings; counting, the kept candidate and the replacement rule as in
   ``make_zoo_llm_residual_lograte.py``.
3. Test, fresh episodes (seeds 9300+; 1000+ to 9200+ were used before), 10 per preset, code-1x
   to code-3x then conv-1x to conv-3x: the kept candidate and the entry as it was before this
   script, each paired with HPA and threshold. Nothing is chosen on test.

    for s in 0 3 6 2; do cp -r runs/zoo/llm_residual_lownoise/seed$s \\
        runs/zoo/llm_residual_lownoise_long/seed$s; rlsched train --resume \\
        runs/zoo/llm_residual_lownoise_long/seed$s --steps 481280; done
    python docs/results/make_zoo_llm_residual_lownoise_long.py
"""

from make_zoo_llm_residual_down import residual_round

POOL_WORDS = "the low-noise runs resumed to 481,280 steps (seeds 0, 2, 3, 6)"


def main() -> None:
    # the runs runs/zoo/FOLDER/seedN; (validation seeds, test seeds), 10 episodes each
    residual_round(
        "llm_residual_lownoise_long", (0, 3, 6, 2), (22_000, 9300),
        "low-noise residual, 481k steps",
        "docs/results/make_zoo_llm_residual_lownoise_long.py", POOL_WORDS,
    )  # fmt: skip


if __name__ == "__main__":
    main()
