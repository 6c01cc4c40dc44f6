"""Full-length trace runs of one autoscaling policy (``rlsched simulate``).

:func:`simulate` replays a trace (whole, or its first ``duration`` seconds) through
``rlsched/LLMAutoscaling-v0`` with one policy deciding every ``decision_interval`` s: a baseline
of :mod:`rlsched.policies.llm` (``static_peak``, ``hpa``, ``threshold``, ``hpa_threshold``,
``random``), ``none``
(the start state as given, never scaled) or ``learned:PATH`` (a model trained with ``rlsched
train``; its observation and action spaces must match). At the end the simulator runs on
until every request has completed, then the result holds the simulator's metrics and the
run's configuration (:func:`result_json`);
:func:`rlsched.report.llm_figures.autoscaling_figure` draws
its timeline.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlsched.core.llm.scaling import StartState
from rlsched.envs.llm_autoscaling import LLMAutoscalingEnv
from rlsched.errors import ConfigError, PolicyError, RlschedError
from rlsched.policies.llm import POLICY_FACTORIES
from rlsched.policies.registry import make_policy
from rlsched.report.llm_figures import autoscaling_figure
from rlsched.suggest import did_you_mean

#: Keys of the result besides the metrics.
METRIC_KEYS = (
    "requests",
    "dropped",
    "ttft_p50",
    "ttft_p90",
    "ttft_p99",
    "tbt_p50",
    "tbt_p90",
    "tbt_p99",
    "e2e_p50",
    "e2e_p90",
    "e2e_p99",
    "slo_attainment",
    "cost",
    "gpu_hours",
    "energy_kwh",
    "scale_up_actions",
    "scale_down_actions",
)


@dataclass
class SimulationRun:
    """One run: the env (its simulator and per-decision history) and the result."""

    env: Any
    result: dict[str, Any] = field(default_factory=dict)

    @property
    def sim(self) -> Any:
        return self.env.sim

    def write_json(self, path: str | Path) -> Path:
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(json.dumps(self.result, indent=2, default=_jsonable))
        return p

    def write_requests_csv(self, path: str | Path) -> Path:
        """One row per request (trace order) with the columns of ``sim.request_table()``;
        times in seconds, empty where a request never got that far."""
        import csv

        table = self.sim.request_table()
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        with p.open("w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["request", *table])
            for i in range(len(table["arrival"])):
                w.writerow([i, *(_cell(col[i]) for col in table.values())])
        return p

    def figure(self, path: str | Path, title: str | None = None) -> Path:
        cfg = self.result["config"]
        title = title or (
            f"{cfg['trace']} x{cfg['rate_scale']:g}, policy {cfg['policy']}: "
            f"SLO attainment {self.result['slo_attainment']:.3f}, cost ${self.result['cost']:.1f}"
        )
        return autoscaling_figure(
            self.env.history, self.sim.request_table(), self.sim.slo, path, title=title
        )


def _cell(v: Any) -> Any:
    """A CSV cell: numpy scalars as Python numbers (full precision), NaN as empty."""
    v = v.item() if hasattr(v, "item") else v
    return "" if isinstance(v, float) and v != v else v


def _jsonable(x: Any) -> Any:
    if hasattr(x, "item"):
        return x.item()
    return str(x)


def _start_state_name(given: Any, ss: StartState) -> str:
    if given is None:
        return "default"
    if isinstance(given, str | Path):
        return str(given)
    return ss.name or "given"


def start_state_for(
    start_state: str | Path | Mapping[str, Any] | StartState | None,
    prompt: int | None = None,
    token: int | None = None,
) -> StartState:
    """The start state (default: the shipped one) with the pool sizes overridden."""
    ss = StartState.coerce(start_state)
    if prompt is not None:
        ss = ss.with_pool("prompt", num_instances=int(prompt))
    if token is not None:
        ss = ss.with_pool("token", num_instances=int(token))
    return ss


def make_runner_policy(spec: str, env: Any, seed: int = 0) -> Any:
    """A baseline name, ``none`` or ``learned:PATH`` -> a policy for ``env``."""
    if not spec.startswith("learned:") and spec not in POLICY_FACTORIES:
        raise PolicyError(
            f"unknown policy {spec!r}{did_you_mean(spec, POLICY_FACTORIES)}; "
            f"known: {', '.join(POLICY_FACTORIES)} or learned:PATH"
        )
    return make_policy(spec, env, seed=seed)


def simulate(
    trace: str = "azure-llm:conv",
    policy: str = "none",
    rate_scale: float = 1.0,
    duration: float | None = None,
    prompt: int | None = None,
    token: int | None = None,
    start_state: str | Path | Mapping[str, Any] | StartState | None = None,
    decision_interval: float = 2.0,
    seed: int = 0,
    env_kwargs: Mapping[str, Any] | None = None,
    progress: bool = False,
    console: Any = None,
    compat: str | None = None,
) -> SimulationRun:
    """Run ``policy`` over ``trace`` (see the module docstring); ``progress`` shows a rich
    progress bar (on ``console``); ``compat="splitwise-sim"`` reproduces splitwise-sim's
    performance-model readings and TBT (:mod:`rlsched.core.llm.simulator`)."""
    ss = start_state_for(start_state, prompt, token)
    try:
        env = LLMAutoscalingEnv(
            dataset=trace,
            rate_scale=rate_scale,
            episode_duration=duration,
            episode_start=0.0,
            decision_interval=decision_interval,
            start_state=ss,
            **{"compat": compat, **dict(env_kwargs or {})},
        )
    except ValueError as e:  # the env's argument checks (ConfigError and DatasetError pass)
        if isinstance(e, RlschedError):
            raise
        raise ConfigError(" ".join(str(e).split())) from None
    t0 = time.perf_counter()
    pol = make_runner_policy(policy, env, seed)
    obs, info = env.reset(seed=seed)
    pol.reset(seed)
    total = env.steps_total
    done = False
    info = {}

    def loop(advance: Any = None) -> None:
        nonlocal obs, done, info
        while not done:
            action = pol.act(obs, env.action_masks())
            obs, _, terminated, truncated, info = env.step(action)
            done = terminated or truncated
            if advance is not None:
                advance(env.sim.now)

    if progress:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        with Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[clock]}"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=console,
            transient=True,
        ) as bar:
            task = bar.add_task(f"{policy} on {trace}", total=total, clock="t=0s")
            loop(lambda now: bar.update(task, advance=1, clock=f"t={now:.0f}s"))
    else:
        loop()
    wall = time.perf_counter() - t0
    metrics = info.get("metrics") or env.metrics()
    res = env.sim.results()
    result: dict[str, Any] = {
        "config": {
            "trace": trace,
            "policy": policy,
            "rate_scale": float(rate_scale),
            "duration": duration,
            "decision_interval": float(decision_interval),
            "seed": int(seed),
            "start_state": _start_state_name(start_state, ss),
            "pools": {t: p.num_instances for t, p in ss.pools.items()},
            "env_kwargs": dict(env_kwargs or {}),
            "compat": env.sim_kwargs["compat"],
        },
        **{k: metrics[k] for k in METRIC_KEYS},
        **{k: v for k, v in metrics.items() if k not in METRIC_KEYS},
        "total_requests": int(res["total_requests"]),
        "slo_met": bool(res["slo_met"]),
        "slo_checks": res["slo_checks"],
        "decisions": env.step_count,
        "wall_time_s": wall,
    }
    for k in ("requests", "dropped", "scale_up_actions", "scale_down_actions"):
        result[k] = int(result[k])
    return SimulationRun(env, result)
