"""Run a sweep's trials on Ray Tune: a local Ray by default, a cluster given an address.

The sweep expands to a fixed list of trials (:meth:`SweepConfig.trials`); the ones whose
``result.json`` is already there are skipped before anything starts, and Ray Tune runs the
others (``Tuner`` over a function trainable, one ``tune.grid_search`` value per trial,
``TuneConfig(max_concurrent_trials=K)``), one CPU and one torch thread each.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from rlsched.envs.make import make_env
from rlsched.errors import ConfigError, MissingDependencyError, RlschedError
from rlsched.optional import install_hint, require
from rlsched.policies.registry import expand_policies, make_policy
from rlsched.sweep.config import SweepConfig, Trial, _slug
from rlsched.sweep.trial import (
    RESULT,
    is_finished,
    read_result,
    run_trial,
    trial_dir,
    write_json_atomic,
)

INSTALL_HINT = install_hint("ray")
__all__ = ["INSTALL_HINT", "MissingDependencyError", "SweepOutcome", "require_ray", "run_sweep"]


def require_ray() -> None:
    """Raise :class:`MissingDependencyError` with the install command if Ray Tune is missing."""
    require("ray.tune", extra="ray", what="`rlsched sweep`")


@dataclass
class SweepOutcome:
    """What a sweep run did; every list holds trial ids."""

    results_dir: Path
    trials: list[Trial]
    skipped: list[str] = field(default_factory=list)
    ran: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0
    ray_start_seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.failed


def resolve_policies(sweep: SweepConfig) -> dict[int, list[str]]:
    """Each env entry's policy names with ``all`` expanded, every name checked against the env
    (built once per entry) so that a typo fails before any trial starts."""
    out: dict[int, list[str]] = {}
    for i, e in enumerate(sweep.envs):
        specs = sweep.env_policies(e)
        if not specs:
            out[i] = []
            continue
        where = f"{sweep.source}: envs[{i}] ({e.id})"
        try:
            env = make_env(e.id, e.eval_dataset, **e.env_kwargs)
        except (RlschedError, ValueError, TypeError, FileNotFoundError) as ex:
            raise ConfigError(f"{where}: cannot build the env: {' '.join(str(ex).split())}") from ex
        try:
            names = expand_policies(",".join(specs), env)
            for name in names:
                try:
                    make_policy(name, env, seed=0)
                except (RlschedError, ValueError) as ex:
                    raise ConfigError(f"{where}: policy {name!r}: {ex}") from ex
        finally:
            env.close()
        out[i] = names
    return out


def plan(
    sweep: SweepConfig, results_dir: str | Path
) -> tuple[list[Trial], list[Trial], list[Trial]]:
    """(every trial, the finished ones, the ones to run)."""
    trials = sweep.trials(resolve_policies(sweep))
    done = [t for t in trials if is_finished(results_dir, t)]
    ids = {t.id for t in done}
    return trials, done, [t for t in trials if t.id not in ids]


def _trainable(config: dict[str, Any]) -> dict[str, Any]:
    """The Ray Tune function trainable: one trial (see :func:`run_trial`), run from the
    driver's working directory (Tune starts trainables in a folder of its own) so that
    relative paths in the config (``learned:PATH``, ``file:PATH``) mean what they meant there."""
    cwd = config.get("cwd")
    if cwd and os.path.isdir(cwd):
        os.chdir(cwd)
    res = run_trial(config["trial"], config["results_dir"])
    out: dict[str, Any] = {
        "mean_reward": res["mean_reward"],
        "skipped": int(res["skipped"]),
        # the whole result, for a driver that does not share the workers' filesystem
        "result_json": json.dumps({k: v for k, v in res.items() if k != "skipped"}),
    }
    out.update({f"metric_{k}": v for k, v in res["metrics"].items()})
    return out


def _init_ray(address: str | None, num_cpus: int | None) -> bool:
    """Start (no address) or join (``auto``, ``ray://host:port``, ``host:port``) Ray, quietly.
    Returns whether this call did it (and so should shut it down)."""
    import ray

    if ray.is_initialized():
        return False
    if address:
        try:
            if address.startswith("ray://"):
                ray.init(address=address)  # Ray Client: other arguments go to the server
            else:
                ray.init(address=address, log_to_driver=False, logging_level=logging.ERROR)
        except Exception as e:  # ConnectionError, ValueError, gRPC errors...
            raise ConfigError(
                f"--address {address}: cannot connect to Ray: {' '.join(str(e).split())}"
            ) from e
    else:
        ray.init(
            num_cpus=num_cpus or os.cpu_count() or 1,
            include_dashboard=False,
            log_to_driver=False,
            logging_level=logging.ERROR,
        )
    return True


def write_plan(sweep: SweepConfig, results_dir: Path, trials: list[Trial]) -> None:
    """``sweep.yaml`` (the config as given) and ``trials.json`` (every trial and its id)."""
    results_dir.mkdir(parents=True, exist_ok=True)
    (results_dir / "sweep.yaml").write_text(yaml.safe_dump(sweep.to_dict(), sort_keys=False))
    (results_dir / "trials.json").write_text(json.dumps([t.to_dict() for t in trials], indent=2))


def run_sweep(
    sweep: SweepConfig,
    results_dir: str | Path,
    address: str | None = None,
    max_concurrent: int | None = None,
    echo: Callable[[str], None] | None = None,
    reuse_actors: bool = True,
) -> SweepOutcome:
    """Run every unfinished trial of ``sweep`` into ``results_dir`` on Ray Tune.

    ``address``: None starts a local Ray with ``max_concurrent`` (default: every core) CPUs;
    ``auto`` or ``ray://HOST:PORT`` joins a cluster (``results_dir`` should then be on a
    filesystem every node sees; otherwise only ``result.json`` files come back to it). A Ray
    already initialised in this process is used as it is. ``reuse_actors``: a worker process
    runs one trial after another (saves importing torch and friends per trial; every trial
    seeds everything itself, so results do not depend on it).
    """
    require_ray()
    os.environ.setdefault("RAY_AIR_NEW_OUTPUT", "0")  # verbose=0 then prints nothing
    os.environ.setdefault("TUNE_DISABLE_AUTO_CALLBACK_LOGGERS", "1")  # our own files suffice
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    import ray
    from ray import tune

    say = echo or (lambda _m: None)
    if max_concurrent is not None and max_concurrent < 1:
        raise ConfigError("--max-concurrent must be >= 1")
    results_dir = Path(results_dir).resolve()
    t0 = time.perf_counter()
    trials, done, pending = plan(sweep, results_dir)
    write_plan(sweep, results_dir, trials)
    out = SweepOutcome(results_dir, trials, skipped=[t.id for t in done])
    where = address or f"a local Ray ({max_concurrent or os.cpu_count()} CPUs)"
    say(
        f"sweep {sweep.name}: {len(trials)} trials, {len(done)} finished, {len(pending)} to run "
        f"on {where}, {max_concurrent or 'as many as fit'} at a time -> {results_dir}"
    )
    if not pending:
        out.seconds = time.perf_counter() - t0
        return out

    t_ray = time.perf_counter()
    started = _init_ray(address, max_concurrent)
    out.ray_start_seconds = time.perf_counter() - t_ray
    try:
        tuner = tune.Tuner(
            tune.with_resources(_trainable, {"cpu": 1}),
            param_space={
                "trial": tune.grid_search([t.to_dict() for t in pending]),
                "results_dir": str(results_dir),
                "cwd": os.getcwd(),
            },
            tune_config=tune.TuneConfig(
                num_samples=1,
                max_concurrent_trials=max_concurrent,
                reuse_actors=reuse_actors,
                trial_name_creator=lambda tr: tr.config["trial"]["id"],
                trial_dirname_creator=lambda tr: tr.config["trial"]["id"],
            ),
            run_config=tune.RunConfig(
                name=f"{_slug(sweep.name)}-{time.strftime('%Y%m%d-%H%M%S')}",
                storage_path=str(results_dir / "_tune"),
                verbose=0,
                callbacks=[_progress(say, len(pending))],
                failure_config=tune.FailureConfig(max_failures=0),
            ),
        )
        grid = tuner.fit()
        errors: dict[str, str] = {}
        for r in (grid[i] for i in range(len(grid))):  # a ResultGrid: indexed, sized
            tid = (r.config or {}).get("trial", {}).get("id")
            if tid is None:
                continue
            if r.error is not None:
                errors[tid] = _first_line(r.error)
            elif r.metrics and "result_json" in r.metrics:
                _mirror_result(results_dir, tid, r.metrics["result_json"])
    finally:
        if started:
            ray.shutdown()
    for t in pending:
        if is_finished(results_dir, t):
            out.ran.append(t.id)
        else:
            out.failed[t.id] = _error_of(results_dir, t.id) or errors.get(t.id) or "failed"
    out.seconds = time.perf_counter() - t0
    return out


def _progress(say: Callable[[str], None], total: int) -> Any:
    """A Tune callback printing one line per finished trial (in the driver)."""
    from ray import tune

    class Progress(tune.Callback):
        # no closure over say (cloudpickle pickles this class by value), say not pickled either
        def __init__(self, say: Callable[[str], None] | None, total: int) -> None:
            self.say, self.total, self.done = say, total, 0

        def __getstate__(self) -> dict[str, Any]:  # the Tuner pickles its callbacks
            return {"say": None, "total": self.total, "done": self.done}

        def _line(self, trial: Any, tail: str) -> None:
            self.done += 1
            if self.say is not None:
                self.say(f"  [{self.done}/{self.total}] {trial.config['trial']['id']}: {tail}")

        def on_trial_complete(self, iteration: int, trials: list, trial: Any, **info: Any) -> None:
            reward = (trial.last_result or {}).get("mean_reward")
            self._line(trial, f"reward {reward:.4g}" if isinstance(reward, int | float) else "done")

        def on_trial_error(self, iteration: int, trials: list, trial: Any, **info: Any) -> None:
            self._line(trial, "FAILED")

    return Progress(say, total)


def _mirror_result(results_dir: Path, trial_id: str, result_json: str) -> None:
    """Write a worker's result here when the worker wrote it elsewhere (no shared filesystem)."""
    folder = trial_dir(results_dir, trial_id)
    if read_result(folder) is not None:
        return
    folder.mkdir(parents=True, exist_ok=True)

    write_json_atomic(folder / RESULT, json.loads(result_json))


def _first_line(err: BaseException) -> str:
    """The root cause of a trial error, on one line."""
    cause: BaseException = err
    while getattr(cause, "cause", None) is not None or cause.__cause__ is not None:
        nxt = getattr(cause, "cause", None) or cause.__cause__
        if nxt is None or nxt is cause:
            break
        cause = nxt
    text = " ".join(str(cause).split())
    return text[-300:] if text else type(cause).__name__


def _error_of(results_dir: Path, trial_id: str) -> str | None:
    """Last line of a trial's ``error.txt`` (its exception), if there is one."""
    f = trial_dir(results_dir, trial_id) / "error.txt"
    try:
        lines = [ln for ln in f.read_text().splitlines() if ln.strip()]
    except OSError:
        return None
    return lines[-1].strip() if lines else None
