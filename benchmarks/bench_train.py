"""Training throughput: env steps per second of MaskablePPO (and PPO) on ServerlessPlacement-v0.

Measures whole ``train`` calls (env set-up, rollouts and updates; no evaluation), one
torch thread. Two tables:

- ``--table networks`` (``--network-steps``): the node network and SB3's flat
  MultiInputPolicy, 1 and 4 envs in one process (DummyVecEnv), the trainer's defaults
  otherwise.
- ``--table throughput``: the learned-wins issue's before/after. *before*: the
  trainer's defaults with DummyVecEnv(8) (rollouts of 8 x 256 steps, minibatches of 256,
  10 epochs); *after*: the settings of ``configs/serverless_placement_fast.yaml`` (the
  batched vector env with 64 envs x 32 steps, the value MLP over the pooled node embeddings);
  *faster*: ``configs/serverless_placement_faster.yaml`` (minibatches of 512, 5 epochs).
  The cases run round-robin for ``--rounds`` rounds (the machine is shared and its speed
  drifts); the ratio is the median over rounds of after / before measured in the same round.

Each throughput case runs in a fresh process; ``--before-src DIR`` runs the *before* case
with the code of another checkout (``git worktree add DIR COMMIT``), so a change to the code
shared by both settings (the network, the trainer) counts in the ratio.

    python benchmarks/bench_train.py [--table all|throughput|networks] [--steps 32768]
        [--before-src DIR] [--json F]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from common import machine, run_fresh, write_json
from rlsched.train import TrainConfig, train

NETWORKS = [
    ("maskable_ppo", "node", 1),
    ("maskable_ppo", "node", 4),
    ("maskable_ppo", "mlp", 4),
    ("ppo", "node", 4),
]

CONFIGS = Path(__file__).resolve().parents[1] / "configs"
_KEYS = ("vec_env", "n_envs", "n_steps", "batch_size", "n_epochs", "node_value")


def _settings(name: str) -> dict[str, Any]:
    cfg = TrainConfig.from_yaml(CONFIGS / name)
    return {k: getattr(cfg, k) for k in _KEYS}


THROUGHPUT: dict[str, dict[str, Any]] = {
    "before": dict(vec_env="dummy", n_envs=8, n_steps=256, batch_size=256, n_epochs=10),
    "after": _settings("serverless_placement_fast.yaml"),
    "faster": _settings("serverless_placement_faster.yaml"),
}


def _run(steps: int, **kw: Any) -> dict[str, float]:
    if "checkpoint_freq" in TrainConfig.__dataclass_fields__:  # not in older checkouts
        kw = {"checkpoint_freq": 0, **kw}
    cfg = TrainConfig(total_steps=steps, eval_freq=0, tensorboard=False, seed=0, **kw)
    with tempfile.TemporaryDirectory() as d:
        t0, c0 = time.perf_counter(), time.process_time()
        res = train(cfg, d, progress=False)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {"steps": res.steps, "wall_s": wall, "cpu_s": cpu, "steps_per_s": res.steps / wall,
            "steps_per_cpu_s": res.steps / cpu}


def networks(steps: int) -> list[dict[str, Any]]:
    rows = []
    for algo, net, n_envs in NETWORKS:
        r = _run(steps, algo=algo, policy_net=net, n_envs=n_envs)
        rows.append({"algo": algo, "policy_net": net, "n_envs": n_envs, **r,
                     "seconds": r["wall_s"]})
        print(f"{algo:13s} {net:5s} n_envs={n_envs}  {r['steps_per_s']:7.0f} steps/s")
    return rows


def _case(name: str, steps: int, src: str | None) -> dict[str, float]:
    """One throughput case in a fresh process; ``src``: import rlsched from there (the code
    before a change, e.g. a ``git worktree`` of the baseline commit) instead."""
    return run_fresh(__file__, ["--one", name, "--steps", str(steps)], src)


def throughput(steps: int, rounds: int, before_src: str | None = None) -> dict[str, Any]:
    runs: dict[str, list[dict[str, float]]] = {k: [] for k in THROUGHPUT}
    for i in range(rounds):
        for name in THROUGHPUT:
            r = _case(name, steps, before_src if name == "before" else None)
            runs[name].append(r)
            print(f"round {i + 1} {name:6s} {r['steps_per_s']:7.0f} steps/s "
                  f"({r['steps_per_cpu_s']:.0f} per CPU s)", flush=True)
    ratios = {
        k: [a["steps_per_s"] / b["steps_per_s"] for a, b in zip(v, runs["before"], strict=True)]
        for k, v in runs.items() if k != "before"
    }
    out = {
        "settings": THROUGHPUT,
        "runs": runs,
        "median_steps_per_s": {k: statistics.median(r["steps_per_s"] for r in v)
                               for k, v in runs.items()},
        "ratios": ratios["after"],
        "median_ratio": statistics.median(ratios["after"]),
        "ratios_by_setting": ratios,
        "median_ratio_by_setting": {k: statistics.median(v) for k, v in ratios.items()},
        "before_code": before_src or "this checkout",
    }
    for k, v in ratios.items():
        print(f"{k} / before: median {statistics.median(v):.2f}x over {rounds} rounds "
              f"({', '.join(f'{x:.2f}' for x in v)})")
    return out


def main() -> dict:
    ap = argparse.ArgumentParser()
    ap.add_argument("--table", choices=("all", "throughput", "networks"), default="all")
    ap.add_argument("--steps", type=int, default=32768, help="per throughput run")
    ap.add_argument("--network-steps", type=int, default=8192, help="per networks run")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json", default=None)
    ap.add_argument("--before-src", default=None, help="a checkout of the baseline commit: "
                    "the 'before' case runs its code (its settings too)")
    ap.add_argument("--one", choices=tuple(THROUGHPUT), default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:  # one case, in this process: its figures as the last line of stdout
        print(json.dumps(_run(args.steps, algo="maskable_ppo", policy_net="node",
                              **THROUGHPUT[args.one])))
        return {}
    out: dict[str, Any] = {"machine": machine()}
    if args.table in ("all", "networks"):
        out["rows"] = networks(args.network_steps)
    if args.table in ("all", "throughput"):
        out["throughput"] = {**throughput(args.steps, args.rounds, args.before_src),
                             "machine": out["machine"]}
    return write_json(args.json, out)


if __name__ == "__main__":
    main()
