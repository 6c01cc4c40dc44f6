"""Env steps per second of ServerlessPlacement-v0 driven by first_fit, on one core.

Goal (issue 2): >= 30,000 steps/s at N = 10 and >= 10,000 at N = 1000. Each measured loop asks
the policy for an action from the observation and the mask, steps the env, and resets it when
an episode ends (resets are included in the time). Rates per wall second (the goal's) and per
CPU second of this process (``*_cpu``: what a shared machine's other jobs do not change).

    python benchmarks/bench_env.py [--seconds 3] [--json out.json]
"""

from __future__ import annotations

import argparse
import statistics
import time

import rlsched  # noqa: F401
from common import best_of, machine, pin_one_core, write_json
from rlsched.evaluate import make_env
from rlsched.policies import make_policy

DATASET = "wfinstances:all"


def rate(num_nodes: int, seconds: float, wrapped: bool, cpu: list[float] | None = None) -> float:
    """Steps per wall second; appends steps per CPU second to ``cpu`` if given."""
    env = make_env("rlsched/ServerlessPlacement-v0", DATASET, num_nodes=num_nodes)
    target = env if wrapped else env.unwrapped
    pol = make_policy("first_fit", env)
    base = env.unwrapped
    obs, _ = target.reset(seed=0)
    steps, episodes = 0, 0
    c0 = time.process_time()
    t0 = time.perf_counter()
    deadline = t0 + seconds
    while True:
        obs, _, term, trunc, _ = target.step(pol.act(obs, base.action_masks()))
        steps += 1
        if term or trunc:
            episodes += 1
            obs, _ = target.reset(seed=episodes)
            if time.perf_counter() > deadline:
                break
    wall = time.perf_counter() - t0
    if cpu is not None:
        cpu.append(steps / (time.process_time() - c0))
    return steps / wall


def main() -> dict:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    pin_one_core()
    rows = []
    for n in (10, 100, 1000):
        for wrapped in (False, True):
            cpu: list[float] = []
            med, best = best_of(lambda n=n, w=wrapped, c=cpu: rate(n, args.seconds, w, c))
            rows.append(
                {
                    "num_nodes": n,
                    "gym_make_wrappers": wrapped,
                    "steps_per_s_median": med,
                    "steps_per_s_best": best,
                    "steps_per_cpu_s_median": statistics.median(cpu),
                }
            )
            print(
                f"N={n:5d} {'gym.make' if wrapped else 'raw env ':8s} "
                f"median {med:9.0f} steps/s  best {best:9.0f}  "
                f"median {statistics.median(cpu):9.0f} steps/CPU s"
            )
    out = {"machine": machine(), "dataset": DATASET, "policy": "first_fit", "rows": rows}
    return write_json(args.json, out)


if __name__ == "__main__":
    main()
