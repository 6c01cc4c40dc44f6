"""Issue 13: the token-floor copy of the LLM entry against the entry itself, on three times the
validation episodes (``residual_play_gate``, no training).

Why, said plainly: this round follows a test result. In ``make_zoo_llm_residual_floor.py`` the
``token_floor`` copy (the entry's model, with a correction never allowed to hold the token pool
below HPA's action) tied the entry on validation (8 of 12 settings each), so by that rule the
entry stayed. On that round's test (seeds 48,000-48,029) it met the goal at 5 of 6 settings,
the entry at 4: its code-3x attainment was no longer significantly below HPA's. A test cannot
reverse a choice made on validation, and ten episodes per setting could not tell the two
apart, so this round asks validation again with more episodes, and its test plays fresh seeds;
the verdict on the kept model rests on that test alone.

Fixed here (2026-11-28, ninth session) and committed before this round played any episode:

1. Candidate: ``token_floor`` exactly as in ``make_zoo_llm_residual_floor.py``.
2. Validation, fresh episodes (seeds 37,000+; 10,000+ to 36,000+ were used before), 30 per
   setting, the twelve settings of ``make_zoo_llm_residual_bursty_trained.py``; counting and
   the replacement rule as there: it replaces the entry only if it meets the goal in more
   settings than the entry (the same model ungated) on the same episodes; a tie keeps the entry.
3. Test, without bursts: fresh episodes (seeds 49,000-49,029; no seed of 49,000+ has played any
   episode of this env before), 30 per preset, code-1x to code-3x then conv-1x to conv-3x,
   ``token_floor`` and the entry as it was before this script, each paired with HPA and
   threshold. Nothing is chosen on test.

    python docs/results/make_zoo_llm_residual_floor2.py
"""

from llm_played_round import played_round
from make_zoo_llm_residual_floor import GATES


def main() -> None:
    played_round(
        "llm_residual_floor2", "residual_play_gate", {"token_floor": GATES["token_floor"]},
        (37_000, 49_000), "entry, HPA's action as the token pool's floor",
        "the entry's own model played with HPA's action as the token pool's floor "
        "(residual_play_gate; no training)",
        "the entry (the same model ungated)", validation_episodes=30,
    )  # fmt: skip


if __name__ == "__main__":
    main()
