"""Decision latency of WorkflowOffloading's search with compiled rollouts against the same
search stepping the env (``compiled=false``), on one core, and whether they decide alike.

Figures, each search played on the same episodes both ways in one process (after one warm-up
episode, so numba's compile or cache load is not timed):

- ``small``: ``rollout:peft?top_k=K&horizon=end&futures=0&score=return&reward=makespan`` on
  the small DAGs of docs/offloading.md (one 15-task workflow, 5 edge servers and the cloud;
  ``synthetic:placement?workflows=200&tasks=15&seed=45``, episodes 20,000+), for each ``K``;
- ``mdp_rollout``: the patent's rollout (greedy_eft to the end of each workflow, every server
  a candidate) on the default env with ``task_order="rank"`` (three workflows per episode,
  10 edge servers and the cloud), episodes 20,000+;
- ``online``: the online search ``rollout:peft?horizon=end&futures=2&top_k=4`` (to the
  episode's end over 2 sampled futures of the workflows not yet arrived, scored by mean
  completion) on the split's test data of the ``congested`` preset (the patent's task order,
  the next task drawn from the env's generator), the first ``--decisions`` decisions of test
  episode 1000; ``online_rank``: the same in HEFT's task order (``task_order="rank"``);
- ``compile_s``: seconds of the first compiled decision in a fresh process with an empty
  numba cache (what a new install pays once; later processes load the cache).

Each row gives the median, 95th percentile and maximum ``act()`` time, and ``same``: whether
the two ways took the same action at every decision.

    cd benchmarks && python bench_compiled_rollouts.py --json results/bench_compiled_rollouts.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from functools import partial
from typing import Any

import numpy as np

from common import decision_times, machine, pin_one_core, write_json

SMALL = "synthetic:placement?workflows=200&tasks=15&seed=45"
SMALL_KWARGS = {"scenario": "congested", "reward": "makespan", "num_workflows": 1,
                "task_order": "rank", "lookahead": True, "finish_gap": True,
                "optimistic_cost": True, "contention": True}  # fmt: skip
KS = (2, 3, 4, 6)
#: the online search of docs/offloading.md, on the split's test data in HEFT's task order
ONLINE = "rollout:peft?horizon=end&futures=2&top_k=4"


def _play(
    env: Any, policy: Any, seeds: list[int], limit: int | None = None
) -> tuple[list[int], list[float]]:
    actions: list[int] = []
    times = decision_times(env, policy, seeds, limit=limit, actions=actions)
    return [int(a) for a in actions], times


def _stats(times: list[float]) -> dict:
    ms = np.asarray(times) * 1e3
    return {"decisions": len(ms), "median_ms": float(np.median(ms)),
            "p95_ms": float(np.percentile(ms, 95)), "max_ms": float(ms.max())}  # fmt: skip


def _both(make: Any, seeds: list[int], limit: int | None = None) -> dict:
    """One search played compiled and stepped on the same episodes (the first ``limit``
    decisions)."""
    row: dict = {}
    acts = {}
    for compiled in (True, False):
        env, pol = make(compiled)
        _play(env, pol, seeds[:1], limit=20)  # warm-up: numba's cache load, the env's caches
        acts[compiled], times = _play(env, pol, seeds, limit)
        row["compiled" if compiled else "stepped"] = _stats(times)
    row["same"] = acts[True] == acts[False]
    row["speedup"] = row["stepped"]["median_ms"] / row["compiled"]["median_ms"]
    return row


def worker(episodes: int, decisions: int) -> dict:
    import rlsched  # noqa: F401
    from rlsched.evaluate import make_env
    from rlsched.policies.registry import make_policy
    from rlsched.splits import SPLITS, TEST_SEED

    seeds = [20_000 + e for e in range(episodes)]
    out: dict = {"small": {}}
    for k in KS:
        spec = f"rollout:peft?top_k={k}&horizon=end&futures=0&score=return&reward=makespan"

        def small(compiled: bool, spec: str = spec) -> tuple[Any, Any]:
            env = make_env("rlsched/WorkflowOffloading-v0", SMALL, **SMALL_KWARGS)
            suffix = "" if compiled else "&compiled=false"
            return env, make_policy(spec + suffix, env, seed=0)

        out["small"][str(k)] = _both(small, seeds)

    def mdp(compiled: bool) -> tuple[Any, Any]:
        env = make_env("rlsched/WorkflowOffloading-v0", None, task_order="rank")
        pol = make_policy("mdp_rollout", env, seed=0)
        pol.compiled = compiled
        return env, pol

    out["mdp_rollout"] = _both(mdp, seeds[: max(1, episodes // 4)])

    def online(compiled: bool, order: str = "patent") -> tuple[Any, Any]:
        split = SPLITS["rlsched/WorkflowOffloading-v0"]
        env = make_env("rlsched/WorkflowOffloading-v0", split.test, **dict(split.env_kwargs),
                       task_order=order)  # fmt: skip
        suffix = "" if compiled else "&compiled=false"
        return env, make_policy(ONLINE + suffix, env, seed=TEST_SEED)

    out["online"] = _both(online, [TEST_SEED], limit=decisions)
    out["online_rank"] = _both(partial(online, order="rank"), [TEST_SEED], limit=decisions)
    return out


def first_decision() -> float:
    """Seconds of the first compiled decision (numba compiles the kernels)."""
    import rlsched  # noqa: F401
    from rlsched.evaluate import make_env
    from rlsched.policies.registry import make_policy

    env = make_env("rlsched/WorkflowOffloading-v0", SMALL, **SMALL_KWARGS)
    pol = make_policy("rollout:peft?top_k=4&horizon=end&futures=0&score=return", env, seed=0)
    obs, _ = env.reset(seed=20_000)
    t0 = time.perf_counter()
    pol.act(obs, env.unwrapped.action_masks())
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--episodes", type=int, default=20)
    ap.add_argument("--decisions", type=int, default=100)
    ap.add_argument("--json", default=None)
    ap.add_argument("--worker", choices=("figures", "compile"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker == "figures":
        print(json.dumps(worker(args.episodes, args.decisions)))
        return
    if args.worker == "compile":
        print(json.dumps(first_decision()))
        return
    pin_one_core()
    out: dict = {"machine": machine(), "episodes": args.episodes, "decisions": args.decisions}
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        run = [sys.executable, __file__, "--worker"]
        out["compile_s"] = json.loads(subprocess.run(
            [*run, "compile"], env=env, check=True, capture_output=True, text=True,
        ).stdout)  # fmt: skip
        out["this"] = json.loads(subprocess.run(
            [*run, "figures", "--episodes", str(args.episodes), "--decisions",
             str(args.decisions)], env=env, check=True,
            capture_output=True, text=True).stdout)  # fmt: skip
    write_json(args.json, out)
    print(json.dumps({k: v for k, v in out.items() if k != "machine"}, indent=1))


if __name__ == "__main__":
    sys.exit(main())
