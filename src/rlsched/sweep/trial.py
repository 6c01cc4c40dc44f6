"""One sweep trial: train (learned policies) with :func:`rlsched.train.train`, evaluate with
:func:`rlsched.evaluate.compare`, and record everything in the trial's folder.

Trial folder (``RESULTS/trials/<id>/``)::

    trial.json      the trial config, seed, package versions, git commit, host, start time
    attempts.jsonl  one line per execution (a trial that was interrupted and rerun has two)
    train/          the `rlsched train` run folder (learned policies only)
    compare.json    the `rlsched compare --json` report of this trial's policy
    result.json     written last, atomically: the metrics; a trial is finished iff it is valid
    error.txt       the traceback, if the trial failed

Nothing here needs Ray: the Tune trainable calls :func:`run_trial`, and so can a test or a user
re-running one trial by hand.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import time
import traceback
from pathlib import Path
from typing import Any

from rlsched.evaluate import compare, write_json
from rlsched.runtime import git_commit, set_torch_threads, versions
from rlsched.sweep.config import Trial, train_config
from rlsched.train import train

RESULT = "result.json"
RESULT_FORMAT = "rlsched-trial-result/1"


def trial_dir(results_dir: str | Path, trial_id: str) -> Path:
    return Path(results_dir) / "trials" / trial_id


def _trial(t: Trial | dict[str, Any]) -> Trial:
    return t if isinstance(t, Trial) else Trial.from_dict(t)


def read_result(folder: str | Path, trial: Trial | dict[str, Any] | None = None) -> dict | None:
    """The finished result in ``folder``, or None (missing, unreadable, not finished, or written
    for another config than ``trial``'s)."""
    try:
        data = json.loads((Path(folder) / RESULT).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != RESULT_FORMAT:
        return None
    if data.get("status") != "finished":
        return None
    if trial is not None:
        t = _trial(trial)
        if data.get("trial_id") != t.id or data.get("config") != t.config:
            return None
    return data


def is_finished(results_dir: str | Path, trial: Trial | dict[str, Any]) -> bool:
    t = _trial(trial)
    return read_result(trial_dir(results_dir, t.id), t) is not None


def write_json_atomic(path: Path, data: Any) -> None:
    """Write ``path`` so that a reader sees the old file or the whole new one, never a part."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=2))
    os.replace(tmp, path)


def episode_seed(config: dict[str, Any]) -> int:
    """First test-episode seed of a trial: seed ``s`` evaluates episodes
    ``test_seed + s * episodes + k`` (k < episodes). Every policy with the same seed meets the
    same episodes; different seeds meet disjoint ones."""
    return int(config["test_seed"]) + int(config["seed"]) * int(config["episodes"])


def _clear_partial(folder: Path) -> None:
    """Remove what an interrupted attempt left (keep the attempts log)."""
    for child in folder.iterdir():
        if child.name == "attempts.jsonl":
            continue
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        else:
            child.unlink()


def run_trial(
    trial: Trial | dict[str, Any], results_dir: str | Path, force: bool = False
) -> dict[str, Any]:
    """Run ``trial`` into ``results_dir/trials/<id>/`` and return its result.

    A finished trial (valid ``result.json`` for this exact config) is not run again unless
    ``force``; the stored result comes back with ``"skipped": True``. An unfinished folder (an
    interrupted or failed attempt) is cleared and the trial runs from scratch, so the result
    depends only on the config: re-running a trial on the same machine gives the same metrics.
    """
    t = _trial(trial)
    cfg = t.config
    folder = trial_dir(results_dir, t.id)
    if not force:
        done = read_result(folder, t)
        if done is not None:
            return {**done, "skipped": True}
    folder.mkdir(parents=True, exist_ok=True)
    _clear_partial(folder)
    started = time.time()
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    commit = git_commit()
    vers = versions()
    (folder / "trial.json").write_text(
        json.dumps(
            {
                "trial_id": t.id,
                "label": t.label,
                "config": cfg,
                "seed": cfg["seed"],
                "episode_seeds": [episode_seed(cfg), episode_seed(cfg) + cfg["episodes"] - 1],
                "versions": vers,
                "git_commit": commit,
                "host": platform.node(),
                "pid": os.getpid(),
                "started_at": stamp,
            },
            indent=2,
        )
    )
    with (folder / "attempts.jsonl").open("a") as fh:
        fh.write(json.dumps({"started_at": stamp, "host": platform.node(), "pid": os.getpid()}))
        fh.write("\n")
    try:
        set_torch_threads(1)
        train_info: dict[str, Any] | None = None
        if t.learned:
            tc = train_config(cfg, where=f"trial {t.id}")
            res = train(tc, folder / "train", progress=False)
            spec = f"learned:{folder / 'train' / 'model'}"
            train_info = {
                "steps": res.steps,
                "seconds": res.seconds,
                "steps_per_second": res.steps_per_second,
                "best_eval_mean_reward": res.eval_mean_reward,
            }
        else:
            spec = cfg["policy"]
        report = compare(
            cfg["env"],
            cfg["test_dataset"],
            [spec],
            cfg["episodes"],
            episode_seed(cfg),
            dict(cfg["env_kwargs"]),
        )
        write_json(report, folder / "compare.json")
        row = report["results"][0]
        result = {
            "format": RESULT_FORMAT,
            "status": "finished",
            "trial_id": t.id,
            "label": t.label,
            "config": cfg,
            "env": cfg["env"],
            "dataset": report["dataset"],
            "env_kwargs": cfg["env_kwargs"],
            "policy": t.label,
            "kind": "learned" if t.learned else "heuristic",
            "seed": cfg["seed"],
            "episodes": row["episodes"],
            "episode_seed": episode_seed(cfg),
            "mean_reward": row["mean_reward"],
            "std_reward": row["std_reward"],
            "metrics": row["metrics"],
            "metrics_std": row.get("metrics_std", {}),
            "episode_rewards": row.get("episode_rewards", []),
            "main_metric": report.get("main_metric"),
            "episode_values": row.get("episode_values", []),
            "train": train_info,
            "seconds": time.time() - started,
            "started_at": stamp,
            "finished_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "host": platform.node(),
            "versions": vers,
            "git_commit": commit,
        }
        write_json_atomic(folder / RESULT, result)
    except BaseException:
        (folder / "error.txt").write_text(traceback.format_exc())
        raise
    return {**result, "skipped": False}
