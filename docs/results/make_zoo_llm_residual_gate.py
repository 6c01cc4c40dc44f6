"""Issue 13: the LLM entry's own model played with its correction gated by the SLO it sees
(``residual_play_gate``, no training): a correction that holds a pool below HPA's action counts
only while the last interval's SLO attainment (the ``slo_attainment`` feature, 2 s) is at least
a bound, one that holds it above HPA's only while that attainment is below a bound; otherwise
the pool plays HPA's action.

Why: on all four of its 30-episode tests the entry (``runs/zoo/llm_residual_hpa_ref/seed0``)
missed the goal at code-3x, cheaper than HPA at lower attainment (it held capacity below HPA's
while requests were missing their SLOs), and at conv-1x, dearer at HPA's attainment (capacity
above HPA's while nothing was missing). A gate lets the model's correction act only where its
sign agrees with what the cluster shows: cut while the SLOs are met, add while they are not.

Fixed here (2026-11-27, eighth session) and committed before any candidate was judged (no gated
copy had played any episode before):

1. Candidates, the entry's model played with these gates on ``slo_attainment``:
   ``down99`` lowers only at >= 0.99; ``down90`` lowers only at >= 0.9 (the SLO target);
   ``raise99`` raises only below 0.99; ``both99`` both of ``down99`` and ``raise99``.
2. Validation, fresh episodes (seeds 32,000+; 10,000+ to 31,000+ were used before), 10 per
   setting, the twelve settings of ``make_zoo_llm_residual_bursty_trained.py``; counting, the
   kept candidate and the replacement rule as there (it replaces the entry only if it meets
   the goal in more settings than the entry, the same model ungated, on the same episodes).
3. Test, without bursts: fresh episodes (seeds 44,000-44,029; no seed of 44,000+ has played any
   episode of this env before), 30 per preset, code-1x to code-3x then conv-1x to conv-3x, the
   kept candidate and the entry as it was before this script, each paired with HPA and
   threshold. Nothing is chosen on test; the goal is called met at a setting only where the
   intervals say so.

The first run of this script (at 738231d) stopped after its test: the call below lacked the
report's path, so the report could not be written (its validation kept ``down99``, which did
not replace the entry). The path was added and the script run again on the same episodes; it
made the same choice.

    python docs/results/make_zoo_llm_residual_gate.py
"""

from llm_played_round import played_round

FEATURE = "slo_attainment"
GATES = {
    "down99": {"feature": FEATURE, "lower_at_least": 0.99},
    "down90": {"feature": FEATURE, "lower_at_least": 0.9},
    "raise99": {"feature": FEATURE, "raise_below": 0.99},
    "both99": {"feature": FEATURE, "lower_at_least": 0.99, "raise_below": 0.99},
}


def main() -> None:
    played_round(
        "llm_residual_gate", "residual_play_gate", GATES, (32_000, 44_000),
        "entry, gated by its SLO",
        "the entry's own model played with its correction gated by the last interval's SLO "
        "attainment (residual_play_gate; no training)",
        "the entry (the same model ungated)",
    )  # fmt: skip


if __name__ == "__main__":
    main()
