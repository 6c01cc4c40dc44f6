"""Issue 13, LLM round T: round Q's recipe with the SLO multiplier learned per bucket of load and
request mix (``configs/llm_autoscaling_residual_hpa_threshold_window_dual.yaml``), judged on
round S's validation grid.

Why: on round S's grid (training's request mixes fixed at each corner of their ranges and at
their centre, conv-1x to -3x) every scaler was 0.02-0.09 below HPA's mean attainment at
prompt-heavy mixes at 2x-3x, at 38-55% less cost, while at light loads the windowed heuristic is
HPA. One SLO multiplier (20) did not make the residual spend there. A multiplier per bucket
(``slo_dual``) can rise where the scaler trails HPA and fall where it does not; over HPA itself
(``make_zoo_llm_residual_dual.py``) it rose everywhere, because the exploring policy trailed HPA
in most episodes, where this base is HPA at light loads.

Fixed here (2026-11-28, thirteenth session) and committed before any run trained:

1. Candidates: seeds 0-1 of that config (``runs/zoo/llm_residual_grid_dual/seedN``, the two side
   by side on this machine, 120,832 steps), those whose kept model departs from its start.
2. Validation: round S's fifteen settings and counting on fresh episodes (seeds 75,000+; no seed
   of 75,000+ has played any episode of this env), 30 per setting. Players: HPA, the entry
   (``llm-autoscaling-hpa-threshold-residual-ppo`` as it is before this script) and the
   candidates; described: the two hpa_threshold windows. The kept candidate counts the most
   settings, ties by mean attainment; it replaces the entry only if it counts more settings than
   the entry on the same episodes.
3. Test: fresh episodes (seeds 76,000-76,029), 30 per preset, code-1x to code-3x then conv-1x to
   conv-3x: the kept candidate and the entry as it was before this script, each paired with HPA
   and threshold; then the two heuristics the same way. Nothing is chosen on test.

    OMP_NUM_THREADS=1 python docs/results/make_zoo_llm_residual_grid_dual.py
"""

from make_zoo_llm_residual_grid import HEURISTICS, grid_round

FOLDER = "llm_residual_grid_dual"

if __name__ == "__main__":
    grid_round(
        FOLDER, FOLDER, range(2), (75_000, 76_000),
        "docs/results/make_zoo_llm_residual_grid_dual.py",
        "seeds 0-1 of configs/llm_autoscaling_residual_hpa_threshold_window_dual.yaml",
        HEURISTICS,
    )  # fmt: skip
