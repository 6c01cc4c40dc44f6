"""Cost of ``snapshot()`` + ``restore()`` per env, and the clairvoyant oracle's decisions per
second, each env at its default size, on one core.

A snapshot is taken after 10 decisions of the env's oracle base heuristic (a state inside an
episode); the figure is the median of 200 snapshot and 200 restore calls. The oracle runs on
each env's test data (``rlsched.splits``) for ``--seconds`` of decisions (at least one), from
the start of episode seed 1000; a decision costs one snapshot, one restore per candidate action
and one base-heuristic rollout per candidate (to the episode's end, or for the env's horizon).

    python benchmarks/bench_snapshot.py [--seconds 20] [--json out.json]
"""

from __future__ import annotations

import argparse
import statistics
import time

import gymnasium as gym

import rlsched  # noqa: F401
from common import machine, pin_one_core, write_json
from rlsched.envs import ENV_IDS
from rlsched.evaluate import make_env
from rlsched.policies.registry import make_policy
from rlsched.splits import SPLITS, TEST_SEED


def snapshot_cost(env_id: str, calls: int = 200) -> dict:
    split = SPLITS[env_id]
    env = make_env(env_id, split.test, **dict(split.env_kwargs))
    base = env.unwrapped
    obs, _ = env.reset(seed=TEST_SEED)
    pol = make_policy(base.oracle_base, env, seed=0)
    for _ in range(10):
        obs, _, term, trunc, _ = env.step(pol.act(obs, base.action_masks()))
        if term or trunc:
            obs, _ = env.reset(seed=TEST_SEED + 1)
    snap_t, rest_t = [], []
    for _ in range(calls):
        t0 = time.perf_counter()
        s = base.snapshot()
        t1 = time.perf_counter()
        base.restore(s)
        t2 = time.perf_counter()
        snap_t.append(t1 - t0)
        rest_t.append(t2 - t1)
    return {
        "snapshot_us": statistics.median(snap_t) * 1e6,
        "restore_us": statistics.median(rest_t) * 1e6,
    }


def oracle_rate(env_id: str, seconds: float) -> dict:
    split = SPLITS[env_id]
    env = make_env(env_id, split.test, **dict(split.env_kwargs))
    base = env.unwrapped
    pol = make_policy("clairvoyant", env, seed=TEST_SEED)
    obs, _ = env.reset(seed=TEST_SEED)
    pol.reset(TEST_SEED)
    decisions, t0 = 0, time.perf_counter()
    while decisions == 0 or time.perf_counter() - t0 < seconds:
        obs, _, term, trunc, _ = env.step(pol.act(obs, base.action_masks()))
        decisions += 1
        if term or trunc:
            break
    dt = time.perf_counter() - t0
    space = env.action_space
    return {
        "decisions": decisions,
        "seconds": dt,
        "decisions_per_s": decisions / dt,
        "ms_per_decision": 1e3 * dt / decisions,
        "rollouts_per_decision": pol.rollouts / decisions,
        "base": pol.base_name,
        "horizon": pol.horizon,
        "top_k": pol.top_k,
        "actions": int(space.n) if isinstance(space, gym.spaces.Discrete) else str(space),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    pin_one_core()
    rows = []
    for env_id in sorted(ENV_IDS):
        row = {"env": env_id, "dataset": SPLITS[env_id].test,
               "env_kwargs": dict(SPLITS[env_id].env_kwargs)}
        row.update(snapshot_cost(env_id))
        row.update(oracle_rate(env_id, args.seconds))
        rows.append(row)
        print(
            f"{env_id:32s} snapshot {row['snapshot_us']:8.1f} us  restore "
            f"{row['restore_us']:8.1f} us  oracle {row['decisions_per_s']:8.2f} decisions/s "
            f"({row['rollouts_per_decision']:.1f} rollouts each)",
            flush=True,
        )
    write_json(args.json, {"machine": machine(), "seconds": args.seconds, "rows": rows})


if __name__ == "__main__":
    main()
