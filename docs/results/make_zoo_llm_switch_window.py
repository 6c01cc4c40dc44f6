"""Issue 13, LLM round P: ``hpa_threshold``'s switch reading the pool's demand averaged over
the last k decisions, k chosen on validation.

Why: round O (``make_zoo_llm_switch_bound.py``) kept the bound 2.5 for both pools, and
hpa_threshold still misses conv-1x by 2-4 cents per episode on every test. A diagnosis on the
training trace (conv at 1x-3x, 6 episodes each, seeds 65,000-65,005; hpa_threshold as it is)
counted the decisions at which each pool is "heavy": at conv-1x the prompt pool never, the
token pool at 0-7% of decisions, in 4 streaks of median length 1.5 decisions (3 of them at
most 3 decisions long); at conv-2x the token pool at 96-99% (streaks of a median 149
decisions) and the prompt pool at 0-64% (8 streaks, median 2); at conv-3x both mostly heavy.
So at 1x threshold is handed a pool by spikes of a decision or two, and each time it adds
instances HPA would not. A switch that reads the demand averaged over a few decisions ignores
such spikes and keeps the long heavy spells of 2x-3x.

Fixed here (2026-11-28, twelfth session) and committed before any episode below played:

1. Candidates: ``HPAThresholdPolicy(switch_window=k)`` (the bound 2.5 for both pools) for k in
   1, 4, 8 and 16 decisions (2 s each); k = 1 is today's default.
2. Validation, fresh episodes (seeds 66,000+; no seed of 66,000+ has played any episode of
   this env), 30 per setting, the twelve settings of round O, each candidate and HPA on the
   same episodes, counted with ``meets`` as there.
3. Kept: the most settings met; ties go to k = 1 when it is among them, else to the smallest
   k.
4. Only if the kept k meets the goal in more settings than k = 1 does it become
   ``hpa_threshold``'s default; the shipped entry then keeps its base as it was trained (its
   card names the base's arguments, ``residual.policy_kwargs``, ``switch_window`` 1). (Added
   after the round: the arguments went into the base's policy spec, ``residual.policy`` =
   ``hpa_threshold?switch_window=1``, not into a separate ``policy_kwargs`` field.)
5. Test, fresh episodes (seeds 67,000-67,029), 30 per preset, code-1x to code-3x then conv-1x
   to conv-3x: the kept k and k = 1 (one player when they are the same), each paired with HPA
   and threshold, the goal's verdict per preset as in every round. Nothing is chosen on test.

Writes ``docs/results/llm_switch_window_choice.json``.

    OMP_NUM_THREADS=1 python docs/results/make_zoo_llm_switch_window.py
"""

import time

from make_zoo import ROOT
from make_zoo_llm_switch_bound import choice_report, tally, test_players, validate

SEEDS = (66_000, 67_000)
WINDOWS = (1, 4, 8, 16)
OUT = ROOT / "docs/results/llm_switch_window_choice.json"


def key(k: int) -> str:
    return f"window {k}"


def main() -> None:
    t0 = time.perf_counter()
    res = validate({key(k): {"switch_window": k} for k in WINDOWS}, SEEDS[0])
    counts, att, cost = tally(res, [key(k) for k in WINDOWS])
    top = max(counts.values())
    kept = min(k for k in WINDOWS if counts[key(k)] == top)  # k = 1 first, then the smallest
    changes = counts[key(kept)] > counts[key(1)]
    report = choice_report(SEEDS, res, (counts, att, cost), key(kept), changes, t0)
    for k in WINDOWS:
        print(f"{key(k)}: {counts[key(k)]} of 12, mean attainment {att[key(k)]:.4f}, "
              f"mean cost ${cost[key(k)]:.2f}")  # fmt: skip
    print(f"\nkept: {key(kept)}; becomes the default: {changes}\n", flush=True)
    players = {key(kept): {"switch_window": kept}}
    if kept != 1:
        players[key(1)] = {"switch_window": 1}
    test_players(players, SEEDS[1], report, t0, OUT)


if __name__ == "__main__":
    main()
