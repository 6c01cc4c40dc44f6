"""Issue 13: the LLM entry's own model played with each pool's correction gated by that pool's
own load (``residual_play_gate`` with ``feature: [prompt_utilization, token_utilization]``, no
training): a correction that holds a pool above HPA's action counts only while the pool's
ACTIVE instances were busy at least a bound of the last interval, and (in two candidates) one
that holds it below HPA's only while they were busy less than the bound.

Why: the SLO-gated round (``make_zoo_llm_residual_gate.py``) showed on validation that the
entry's conv-1x premium comes from raises made while every SLO was met, and that the same kind
of raise carries its gains at 2x and 3x: the SLO cannot tell those apart. A pool's utilization
can: adding instances to a pool whose instances idle buys nothing. On the code trace, with
outputs far shorter than conv's, an earlier round found the residual holding more decode
instances than HPA at 1x for nothing (``docs/results/llm_residual_pools.py``, third session).
The bounds are 0.5 and 0.7, fixed before any candidate played. (The script first called 0.7
HPA's own target, ``HPAConfig.target``; the LLM env's HPA uses per-pool targets instead, 0.4
for prompt and 0.9 for token, ``DEFAULT_TARGET_UTILIZATION``. Corrected while the validation
ran, before any of its output was read; the candidates are as committed.)

Fixed here (2026-11-27, eighth session) and committed before any candidate was judged (no copy
gated by utilization had played any episode before):

1. Candidates, the entry's model with each pool gated by its own utilization:
   ``busy50`` raises only at >= 0.5; ``busy70`` only at >= 0.7; ``busy50_idle50`` raises only
   at >= 0.5 and lowers only below 0.5; ``busy70_idle70`` the same at 0.7.
2. Validation, fresh episodes (seeds 34,000+; 10,000+ to 32,000+ were used before, 33,000+ are
   held for ``make_zoo_llm_residual_hpa_ref_more.py``), 10 per setting, the twelve settings of
   ``make_zoo_llm_residual_bursty_trained.py``; counting, the kept candidate and the
   replacement rule as there (it replaces the entry only if it meets the goal in more settings
   than the entry, the same model ungated, on the same episodes).
3. Test, without bursts: fresh episodes (seeds 46,000-46,029; no seed of 46,000+ has played any
   episode of this env before), 30 per preset, code-1x to code-3x then conv-1x to conv-3x, the
   kept candidate and the entry as it was before this script, each paired with HPA and
   threshold. Nothing is chosen on test; the goal is called met at a setting only where the
   intervals say so.

    python docs/results/make_zoo_llm_residual_busy.py
"""

from llm_played_round import played_round

POOLS = ["prompt_utilization", "token_utilization"]
GATES = {
    "busy50": {"feature": POOLS, "raise_at_least": 0.5},
    "busy70": {"feature": POOLS, "raise_at_least": 0.7},
    "busy50_idle50": {"feature": POOLS, "raise_at_least": 0.5, "lower_below": 0.5},
    "busy70_idle70": {"feature": POOLS, "raise_at_least": 0.7, "lower_below": 0.7},
}


def main() -> None:
    played_round(
        "llm_residual_busy", "residual_play_gate", GATES, (34_000, 46_000),
        "entry, each pool gated by its load",
        "the entry's own model played with each pool's correction gated by that pool's "
        "utilization (residual_play_gate; no training)",
        "the entry (the same model ungated)",
    )  # fmt: skip


if __name__ == "__main__":
    main()
