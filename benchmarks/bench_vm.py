"""Env steps per second of VMPlacement-v0 driven by first_fit, on one core.

Goal (VM placement issue): >= 25,000 steps/s at N = 100 servers. VMAgent's SchedGym, measured
side by side on the same machine class by ``bench_vm_peer.py``: about 110,000 first-fit steps/s
at N = 5 and 10,000 at N = 100 (docs/fidelity.md). Each measured loop asks the policy for an action
from the observation and the mask, steps the raw env, and resets it when an episode ends
(resets included; an episode still running at twice the time budget is cut), for both
scenarios over the default ``synthetic:vm`` trace (125,430 creations with Huawei-East-1's
statistics).

    python benchmarks/bench_vm.py [--seconds 3] [--json out.json]
"""

from __future__ import annotations

import argparse
import time

import rlsched  # noqa: F401
from common import best_of, machine, pin_one_core, write_json
from rlsched.envs.vm_placement import VMPlacementEnv
from rlsched.policies.vm import FirstFitPolicy

DATASET = "synthetic:vm"
SIZES = (5, 20, 50, 100, 1000)
GOAL = {100: 25_000}


def rate(num_servers: int, scenario: str, seconds: float, stats: dict) -> float:
    env = VMPlacementEnv(num_nodes=num_servers, scenario=scenario, dataset=DATASET)
    pol = FirstFitPolicy()
    obs, _ = env.reset(seed=0)
    steps, episodes = 0, 0
    t0 = time.perf_counter()
    deadline = t0 + seconds
    while True:
        obs, _, term, trunc, _ = env.step(pol.act(obs, env.action_masks()))
        steps += 1
        if term or trunc:
            episodes += 1
            obs, _ = env.reset(seed=episodes)
            if time.perf_counter() > deadline:
                break
        elif steps % 4096 == 0 and time.perf_counter() > deadline + seconds:
            break  # a long episode (large N, recovering): stop within it
    dt = time.perf_counter() - t0
    stats["episodes"] = stats.get("episodes", 0) + episodes
    stats["steps"] = stats.get("steps", 0) + steps
    return steps / dt


def main() -> dict:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    pin_one_core()
    rows = []
    for scenario in ("fading", "recovering"):
        for n in SIZES:
            stats: dict = {}
            med, best = best_of(lambda n=n, s=scenario, st=stats: rate(n, s, args.seconds, st))
            rows.append(
                {
                    "scenario": scenario,
                    "num_servers": n,
                    "steps_per_s_median": med,
                    "steps_per_s_best": best,
                    "episodes": stats["episodes"],
                    "mean_episode_steps": stats["steps"] / max(stats["episodes"], 1),
                }
            )
            print(
                f"{scenario:10s} N={n:5d} median {med:9.0f} steps/s  best {best:9.0f}  "
                f"({stats['episodes']} episodes, {rows[-1]['mean_episode_steps']:.0f} steps each)"
            )
    out = {
        "machine": machine(),
        "dataset": DATASET,
        "policy": "first_fit",
        "seconds": args.seconds,
        "goal": {str(k): v for k, v in GOAL.items()},
        "rows": rows,
    }
    return write_json(args.json, out)


if __name__ == "__main__":
    main()
