"""Decision latency of the search teacher (WorkflowOffloading, ServerlessPlacement) and of the
env snapshot it takes, for this checkout and (``--baseline REV``) an earlier commit, on one
core.

Four figures per checkout, each in a fresh process:

- ``small``: ``rollout:peft?top_k=K&horizon=end&futures=0&score=return&reward=makespan`` on
  the small DAGs of docs/offloading.md (one 15-task workflow, 5 edge servers and the cloud;
  ``synthetic:placement?workflows=200&tasks=15&seed=45``, episodes 20,000+): median and 95th
  percentile ``act()`` time over ``--episodes`` episodes, for each ``K``;
- ``online``: ``rollout`` over HEFT with the env's rollout options (horizon 32, 4 sampled
  futures, 8 candidates) on the split's test data of the default ``congested`` preset, the
  first ``--decisions`` decisions of test episode 1000 (``bench_rollout.py``'s latency);
- ``snapshot``: ``snapshot()`` and ``restore()`` of the small env seven decisions into an
  episode, the mean of 2,000 each;
- ``serverless``: ``rollout`` over k8s_balanced with ServerlessPlacement's rollout options on
  its split's test data, the first ``--decisions / 2`` decisions of test episode 1000.

    cd benchmarks && python bench_search_latency.py --baseline REV \
        --json results/bench_search_latency.json
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from common import decision_times, machine, pin_one_core, run_fresh, write_json

SMALL = "synthetic:placement?workflows=200&tasks=15&seed=45"
SMALL_KWARGS = {"scenario": "congested", "reward": "makespan", "num_workflows": 1,
                "task_order": "rank", "lookahead": True, "finish_gap": True,
                "optimistic_cost": True, "contention": True}  # fmt: skip
KS = (2, 3, 4, 6)
ROOT = Path(__file__).resolve().parents[1]


def _ms(times: list[float]) -> dict:
    ms = np.asarray(times) * 1e3
    return {"decisions": len(ms), "median_ms": float(np.median(ms)),
            "p95_ms": float(np.percentile(ms, 95))}  # fmt: skip


def worker(episodes: int, decisions: int) -> dict:
    """The figures of the rlsched this process imports."""
    import rlsched  # noqa: F401
    from rlsched.evaluate import make_env
    from rlsched.policies.registry import make_policy
    from rlsched.splits import SPLITS, TEST_SEED

    out: dict = {"small": {}}
    env = make_env("rlsched/WorkflowOffloading-v0", SMALL, **SMALL_KWARGS)
    seeds = [20_000 + e for e in range(episodes)]
    for k in KS:
        spec = f"rollout:peft?top_k={k}&horizon=end&futures=0&score=return&reward=makespan"
        out["small"][str(k)] = _ms(decision_times(env, make_policy(spec, env, seed=0), seeds))
    u = env.unwrapped
    obs, _ = env.reset(seed=3)
    peft = make_policy("peft", env)
    for _ in range(7):
        obs, *_ = env.step(peft.act(obs, u.action_masks()))
    snap = u.snapshot()
    t0 = time.perf_counter()
    for _ in range(2000):
        u.snapshot()
    t1 = time.perf_counter()
    for _ in range(2000):
        u.restore(snap)
    t2 = time.perf_counter()
    out["snapshot"] = {"snapshot_us": (t1 - t0) / 2000 * 1e6, "restore_us": (t2 - t1) / 2000 * 1e6}
    split = SPLITS["rlsched/WorkflowOffloading-v0"]
    online = make_env("rlsched/WorkflowOffloading-v0", split.test, **dict(split.env_kwargs))
    pol = make_policy("rollout:heft", online, seed=TEST_SEED)
    out["online"] = _ms(decision_times(online, pol, [TEST_SEED], limit=decisions))
    split = SPLITS["rlsched/ServerlessPlacement-v0"]
    sp = make_env("rlsched/ServerlessPlacement-v0", split.test, **dict(split.env_kwargs))
    pol = make_policy("rollout:k8s_balanced", sp, seed=TEST_SEED)
    out["serverless"] = _ms(decision_times(sp, pol, [TEST_SEED], limit=decisions // 2))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--episodes", type=int, default=20)
    ap.add_argument("--decisions", type=int, default=100)
    ap.add_argument("--baseline", default=None, help="a git revision to measure beside")
    ap.add_argument("--json", default=None)
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(worker(args.episodes, args.decisions)))
        return
    pin_one_core()
    wargs = ["--worker", "--episodes", str(args.episodes), "--decisions", str(args.decisions)]
    out: dict = {"machine": machine(), "episodes": args.episodes, "decisions": args.decisions}
    out["this"] = run_fresh(__file__, wargs)
    if args.baseline:
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", tmp,
                            args.baseline], check=True, capture_output=True)  # fmt: skip
            try:
                out["baseline"] = {"rev": args.baseline, **run_fresh(__file__, wargs, src=tmp)}
            finally:
                subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", tmp],
                               check=True, capture_output=True)  # fmt: skip
        b, t = out["baseline"], out["this"]
        out["speedup"] = {
            "small": {k: b["small"][k]["median_ms"] / t["small"][k]["median_ms"]
                      for k in t["small"]},
            "online": b["online"]["median_ms"] / t["online"]["median_ms"],
            "serverless": b["serverless"]["median_ms"] / t["serverless"]["median_ms"],
            "snapshot_restore": (b["snapshot"]["snapshot_us"] + b["snapshot"]["restore_us"])
            / (t["snapshot"]["snapshot_us"] + t["snapshot"]["restore_us"]),
        }  # fmt: skip
    write_json(args.json, out)
    print(json.dumps({k: v for k, v in out.items() if k != "machine"}, indent=1))


if __name__ == "__main__":
    sys.exit(main())
