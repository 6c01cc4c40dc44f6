"""Sweep wall time: a fixed 4-trial sweep on a local Ray with 1 and 2 concurrent trials.

The sweep trains MaskablePPO for 4,096 steps (one env, no periodic evaluation) with 4 seeds on
ServerlessPlacement-v0 and evaluates each model on 2 episodes, as `rlsched sweep` does: a fresh
local Ray with 2 CPUs per run (its start-up is timed separately), one CPU and one torch thread
per trial, worker processes reused from one trial to the next (the default), a fresh results
folder each time. For scale, the same 4 trials run one after the other in this process without
Ray (`run_trial` directly).

    python benchmarks/bench_sweep.py [--repeats 2] [--json out.json]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from typing import Any

from common import machine, write_json
from rlsched.sweep import SweepConfig, run_sweep, run_trial

SWEEP: dict[str, Any] = {
    "name": "bench",
    "seeds": [0, 1, 2, 3],
    "episodes": 2,
    "envs": [
        {
            "id": "rlsched/ServerlessPlacement-v0",
            "dataset": "wfinstances:blast-43",
            "env_kwargs": {"episode_length": 40},
        }
    ],
    "algos": [
        {
            "algo": "maskable_ppo",
            "total_steps": 4096,
            "n_envs": 1,
            "n_steps": 128,
            "batch_size": 64,
            "n_epochs": 4,
            "eval_freq": 0,
            "tensorboard": False,
        }
    ],
}


def one_sweep(max_concurrent: int) -> dict[str, float]:
    sweep = SweepConfig.from_dict(dict(SWEEP))
    with tempfile.TemporaryDirectory() as d:
        t0 = time.perf_counter()
        out = run_sweep(sweep, d, max_concurrent=max_concurrent)
        wall = time.perf_counter() - t0
    if out.failed or len(out.ran) != len(out.trials):
        raise SystemExit(f"sweep failed: {out.failed}")
    return {"wall_s": wall, "ray_start_s": out.ray_start_seconds}


def serial_no_ray() -> float:
    sweep = SweepConfig.from_dict(dict(SWEEP))
    with tempfile.TemporaryDirectory() as d:
        t0 = time.perf_counter()
        for t in sweep.trials():
            run_trial(t, d)
        return time.perf_counter() - t0


def main() -> dict:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    n_trials = len(SweepConfig.from_dict(dict(SWEEP)).trials())
    rows = []
    for k in (1, 2):
        runs = [one_sweep(k) for _ in range(args.repeats)]
        walls = [r["wall_s"] for r in runs]
        row = {
            "max_concurrent": k,
            "trials": n_trials,
            "wall_s": walls,
            "ray_start_s": [r["ray_start_s"] for r in runs],
            "wall_s_median": statistics.median(walls),
            "wall_s_best": min(walls),
        }
        rows.append(row)
        start = statistics.median(row["ray_start_s"])
        print(
            f"max_concurrent={k}: {n_trials} trials in {row['wall_s_median']:.1f} s median "
            f"(best {row['wall_s_best']:.1f} s; Ray start {start:.1f} s)"
        )
    serial = serial_no_ray()
    print(f"the same trials one after the other in one process, no Ray: {serial:.1f} s")
    out = {
        "machine": machine(),
        "sweep": SWEEP,
        "rows": rows,
        "serial_no_ray_s": serial,
        "repeats": args.repeats,
    }
    return write_json(args.json, out)


if __name__ == "__main__":
    main()
