"""Env steps per second of WorkflowOffloading-v0 on a ~1,000-task workflow stream, one core.

An episode is a stream of ``num_workflows`` = 4 workflows of 250-255 tasks each (WfChef
``montage`` recipe, ``wfcommons:montage?tasks=260&workflows=4&seed=0``), so >= 1,000 tasks, one
step per task. Each measured loop asks the policy (``greedy_eft``, ``peft`` or ``random``) for
an action from the observation and the mask, steps the raw env, and resets it when an episode
ends (resets included), for whole episodes until ``--seconds`` have passed. Median and best of
3.

    python benchmarks/bench_offloading.py [--seconds 3] [--json out.json]
"""

from __future__ import annotations

import argparse
import time

import rlsched  # noqa: F401
from common import best_of, machine, pin_one_core, write_json
from rlsched.evaluate import make_env
from rlsched.policies import make_policy

ENV_ID = "rlsched/WorkflowOffloading-v0"
DATASET = "wfcommons:montage?tasks=260&workflows=4&seed=0"
ENV_KWARGS = {"num_workflows": 4, "max_tasks": 300}
POLICIES = ("greedy_eft", "peft", "random")


def rate(env, policy: str, seconds: float, tasks: list[int]) -> float:
    base = env.unwrapped
    pol = make_policy(policy, env)
    steps, episodes = 0, 0
    t0 = time.perf_counter()
    deadline = t0 + seconds
    obs, _ = base.reset(seed=0)
    pol.reset(0)
    while True:
        obs, _, term, trunc, info = base.step(pol.act(obs, base.action_masks()))
        steps += 1
        if term or trunc:
            tasks.append(int(info["metrics"]["tasks"]))
            episodes += 1
            if time.perf_counter() > deadline:
                break
            obs, _ = base.reset(seed=episodes)
            pol.reset(episodes)
    return steps / (time.perf_counter() - t0)


def main() -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    pin_one_core()
    t0 = time.perf_counter()
    env = make_env(ENV_ID, DATASET, **ENV_KWARGS)
    build_s = time.perf_counter() - t0
    base = env.unwrapped
    print(f"env built in {build_s:.1f} s: {base.num_servers} servers, workflows of "
          f"{sorted(len(p) for p in base._pool)} tasks")  # fmt: skip
    rows = []
    for policy in POLICIES:
        tasks: list[int] = []
        med, best = best_of(lambda p=policy, t=tasks: rate(env, p, args.seconds, t))
        rows.append(
            {
                "policy": policy,
                "steps_per_s_median": med,
                "steps_per_s_best": best,
                "episodes": len(tasks),
                "tasks_per_episode_min": min(tasks),
                "tasks_per_episode_max": max(tasks),
            }
        )
        print(
            f"{policy:12s} median {med:8.0f} steps/s  best {best:8.0f}  "
            f"({len(tasks)} episodes of {min(tasks)}-{max(tasks)} tasks)"
        )
    out = {
        "machine": machine(),
        "env": ENV_ID,
        "dataset": DATASET,
        "env_kwargs": ENV_KWARGS,
        "num_servers": base.num_servers,
        "seconds": args.seconds,
        "build_s": round(build_s, 2),
        "rows": rows,
    }
    return write_json(args.json, out)


if __name__ == "__main__":
    main()
