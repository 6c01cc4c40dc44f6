"""`rlsched sweep` on a local Ray: a 2-trial sweep, resume after an interruption, a failing
trial, and a leaderboard whose numbers are the trials' own."""

from __future__ import annotations

import csv
import json
import math
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from rlsched.cli import app
from rlsched.sweep import load_sweep, read_result, run_trial, trial_dir
from rlsched.sweep.trial import RESULT
from tests.sweep.conftest import CI_SWEEP

pytest.importorskip("ray.tune", reason="Ray Tune is not installed (pip install 'rlsched[ray]')")

runner = CliRunner()


@pytest.fixture(scope="module")
def local_ray() -> Any:
    """One local Ray for the module (starting one takes ~10 s here); `rlsched sweep` uses an
    initialised Ray as it is."""
    import logging

    import ray

    started = not ray.is_initialized()
    if started:
        ray.init(
            num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level=logging.ERROR
        )
    yield ray
    if started:
        ray.shutdown()


def _attempts(results: Path) -> dict[str, int]:
    """Executions per trial label (the marker each run appends to attempts.jsonl)."""
    return {
        json.loads((f.parent / "trial.json").read_text())["label"]: len(f.read_text().splitlines())
        for f in (results / "trials").glob("*/attempts.jsonl")
    }


def _sweep(*args: str) -> Any:
    res = runner.invoke(app, ["sweep", *args])
    return res


def test_ci_sweep_resumes_and_its_leaderboard_equals_the_trials(
    local_ray: Any, tmp_path: Path
) -> None:
    out = tmp_path / "ci"
    res = _sweep(str(CI_SWEEP), "--out", str(out), "--max-concurrent", "2")
    assert res.exit_code == 0, res.output
    assert "2 trials, 0 finished, 2 to run" in res.output
    assert _attempts(out) == {"first_fit": 1, "maskable_ppo": 1}
    trials = load_sweep(CI_SWEEP).trials()
    results = {t.id: read_result(trial_dir(out, t.id), t) for t in trials}
    assert all(r is not None for r in results.values())
    assert (out / "sweep.yaml").is_file() and (out / "trials.json").is_file()
    learned = next(t for t in trials if t.learned)
    folder = trial_dir(out, learned.id)
    rec = json.loads((folder / "trial.json").read_text())
    assert rec["config"] == learned.config and rec["seed"] == 0
    assert "torch" in rec["versions"] and "git_commit" in rec
    assert (folder / "train" / "model" / "model.zip").is_file()

    # the same trial re-run here, outside Ray, gives exactly the metrics it gave on Ray
    again = run_trial(learned, tmp_path / "rerun")
    for k in ("mean_reward", "metrics", "episode_rewards"):
        assert again[k] == results[learned.id][k], k

    # interruption: the learned trial was killed mid-way (no result.json, a partial folder)
    (folder / RESULT).unlink()
    shutil.rmtree(folder / "train" / "final")
    res = _sweep(str(CI_SWEEP), "--out", str(out), "--max-concurrent", "2")
    assert res.exit_code == 0, res.output
    assert "2 trials, 1 finished, 1 to run" in res.output
    assert _attempts(out) == {"first_fit": 1, "maskable_ppo": 2}  # only the unfinished one ran
    rerun = read_result(folder, learned)
    assert rerun is not None and rerun["metrics"] == results[learned.id]["metrics"]

    # nothing left: nothing runs (and Ray is not even needed)
    res = _sweep(str(CI_SWEEP), "--out", str(out))
    assert res.exit_code == 0 and "0 to run" in res.output
    assert _attempts(out) == {"first_fit": 1, "maskable_ppo": 2}

    # the leaderboard: numbers equal to the trials' own (one seed: the mean is the metric)
    res = runner.invoke(app, ["leaderboard", str(out)])
    assert res.exit_code == 0, res.output
    md = (out / "leaderboard" / "leaderboard.md").read_text()
    assert "score vs first_fit" in md and "verdict" in md
    rows = list(csv.DictReader((out / "leaderboard" / "leaderboard.csv").open()))
    by_policy = {r["label"]: r for r in results.values() if r is not None}
    assert {r["policy"] for r in rows} == set(by_policy)
    for row in rows:
        trial = by_policy[row["policy"]]
        want = (
            trial["mean_reward"] if row["metric"] == "reward" else trial["metrics"][row["metric"]]
        )
        assert float(row["mean"]) == want, row
        assert row["n"] == "1" and row["ci95_half_width"] == ""
    # ranked and scored on the env's main metric, ServerlessPlacement's reward (as compare)
    main = rows[0]["main_metric"]
    assert main == "reward" == by_policy["first_fit"]["main_metric"]
    ref = by_policy["first_fit"]["mean_reward"]
    for row in rows:
        assert float(row["score"]) == by_policy[row["policy"]]["mean_reward"] / ref
    data = json.loads((out / "leaderboard" / "leaderboard.json").read_text())
    (table,) = data["tables"]
    assert table["env"] == "rlsched/ServerlessPlacement-v0" and table["main_metric"] == "reward"
    html = (out / "leaderboard" / "leaderboard.html").read_text()
    assert html.count("<table") == 1 and html.count('src="data:image/png;base64,') == 1


def test_a_failing_trial_is_reported_and_the_others_finish(local_ray: Any, tmp_path: Path) -> None:
    """The node network needs Dict observations: on KubeScheduling-v0 training raises in the
    worker. The sweep goes on, says which trial failed and why, and exits 1."""
    cfg = {
        "name": "failing",
        "episodes": 1,
        "envs": [{"id": "KubeScheduling-v0", "env_kwargs": {"num_nodes": 3}}],
        "policies": ["first_fit"],
        "algos": [{"algo": "maskable_ppo", "policy_net": "node", "total_steps": 64}],
    }
    path = tmp_path / "failing.yaml"
    path.write_text(yaml.safe_dump(cfg))
    out = tmp_path / "out"
    res = _sweep(str(path), "--out", str(out), "--max-concurrent", "2")
    assert res.exit_code == 1, res.output
    assert "1 ran, 0 already finished, 1 failed" in res.output
    assert "policy_net 'node' needs a Dict observation" in res.output
    failed = next((out / "trials").glob("KubeScheduling-v0-maskable_ppo-*"))
    assert "ConfigError" in (failed / "error.txt").read_text()
    assert not (failed / RESULT).exists()
    ok = next((out / "trials").glob("KubeScheduling-v0-first_fit-*"))
    result = json.loads((ok / RESULT).read_text())
    assert result["status"] == "finished" and not math.isnan(result["mean_reward"])
