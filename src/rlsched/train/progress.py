"""Training progress: the env steps a run will really take, a progress bar that counts them
(step count, steps/s, ETA), and a small ``progress.json`` a parent process can poll."""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any

from stable_baselines3.common.callbacks import BaseCallback

from rlsched.train.config import TrainConfig

#: on-policy algorithms collect whole rollouts of ``n_steps * n_envs`` env steps
ON_POLICY = ("ppo", "maskable_ppo")


def planned_steps(cfg: TrainConfig) -> int:
    """Env steps ``cfg`` will run: ``total_steps`` rounded up to whole rollouts (PPO) or to
    whole vector-env steps (DQN), as SB3 finishes the rollout it started."""
    per = cfg.n_steps * cfg.n_envs if cfg.algo in ON_POLICY else cfg.n_envs
    return math.ceil(cfg.total_steps / per) * per


def plan_text(cfg: TrainConfig) -> str:
    """``3,072 steps (3,000 rounded up to whole rollouts)``."""
    if cfg.algo == "departures" and cfg.departure_members:
        return (f"{len(cfg.departure_members)} departure models joined, nothing collected or "
                "fitted, no RL steps (departures)")  # fmt: skip
    if cfg.algo == "departures":
        return (f"{cfg.imitation_episodes:,} teacher-labelled episodes of {cfg.imitation_policy}, "
                "no RL steps (departures)")  # fmt: skip
    if cfg.total_steps == 0:
        return f"0 RL steps (imitation of {cfg.imitation_policy} alone)"
    n = planned_steps(cfg)
    extra = f" ({cfg.total_steps:,} rounded up to whole rollouts)" if n > cfg.total_steps else ""
    return f"{n:,} steps{extra}"


def held_out_text(cfg: TrainConfig, best: float | None, steps: int) -> str:
    """What the periodic evaluation found, or why there is none."""
    if best is not None:
        return f"best held-out reward {best:.4g}"
    if cfg.eval_freq == 0:
        return "no held-out evaluation (eval_freq 0)"
    return f"no held-out evaluation ran (eval_freq {cfg.eval_freq:,} > {steps:,} steps)"


def read_progress(run: str | Path) -> dict[str, float] | None:
    """``{"steps", "total", "seconds"}`` of a run in progress (None before its first write)."""
    try:
        return json.loads((Path(run) / "progress.json").read_text())
    except (OSError, ValueError):
        return None


def eta_text(steps: float, total: float, seconds: float) -> str:
    """``12,288/24,576 steps (50%), 410 steps/s, ETA 0:30`` (ETA as m:ss or h:mm:ss)."""
    rate = steps / seconds if seconds > 0 else 0.0
    eta = "?"
    if rate > 0:
        m, s = divmod(round((total - steps) / rate), 60)
        h, m = divmod(m, 60)
        eta = f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"
    pct = 100.0 * steps / total if total else 0.0
    return f"{steps:,.0f}/{total:,.0f} steps ({pct:.0f}%), {rate:,.0f} steps/s, ETA {eta}"


class TrainProgress(BaseCallback):
    """A rich progress bar over :func:`planned_steps` (``show``) and ``RUN/progress.json``
    every ``write_every`` seconds (``run``); the bar's total grows if SB3 runs past it."""

    def __init__(
        self, total: int, show: bool, run: Path | None = None, write_every: float = 2.0
    ) -> None:
        super().__init__()
        self.total, self.show, self.run, self.write_every = total, show, run, write_every
        self._bar: Any = None
        self._task: Any = None
        self._t0 = self._last_write = self._last_draw = 0.0

    def _on_training_start(self) -> None:
        if self._bar is not None or self._t0:  # a later phase of the same run (learn again)
            return
        self._t0 = time.perf_counter()
        if self.show:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self._bar = Progress(
                TextColumn("training"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("steps"),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
            )
            self._bar.start()
            self._task = self._bar.add_task("training", total=self.total)
        self._write(0)

    def _on_step(self) -> bool:
        now = time.perf_counter()
        n = self.num_timesteps
        if n > self.total:
            self.total = n
        if self._bar is not None and now - self._last_draw > 0.2:
            self._last_draw = now
            self._bar.update(self._task, completed=n, total=self.total)
        if self.run is not None and now - self._last_write > self.write_every:
            self._write(n)
        return True

    def _on_training_end(self) -> None:
        n = self.num_timesteps
        self.total = max(self.total, n)
        if self._bar is not None:
            self._bar.update(self._task, completed=n, total=self.total)
        self._write(n)

    def close(self) -> None:
        """Stop the bar (after the run's last phase)."""
        if self._bar is not None:
            self._bar.stop()
            self._bar = None

    def _write(self, n: int) -> None:
        self._last_write = time.perf_counter()
        if self.run is None:
            return
        rec = {"steps": n, "total": self.total, "seconds": self._last_write - self._t0}
        tmp = self.run / "progress.json.tmp"
        tmp.write_text(json.dumps(rec))
        tmp.replace(self.run / "progress.json")  # atomic: a reader never sees half a file
