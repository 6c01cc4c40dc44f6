"""Issue 13: the residual LLM entry played with a held correction (``residual_play_hold``: a
pool's correction counts only once the model has asked for one of the same sign k decisions in
a row; until then the pool plays HPA's action), against the entry as it is when this script
first runs.

Why: the entry (runs/zoo/llm_residual_lograte/seed3, shipped by
``make_zoo_llm_residual_lograte.py``) met the goal at 4, 4 and 5 of the 6 test settings and
never at conv-1x, where it is worse than HPA on both. On conv-1x episodes (seeds 20,500+, 2
episodes; a diagnosis, not a verdict) it made 120-121 scaling actions per episode against
HPA's 2: its corrections flip sign from one decision to the next. HPA holds its own
recommendations in a stabilisation window for the same reason. No model is trained here: each
candidate is the entry's run with the hold written into a copy of its kept model's meta.json
(runs/zoo/llm_residual_hold/seedK, K the hold, ``residual_play_hold: K`` in its config).

Fixed here (2026-11-27, fifth session) and committed before any candidate was judged, while
the 481k-step low-noise runs trained (``make_zoo_llm_residual_lownoise_long.py``):

1. Candidates: the entry's run at hold 2, 3 and 5 decisions (4, 6 and 10 s).
2. Validation, fresh episodes (seeds 23,000+; 10,000+ to 22,000+ were used before), 10 per
   setting, the six settings; counting, the kept candidate and the replacement rule as in
   ``make_zoo_llm_residual_lograte.py`` (it replaces the entry only if it meets the goal in
   more settings than the entry).
3. Test, fresh episodes (seeds 9400+; 1000+ to 9300+ were used before), 10 per preset, code-1x
   to code-3x then conv-1x to conv-3x: the kept candidate and the entry as it was before this
   script, each paired with HPA and threshold. Nothing is chosen on test.

    python docs/results/make_zoo_llm_residual_hold.py
"""

from pathlib import Path

from make_zoo import ROOT
from make_zoo_llm_residual_down import played_copy, residual_round

SOURCE = ROOT / "runs/zoo/llm_residual_lograte/seed3"
HOLDS = (2, 3, 5)
POOL_WORDS = "the lograte seed-3 model (the entry's run) at hold 2, 3 and 5 decisions"


def held(run_dir: Path, k: int) -> Path:
    """A copy of ``run_dir`` whose model plays hold ``k`` (runs/zoo/llm_residual_hold/seedK)."""
    out = ROOT / f"runs/zoo/llm_residual_hold/seed{k}"
    return played_copy(run_dir, out, "residual_play_hold", k, "hold")


def main() -> None:
    for k in HOLDS:
        held(SOURCE, k)
    # runs/zoo/llm_residual_hold/seedK (K: the hold); (validation seeds, test seeds)
    residual_round(
        "llm_residual_hold", HOLDS, (23_000, 9400), "held residual",
        "docs/results/make_zoo_llm_residual_hold.py", POOL_WORDS,
    )  # fmt: skip


if __name__ == "__main__":
    main()
