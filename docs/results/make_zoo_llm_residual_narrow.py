"""Issue 13: the LLM residual entry played with a narrower correction, chosen on the same twelve
validation settings as the rounds before. No model is trained here.

**Withdrawn before any candidate was judged** (2026-11-27, seventh session): on the first four
validation settings (conv-1x to conv-3x, mix-1x) all three copies played exactly the entry's
means, so the round was stopped. The premise was wrong: the entry's network output stays
within about [-0.3, 0.43] on conv (one validation episode at conv-2x, seed 30,000), so a clip
at 0.5 hardly binds. A copy that acts differently would need a smaller ``residual_scale``, which
moves the scaler towards HPA itself. Kept as committed, not run again; its partial output is in
``runs/zoo/llm_residual_narrow.log``.

Why: on its three 30-episode tests the entry (``make_zoo_llm_residual_hpa_ref.py``) met the goal
at 4, 3 and 4 of 6 settings, every time short of HPA's attainment at code-3x (where it saved
money) and dearer than HPA at conv-1x (at HPA's attainment). The scalers that met the goal
at every code setting on a test were the ones that stayed closest to HPA there. Here the same
trained model (``runs/zoo/llm_residual_hpa_ref/seed0``, the entry's run) plays with its
network's output clipped to a narrower range before it is scaled (``residual_play_range``;
with ``residual_scale`` 0.4 and 5 instances per full action, 0.5 of the output is one
instance): ``half`` ``[-0.5, 0.5]`` (at most one instance either way), ``cuts_half``
``[-0.5, 1]`` (cuts below HPA halved), ``adds_half`` ``[-1, 0.5]`` (additions halved); copies
under ``runs/zoo/llm_residual_narrow/NAME``.

Fixed here (2026-11-27, seventh session) and committed before any candidate was judged:

1. Candidates: the three played copies.
2. Validation, fresh episodes (seeds 30,000+; 10,000+ to 29,000+ were used before), 10 per
   setting, the twelve settings of ``make_zoo_llm_residual_bursty_trained.py``; counting, the
   kept candidate and the replacement rule as there (it replaces the entry only if it meets
   the goal in more settings than the entry, the same model at its full range, on the same
   episodes).
3. Test, without bursts: fresh episodes (seeds 42,000-42,029; no seed of 42,000+ has played any
   episode of this env before), 30 per preset, code-1x to code-3x then conv-1x to conv-3x, the
   kept candidate and the entry as it was before this script, each paired with HPA and
   threshold. Nothing is chosen on test; the goal is called met at a setting only where the
   intervals say so.

    python docs/results/make_zoo_llm_residual_narrow.py
"""

from llm_played_round import played_round

RANGES = {"half": [-0.5, 0.5], "cuts_half": [-0.5, 1.0], "adds_half": [-1.0, 0.5]}


def main() -> None:
    played_round(
        "llm_residual_narrow", "residual_play_range", RANGES, (30_000, 42_000),
        "entry, narrower correction",
        "the entry's own model played with its correction clipped to a narrower range "
        "(residual_play_range; no training)",
        "the entry (the same model at its full range)",
    )  # fmt: skip


if __name__ == "__main__":
    main()
