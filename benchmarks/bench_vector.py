"""Training env steps per second: single env, DummyVecEnv of 8, batched vector env of 8 and 64.

ServerlessPlacement-v0 on ``wfinstances:all`` with default arguments (10 nodes, episodes of
200 instances), pinned to one core, one torch thread.

(a) Raw stepping: random valid actions drawn from the masks, resets included. The vectorised
cases go through Stable-Baselines3's ``VecEnv`` API as training does: masks from
sb3-contrib's ``get_action_masks`` (what MaskablePPO calls), then ``step``. ``DummyVecEnv(8)``
holds the trainer's envs (``gym.make`` + Monitor); ``batched`` is
:func:`rlsched.vector.make_sb3_vec_env`. The single env is the raw env object. Cases run
round-robin (``--rounds`` rounds of ``--seconds`` CPU seconds each), so machine drift hits
them alike; rates are env steps per CPU second of this process (the machine is shared, and CPU
time does not count the time other jobs hold the core), wall-clock rates are in the JSON.

(b) Training: MaskablePPO with the trainer's default settings (node network, batch 256,
10 epochs, lr 3e-4) for ``--train-steps`` env steps, rollouts of 2048 steps for every case
(``n_steps`` 256 with 8 envs, 32 with 64), so the update work per env step is the same and
only the env and the batching of policy calls differ. Rollout and update time are measured
apart (callbacks at rollout start and end); rates per CPU second as in (a).

    python benchmarks/bench_vector.py [--seconds 2] [--rounds 5] [--train-steps 16384]
                                      [--json out.json]
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import numpy as np

import rlsched  # noqa: F401
from common import machine, pin_one_core, write_json
from rlsched.train import TrainConfig

ENV_ID = "rlsched/ServerlessPlacement-v0"
DATASET = "wfinstances:all"
RAW_CASES = [("single", 1), ("dummy", 8), ("batched", 8), ("batched", 64)]
TRAIN_CASES = [("dummy", 8, 256), ("batched", 8, 256), ("batched", 64, 32)]


def _sample(rng: np.random.Generator, masks: np.ndarray) -> np.ndarray:
    """A uniformly random valid action per row."""
    return (rng.random(masks.shape) * masks).argmax(axis=1)


def make_venv(kind: str, n_envs: int, seed: int = 0) -> Any:
    from rlsched.train.envs import vec_env
    from rlsched.vector import make_sb3_vec_env

    cfg = TrainConfig(env_id=ENV_ID, dataset=DATASET, seed=seed)
    if kind == "dummy":  # what training builds: Monitor-wrapped single envs in a DummyVecEnv
        venv: Any = vec_env(cfg, DATASET, n_envs, seed, None)
    else:
        venv = make_sb3_vec_env(ENV_ID, n_envs, DATASET)
    venv.seed(seed)
    return venv


class RawCase:
    """One raw-stepping case, built once; :meth:`run` steps it for some CPU seconds."""

    def __init__(self, kind: str, n_envs: int) -> None:
        self.kind, self.n_envs = kind, n_envs
        self.rng = np.random.default_rng(0)
        if kind == "single":
            from rlsched.evaluate import make_env

            self.env = make_env(ENV_ID, DATASET).unwrapped
            self.env.reset(seed=0)
            self.episodes = 0
        else:
            self.venv = make_venv(kind, n_envs)
            self.venv.reset()

    def run(self, seconds: float) -> tuple[float, float]:
        """Env steps per CPU second and per wall second."""
        from sb3_contrib.common.maskable.utils import get_action_masks

        steps = 0
        c0, w0 = time.process_time(), time.perf_counter()
        if self.kind == "single":
            env, rng = self.env, self.rng
            while time.process_time() - c0 < seconds:
                for _ in range(50):
                    a = int(_sample(rng, env.action_masks()[None])[0])
                    _, _, term, trunc, _ = env.step(a)
                    steps += 1
                    if term or trunc:
                        self.episodes += 1
                        env.reset(seed=self.episodes)
        else:
            venv, rng = self.venv, self.rng
            while time.process_time() - c0 < seconds:
                for _ in range(10):
                    venv.step(_sample(rng, get_action_masks(venv)))
                    steps += venv.num_envs
        return steps / (time.process_time() - c0), steps / (time.perf_counter() - w0)


def raw_stepping(seconds: float, rounds: int) -> list[dict[str, Any]]:
    cases = [RawCase(k, n) for k, n in RAW_CASES]
    cpu: dict[int, list[float]] = {i: [] for i in range(len(cases))}
    wall: dict[int, list[float]] = {i: [] for i in range(len(cases))}
    for r in range(rounds):
        for i, case in enumerate(cases):
            c, w = case.run(seconds)
            cpu[i].append(c)
            wall[i].append(w)
        print(
            f"round {r + 1}/{rounds}: "
            + "  ".join(f"{c.kind}({c.n_envs}) {cpu[i][-1]:,.0f}" for i, c in enumerate(cases)),
            flush=True,
        )
    base = RAW_CASES.index(("dummy", 8))
    rows = []
    for i, case in enumerate(cases):
        ratios = [a / b for a, b in zip(cpu[i], cpu[base], strict=True)]
        rows.append(
            {
                "vec_env": case.kind,
                "n_envs": case.n_envs,
                "steps_per_cpu_s_median": statistics.median(cpu[i]),
                "steps_per_cpu_s_best": max(cpu[i]),
                "steps_per_wall_s_median": statistics.median(wall[i]),
                "ratio_to_dummy8_median": statistics.median(ratios),
                "ratio_to_dummy8_min": min(ratios),
            }
        )
    return rows


def training(steps: int) -> list[dict[str, Any]]:
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback

    from rlsched.agents import networks

    cfg = TrainConfig()

    class Timer(BaseCallback):
        def __init__(self) -> None:
            super().__init__()
            self.rollout_cpu = self.rollout_wall = 0.0
            self._c = self._w = 0.0

        def _on_rollout_start(self) -> None:
            self._c, self._w = time.process_time(), time.perf_counter()

        def _on_rollout_end(self) -> None:
            self.rollout_cpu += time.process_time() - self._c
            self.rollout_wall += time.perf_counter() - self._w

        def _on_step(self) -> bool:
            return True

    rows = []
    for kind, n_envs, n_steps in TRAIN_CASES:
        venv = make_venv(kind, n_envs, seed=0)
        model = MaskablePPO(
            networks.MaskableNodePolicy,
            venv,
            n_steps=n_steps,
            batch_size=cfg.batch_size,
            n_epochs=cfg.n_epochs,
            learning_rate=cfg.learning_rate,
            gamma=cfg.gamma,
            gae_lambda=cfg.gae_lambda,
            ent_coef=cfg.ent_coef,
            clip_range=cfg.clip_range,
            policy_kwargs=networks.node_policy_kwargs(cfg.node_hidden, list(cfg.net_arch)),
            seed=0,
            device="cpu",
            verbose=0,
        )
        timer = Timer()
        c0, w0 = time.process_time(), time.perf_counter()
        model.learn(total_timesteps=steps, callback=timer)
        cpu, wall = time.process_time() - c0, time.perf_counter() - w0
        done = int(model.num_timesteps)
        row = {
            "vec_env": kind,
            "n_envs": n_envs,
            "n_steps": n_steps,
            "steps": done,
            "wall_s": wall,
            "cpu_s": cpu,
            "steps_per_cpu_s": done / cpu,
            "steps_per_wall_s": done / wall,
            "rollout_cpu_s": timer.rollout_cpu,
            "rollout_wall_s": timer.rollout_wall,
            "rollout_steps_per_cpu_s": done / timer.rollout_cpu,
        }
        rows.append(row)
        print(
            f"train {kind}({n_envs}) n_steps={n_steps}: {row['steps_per_cpu_s']:,.0f} steps/CPU s, "
            f"{row['steps_per_wall_s']:,.0f} steps/wall s, rollouts "
            f"{row['rollout_steps_per_cpu_s']:,.0f} steps/CPU s "
            f"({timer.rollout_cpu / cpu:.0%} of the CPU time)",
            flush=True,
        )
        venv.close()
    base = next(r for r in rows if r["vec_env"] == "dummy")
    for r in rows:
        r["ratio_to_dummy8"] = r["steps_per_cpu_s"] / base["steps_per_cpu_s"]
        r["rollout_ratio_to_dummy8"] = (
            r["rollout_steps_per_cpu_s"] / base["rollout_steps_per_cpu_s"]
        )
    return rows


def main() -> dict:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--train-steps", type=int, default=16384)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    pin_one_core()
    from rlsched.runtime import set_torch_threads

    set_torch_threads(1)
    raw = raw_stepping(args.seconds, args.rounds)
    train_rows = training(args.train_steps) if args.train_steps > 0 else []
    out = {
        "machine": machine(),
        "env_id": ENV_ID,
        "dataset": DATASET,
        "seconds": args.seconds,
        "rounds": args.rounds,
        "raw": raw,
        "train": train_rows,
    }
    return write_json(args.json, out)


if __name__ == "__main__":
    main()
