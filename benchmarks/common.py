"""Shared benchmark plumbing: pin to one core, describe the machine, time robustly."""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def pin_one_core() -> None:
    """Run on one core, as the goals are stated per core."""
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    os.environ["OMP_NUM_THREADS"] = "1"


def machine() -> dict[str, Any]:
    cpu = platform.processor() or "unknown"
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    import timeit

    from rlsched.runtime import git_commit, versions

    # a fixed pure-Python workload: this VM's speed drifts by up to 2x over a day, and figures
    # from different runs compare only after dividing by it
    calib = min(timeit.repeat("s = 0\nfor i in range(1_000_000): s += i", number=1, repeat=3))
    return {
        "cpu": cpu,
        "python_loop_1e6_ms": round(calib * 1e3, 1),
        "cores": os.cpu_count(),
        "cores_used": len(os.sched_getaffinity(0))
        if hasattr(os, "sched_getaffinity")
        else os.cpu_count(),
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "git_commit": git_commit(),
        **versions(),
    }


def decision_times(
    env: Any, policy: Any, seeds: list[int], limit: int | None = None,
    actions: list[Any] | None = None,
) -> list[float]:  # fmt: skip
    """Seconds of each ``policy.act`` call over episodes ``seeds`` of ``env`` (reset with
    each seed, as the policy is), stopping after ``limit`` decisions when one is given; each
    action taken is appended to ``actions`` when one is given."""
    times: list[float] = []
    for seed in seeds:
        obs, _ = env.reset(seed=seed)
        policy.reset(seed)
        done = False
        while not done and (limit is None or len(times) < limit):
            mask = env.unwrapped.action_masks()
            t0 = time.perf_counter()
            a = policy.act(obs, mask)
            times.append(time.perf_counter() - t0)
            if actions is not None:
                actions.append(a)
            obs, _, term, trunc, _ = env.step(a)
            done = term or trunc
        if limit is not None and len(times) >= limit:
            break
    return times


def best_of(fn: Callable[[], float], repeats: int = 3) -> tuple[float, float]:
    """Median and best of ``repeats`` measurements of a rate (higher is better)."""
    vals = [fn() for _ in range(repeats)]
    return statistics.median(vals), max(vals)


def write_json(path: str | None, out: dict[str, Any]) -> dict[str, Any]:
    """Write a benchmark's figures to ``path`` when one is given; returns them."""
    if path:
        with open(path, "w") as fh:
            json.dump(out, fh, indent=2)
    return out


def run_fresh(script: str, args: list[str], src: str | None = None) -> dict[str, Any]:
    """Run ``script args`` in a fresh Python process and return the JSON object it prints as
    its last line; ``src``: import rlsched from that checkout instead (the code before a
    change, e.g. a ``git worktree`` of the baseline commit)."""
    env = dict(os.environ)
    if src:
        env["PYTHONPATH"] = os.pathsep.join([str(Path(src) / "src"), env.get("PYTHONPATH", "")])
    out = subprocess.run(
        [sys.executable, script, *args], env=env, check=True, capture_output=True, text=True
    )
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))
