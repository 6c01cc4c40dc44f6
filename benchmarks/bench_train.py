"""Training throughput: env steps per second of MaskablePPO (and PPO) on ServerlessPlacement-v0.

Measures whole ``train`` calls (env set-up, rollouts and updates; no evaluation), one
torch thread. Two tables:

- ``--table networks`` (``--network-steps``): the node network and SB3's flat
  MultiInputPolicy, 1 and 4 envs in one process (DummyVecEnv), the trainer's defaults
  otherwise.
- ``--table throughput``: the learned-wins issue's before/after. *before*: the
  trainer's defaults with DummyVecEnv(8) (rollouts of 8 x 256 steps, minibatches of 256,
  10 epochs); *after*: the settings of ``configs/serverless_placement_fast.yaml`` (the
  batched vector env with 64 envs x 32 steps, the value MLP over the pooled node embeddings).
  The cases run round-robin for ``--rounds`` rounds (the machine is shared and its speed
  drifts); the ratio is the median over rounds of after / before measured in the same round.

    python benchmarks/bench_train.py [--table all|throughput|networks] [--steps 32768] [--json F]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from common import machine, write_json
from rlsched.train import TrainConfig, train

NETWORKS = [
    ("maskable_ppo", "node", 1),
    ("maskable_ppo", "node", 4),
    ("maskable_ppo", "mlp", 4),
    ("ppo", "node", 4),
]

FAST = Path(__file__).resolve().parents[1] / "configs" / "serverless_placement_fast.yaml"
_fast = TrainConfig.from_yaml(FAST)
THROUGHPUT: dict[str, dict[str, Any]] = {
    "before": dict(vec_env="dummy", n_envs=8, n_steps=256, batch_size=256, n_epochs=10),
    "after": {k: getattr(_fast, k)
              for k in ("vec_env", "n_envs", "n_steps", "batch_size", "n_epochs", "node_value")},
}


def _run(steps: int, **kw: Any) -> dict[str, float]:
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


def throughput(steps: int, rounds: int) -> dict[str, Any]:
    runs: dict[str, list[dict[str, float]]] = {k: [] for k in THROUGHPUT}
    for i in range(rounds):
        for name, kw in THROUGHPUT.items():
            r = _run(steps, algo="maskable_ppo", policy_net="node", **kw)
            runs[name].append(r)
            print(f"round {i + 1} {name:6s} {r['steps_per_s']:7.0f} steps/s "
                  f"({r['steps_per_cpu_s']:.0f} per CPU s)", flush=True)
    pairs = zip(runs["after"], runs["before"], strict=True)
    ratios = [a["steps_per_s"] / b["steps_per_s"] for a, b in pairs]
    out = {
        "settings": THROUGHPUT,
        "runs": runs,
        "median_steps_per_s": {k: statistics.median(r["steps_per_s"] for r in v)
                               for k, v in runs.items()},
        "ratios": ratios,
        "median_ratio": statistics.median(ratios),
    }
    print(f"after / before: median {out['median_ratio']:.2f}x over {rounds} rounds "
          f"({', '.join(f'{x:.2f}' for x in ratios)})")
    return out


def main() -> dict:
    ap = argparse.ArgumentParser()
    ap.add_argument("--table", choices=("all", "throughput", "networks"), default="all")
    ap.add_argument("--steps", type=int, default=32768, help="per throughput run")
    ap.add_argument("--network-steps", type=int, default=8192, help="per networks run")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    out: dict[str, Any] = {"machine": machine()}
    if args.table in ("all", "networks"):
        out["rows"] = networks(args.network_steps)
    if args.table in ("all", "throughput"):
        out["throughput"] = {**throughput(args.steps, args.rounds), "machine": out["machine"]}
    return write_json(args.json, out)


if __name__ == "__main__":
    main()
