"""Training throughput on LLMAutoscaling-v0: env steps per second of a whole ``train`` call
(env set-up, rollouts and PPO updates; no evaluation, no checkpoints), one torch thread, the
settings of ``configs/llm_autoscaling_long.yaml`` (4 envs, loads and request mixes drawn per
episode). The request-level simulator is the bottleneck, so two things are measured:

- *before* / *after* the accounting change (``--before-src DIR``: the *before* case imports
  rlsched from another checkout, e.g. ``git worktree add DIR COMMIT``), both with
  ``vec_env: dummy`` (4 envs in one process);
- ``vec_env: subproc`` (the 4 envs in their own processes) with this checkout's code.

Each case runs in a fresh process; the cases run round-robin for ``--rounds`` rounds and each
ratio is the median over rounds of the two cases measured in the same round.

    python benchmarks/bench_llm_train.py [--steps 8192] [--rounds 2] [--before-src DIR]
        [--json F]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from common import machine, run_fresh, write_json

CONFIG = Path(__file__).resolve().parents[1] / "configs" / "llm_autoscaling_long.yaml"
CASES = {"before": "dummy", "after": "dummy", "subproc": "subproc"}


def _one(vec_env: str, steps: int) -> dict[str, float]:
    import yaml

    from rlsched.train import TrainConfig, train

    raw = yaml.safe_load(CONFIG.read_text())  # the before code may not know vec_env 'subproc'
    raw.update(vec_env=vec_env, total_steps=steps, eval_freq=0, checkpoint_freq=0)
    cfg = TrainConfig.from_dict(raw)
    with tempfile.TemporaryDirectory() as d:
        t0 = time.perf_counter()
        res = train(cfg, d, progress=False)
        wall = time.perf_counter() - t0
    # steps_per_s: the whole call; loop_steps_per_s: the trainer's own clock (rollouts and
    # updates, without building the envs: subproc's workers start and import apart)
    return {"steps": res.steps, "wall_s": wall, "steps_per_s": res.steps / wall,
            "loop_steps_per_s": res.steps_per_second}


def _case(name: str, steps: int, src: str | None) -> dict[str, float]:
    return run_fresh(__file__, ["--one", CASES[name], "--steps", str(steps)], src)


def main() -> dict:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=8192)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--before-src", default=None)
    ap.add_argument("--json", default=None)
    ap.add_argument("--one", choices=("dummy", "subproc"), default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(_one(args.one, args.steps)))
        return {}
    cases = CASES if args.before_src else {k: v for k, v in CASES.items() if k != "before"}
    runs: dict[str, list[dict[str, float]]] = {k: [] for k in cases}
    for i in range(args.rounds):
        for name in cases:
            r = _case(name, args.steps, args.before_src if name == "before" else None)
            runs[name].append(r)
            print(f"round {i + 1} {name:8s} {r['steps_per_s']:6.0f} steps/s (training loop "
                  f"{r['loop_steps_per_s']:.0f})", flush=True)
    base = "before" if args.before_src else "after"
    ratios = {k: statistics.median(a["steps_per_s"] / b["steps_per_s"]
                                   for a, b in zip(v, runs[base], strict=True))
              for k, v in runs.items() if k != base}
    for k, v in ratios.items():
        print(f"{k} / {base}: median {v:.2f}x over {args.rounds} rounds")
    out = {"machine": machine(), "config": str(CONFIG.name), "steps": args.steps, "runs": runs,
           "median_steps_per_s": {k: statistics.median(r["steps_per_s"] for r in v)
                                  for k, v in runs.items()},
           "median_loop_steps_per_s": {k: statistics.median(r["loop_steps_per_s"] for r in v)
                                       for k, v in runs.items()},
           "median_ratio_vs_" + base: ratios, "before_code": args.before_src}
    return write_json(args.json, out)


if __name__ == "__main__":
    main()
