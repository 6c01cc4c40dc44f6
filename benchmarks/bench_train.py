"""Training throughput: env steps per second of MaskablePPO (and PPO) on ServerlessPlacement-v0.

Measures whole ``model.learn`` calls (rollouts plus updates), one torch thread, for the node
network and SB3's flat MultiInputPolicy, with 1 and 4 envs in one process (DummyVecEnv).

    python benchmarks/bench_train.py [--steps 8192] [--json out.json]
"""

from __future__ import annotations

import argparse
import tempfile

from common import machine, write_json
from rlsched.train import TrainConfig, train

CASES = [
    ("maskable_ppo", "node", 1),
    ("maskable_ppo", "node", 4),
    ("maskable_ppo", "mlp", 4),
    ("ppo", "node", 4),
]


def main() -> dict:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=8192)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    rows = []
    for algo, net, n_envs in CASES:
        cfg = TrainConfig(
            algo=algo,
            policy_net=net,
            n_envs=n_envs,
            total_steps=args.steps,
            eval_freq=0,
            tensorboard=False,
            seed=0,
        )
        with tempfile.TemporaryDirectory() as d:
            res = train(cfg, d, progress=False)
        rows.append(
            {
                "algo": algo,
                "policy_net": net,
                "n_envs": n_envs,
                "steps": res.steps,
                "seconds": res.seconds,
                "steps_per_s": res.steps_per_second,
            }
        )
        print(
            f"{algo:13s} {net:5s} n_envs={n_envs}  {res.steps_per_second:7.0f} steps/s "
            f"({res.steps} steps in {res.seconds:.1f}s)"
        )
    out = {"machine": machine(), "rows": rows}
    return write_json(args.json, out)


if __name__ == "__main__":
    main()
