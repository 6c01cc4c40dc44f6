"""Issue 13: a second fixed test of the LLM cost-goal entry shipped by round M
(``make_zoo_llm_residual_hpa_threshold.py``), `llm-autoscaling-hpa-threshold-residual-ppo`,
beside the entry it replaced and its base heuristic alone.

Fixed here (2026-11-28, eleventh session) before it ran: fresh episodes (seeds
60,000-60,029; no seed of 60,000+ has played any episode of this env), 30 per preset, code-1x
to code-3x then conv-1x to conv-3x; the entry and the entry before (the copy
``runs/zoo/llm_residual_hpa_threshold/entry_before``) each paired with HPA and threshold, the
goal's verdict per preset as in every round; then ``hpa_threshold`` alone paired with HPA on
the same episodes. Nothing is chosen here: it says how far the first test's 4 of 6 holds.

    python docs/results/make_zoo_llm_residual_hpa_threshold_test2.py
"""

import json
import time

from make_zoo import ROOT
from make_zoo_llm_residual_down import second_test
from make_zoo_llm_residual_hpa_threshold import FOLDER, base_alone

SEED = 60_000

if __name__ == "__main__":
    second_test(FOLDER, SEED, "residual over hpa_threshold", episodes=30)
    t0 = time.perf_counter()
    alone = base_alone(None, SEED)
    alone["seconds"] = time.perf_counter() - t0
    (ROOT / f"docs/results/{FOLDER}_test2_base.json").write_text(json.dumps(alone, indent=1) + "\n")
    print(f"hpa_threshold alone meets the goal at {alone['test_presets_met']} of 6 test presets")
