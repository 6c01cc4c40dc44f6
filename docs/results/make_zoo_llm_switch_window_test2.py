"""Issue 13: a second fixed test of round P's choice (``make_zoo_llm_switch_window.py``),
``hpa_threshold`` with ``switch_window`` 16, which met the LLM goal at 6 of 6 presets on
round P's test (seeds 67,000-67,029).

Fixed here (2026-11-28, twelfth session) before it ran: fresh episodes (seeds
68,000-68,029; no seed of 68,000+ has played any episode of this env), 30 per preset, code-1x
to code-3x then conv-1x to conv-3x; window 16 and window 1 each paired with HPA and
threshold, the goal's verdict per preset as in every round. Nothing is chosen here: it says
how far the first test's 6 of 6 holds. Writes
``docs/results/llm_switch_window_test2.json``.

    OMP_NUM_THREADS=1 python docs/results/make_zoo_llm_switch_window_test2.py
"""

import time

from make_zoo import ROOT
from make_zoo_llm_switch_bound import ENV, EPISODES, test_players

SEED = 68_000

if __name__ == "__main__":
    report = {"env": ENV, "test_seed": SEED, "episodes": EPISODES}
    players = {"window 16": {"switch_window": 16}, "window 1": {"switch_window": 1}}
    test_players(players, SEED, report, time.perf_counter(),
                 ROOT / "docs/results/llm_switch_window_test2.json")  # fmt: skip
