"""Issue 13: the LLM entry (its model with HPA's action as the token pool's floor) with the
prompt pool's raises also gated by that pool's demand (``residual_play_gate``, no training).

Why: at conv-1x, the training trace, the entry pays more than HPA at HPA's attainment on every
large test. A diagnosis on the training trace alone (``llm_floor_raise_diag.py``, diagnosis
seeds 20,960-20,965, neither validation nor test) gave these means against HPA: with the prompt
pool raising only at its conv-1x 75th-percentile demand (0.069, ``llm_demand_diag.py``), the
premium was $0.18 instead of $0.68 at conv-1x, with -$0.38 at +0.003 attainment at conv-2x and
-$6.72 at -0.003 attainment at conv-3x. Gating the token pool's raises instead lost the conv-3x
saving, so it is not a candidate.

Fixed here (2026-11-28, ninth session) and committed before this round played any validation
or test episode:

1. Candidate: ``token_floor_prompt_q75``, the entry's gate (token pool never below HPA's
   action) plus prompt raises only at ``prompt_demand`` >= 0.069.
2. Validation, fresh episodes (seeds 38,000+; 10,000+ to 37,000+ were used before), 30 per
   setting, the twelve settings of ``make_zoo_llm_residual_bursty_trained.py``; counting and
   the replacement rule as there: it replaces the entry only if it meets the goal in more
   settings than the entry (the token floor alone) on the same episodes; a tie keeps the entry.
3. Test, without bursts: fresh episodes (seeds 50,000-50,029; no seed of 50,000+ has played any
   episode of this env before), 30 per preset, code-1x to code-3x then conv-1x to conv-3x,
   the candidate and the entry as it was before this script, each paired with HPA and
   threshold. Nothing is chosen on test.

    python docs/results/make_zoo_llm_residual_floor_prompt.py
"""

from llm_played_round import played_round
from make_zoo_llm_residual_floor import ALWAYS, NEVER, POOLS

GATE = {"feature": POOLS, "lower_below": [ALWAYS, NEVER], "raise_at_least": [0.069, 0.0]}


def main() -> None:
    played_round(
        "llm_residual_floor_prompt", "residual_play_gate", {"token_floor_prompt_q75": GATE},
        (38_000, 50_000), "entry, token floor and prompt raises gated by demand",
        "the entry's own model played with HPA's action as the token pool's floor and the "
        "prompt pool's raises gated by its demand (residual_play_gate; no training)",
        "the entry (the token floor alone)", validation_episodes=30,
    )  # fmt: skip


if __name__ == "__main__":
    main()
