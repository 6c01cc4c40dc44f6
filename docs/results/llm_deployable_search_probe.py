"""Exploratory: the cost-aware search of `llm_code1x_budget_oracle.py` made deployable.

The clairvoyant search there reaches the box at a price c = 0.5 by knowing the arrivals 60 s
ahead. This probe asks what the same search does with sampled futures instead of the true
one, on validation only (conv made bursty, ``burst: 1.0``, at 1x, 2x and 3x; 300 s episodes,
seeds 82,461-82,464: 4 per preset). It reports means and per-episode values; it draws no
verdict and chooses nothing. The policies, all at the price c = 0.5 where they search:

- the heuristics HPA, threshold, static_peak and random;
- ``clairvoyant``: the budget oracle's search (the true future);
- ``search-blocks``: ``rollout:hpa?horizon=30&futures=4&score=return&top_k=10``, its 4 futures
  filled with 30-s blocks of the last 300 s of arrivals as they came (``future_sampler:
  blocks``; the forty-eighth session's exploration, run before this script existed);
- ``search-persistence``: the same search over one future that repeats the last 30 s of
  arrivals as they came (``future_history`` 30 s, as long as a block: a persistence forecast,
  the same in every draw, so one future is all of them);
- ``search-peak``: the same search over one stress future that repeats the busiest 30 s (by
  prompt tokens) of the last 300 s as they came (:class:`PeakFutures`, defined here for the
  probe alone: a scaler that plans for the recent peak, as static_peak plans for the
  episode's).

Every search takes the budget oracle's candidates (hold, +-1 or +-5 instances in one pool, and
HPA's own action; ``oracle_steps``), horizon (30 decisions) and Lagrangian reward
(``weights``). Finished episodes are kept in ``llm_deployable_search_probe.jsonl`` so a stopped
run resumes (``episode_seconds``: every episode's seconds, summed).

    python docs/results/llm_deployable_search_probe.py [--workers 2]
    # -> docs/results/llm_deployable_search_probe.json
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
from llm_code1x_budget_oracle import BASE, HORIZON, KEPT, ORACLE, STEPS, run_episodes, weights

from rlsched.envs.llm_autoscaling import LLMAutoscalingEnv

HERE = Path(__file__).resolve().parent
OUT = HERE / "llm_deployable_search_probe.json"
PARTIAL = HERE / "llm_deployable_search_probe.jsonl"
DATASET, DURATION, BURST = "azure-llm:conv", 300.0, 1.0
PRESETS = ("conv-1x", "conv-2x", "conv-3x")
SEED, EPISODES, PRICE = 82_461, 4, 0.5
SEARCH = f"rollout:{BASE}?horizon={HORIZON}&score=return&top_k=10"
BLOCKS = {"future_sampler": "blocks"}
#: each searching policy: its spec, and how its env draws sampled futures (beyond the env's
#: defaults: 300 s of history, blocks of 30 s)
SEARCHES: dict[str, tuple[str, dict[str, Any]]] = {
    "clairvoyant": (ORACLE, {}),
    "search-blocks": (f"{SEARCH}&futures=4", BLOCKS),
    "search-persistence": (f"{SEARCH}&futures=1", {**BLOCKS, "future_history": 30.0}),
    "search-peak": (f"{SEARCH}&futures=1", BLOCKS),
}


class PeakFutures(LLMAutoscalingEnv):
    """LLMAutoscaling whose ``"blocks"`` futures repeat one block: the ``future_block``
    seconds of the last ``future_history`` with the most prompt tokens (no draw)."""

    def _blocks(
        self, rng: np.random.Generator, t0: float, t: float, length: float
    ) -> tuple[np.ndarray, np.ndarray]:
        a = self._reqs.arrival
        tokens = np.concatenate([[0.0], np.cumsum(self._reqs.prompt_tokens, dtype=np.float64)])
        block = min(self.future_block, t - t0)
        starts = a[int(np.searchsorted(a, t0)) : int(np.searchsorted(a, t - block, "right"))]
        starts = starts if len(starts) else np.array([t0])  # each block starts at an arrival
        lo, hi = np.searchsorted(a, starts), np.searchsorted(a, starts + block)
        k = int(np.argmax(tokens[hi] - tokens[lo]))
        count = int(np.ceil(length / block)) if length > 0 else 0
        one = np.arange(lo[k], hi[k])
        arrival = (a[one] - starts[k] + np.arange(count)[:, None] * block).reshape(-1)
        keep = arrival < length
        return arrival[keep], np.tile(one, count)[keep]


HEURISTICS = ("hpa", "threshold", "static_peak", "random")


def play(policy: str, preset: str, seed: int) -> dict[str, Any]:
    """One validation episode (``seed``) of ``policy`` at ``preset``, made bursty."""
    from rlsched.envs.make import make_env
    from rlsched.evaluate import evaluate
    from rlsched.policies.registry import make_policy
    from rlsched.runtime import set_torch_threads

    set_torch_threads()
    start = time.perf_counter()
    kw: dict[str, Any] = {"scenario": preset, "episode_duration": DURATION, "burst": BURST}
    spec = policy
    if policy in SEARCHES:
        spec, futures = SEARCHES[policy]
        kw |= {"reward_weights": weights(PRICE), "oracle_steps": STEPS, **futures}
    env = make_env("rlsched/LLMAutoscaling-v0", DATASET, **kw)
    if policy == "search-peak":  # built as the registered env (its presets), then its futures
        env.unwrapped.__class__ = PeakFutures
    (ep,) = evaluate(make_policy(spec, env, seed=seed), env, 1, seed)
    return {"policy": policy, "preset": preset, "seed": seed,
            **{m: float(ep.metrics[m]) for m in KEPT},
            "seconds": time.perf_counter() - start}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    seeds = list(range(SEED, SEED + EPISODES))
    policies = [*HEURISTICS, *SEARCHES]
    # the longest (the searches) first
    todo = [(p, q, s) for p in reversed(policies) for q in PRESETS for s in seeds]
    done = run_episodes(play, todo, ("policy", "preset", "seed"), PARTIAL, args.workers)
    rows = [done[(p, q, s)] for p in policies for q in PRESETS for s in seeds]
    means = {q: {p: {m: float(np.mean([r[m] for r in rows if (r["policy"], r["preset"]) == (p, q)]))
                     for m in KEPT} for p in policies} for q in PRESETS}  # fmt: skip
    out = {"dataset": DATASET, "burst": BURST, "episode_duration": DURATION, "price": PRICE,
           "seeds": [seeds[0], seeds[-1]],
           "searches": {k: {"spec": spec, **futures} for k, (spec, futures) in SEARCHES.items()},
           "means": means, "episodes": rows,
           "episode_seconds": sum(r["seconds"] for r in rows)}  # fmt: skip
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {OUT}")
    for q in PRESETS:
        print(q + ": " + "; ".join(f"{p} {v['slo_attainment']:.3f} at ${v['cost']:.2f}"
                                   for p, v in means[q].items()))  # fmt: skip


if __name__ == "__main__":
    main()
