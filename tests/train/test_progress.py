"""Training reports the steps it really runs, and says why no held-out reward exists."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from rlsched.cli import app
from rlsched.train import TrainConfig
from rlsched.train.progress import eta_text, planned_steps

SMOKE = Path(__file__).resolve().parents[2] / "configs" / "smoke.yaml"


def test_planned_steps_round_up_to_whole_rollouts() -> None:
    assert planned_steps(TrainConfig(total_steps=3000, n_steps=256, n_envs=4)) == 3072
    assert planned_steps(TrainConfig(total_steps=1024, n_steps=256, n_envs=4)) == 1024
    assert planned_steps(TrainConfig(algo="dqn", total_steps=301, n_envs=2)) == 302


def test_eta_text() -> None:
    assert eta_text(500, 1000, 10.0) == "500/1,000 steps (50%), 50 steps/s, ETA 0:10"
    assert "ETA ?" in eta_text(0, 1000, 0.0)
    assert eta_text(100, 7400, 100.0).endswith("ETA 2:01:40")


def test_train_counts_the_steps_it_runs_and_explains_a_missing_evaluation(
    tmp_path: Path,
) -> None:
    run = tmp_path / "run"
    res = CliRunner().invoke(
        app, ["train", "--config", str(SMOKE), "--steps", "100", "--out", str(run)]
    )
    assert res.exit_code == 0, res.output
    # smoke.yaml: n_steps 64, one env, eval_freq 150
    assert "for 128 steps (100 rounded up to whole rollouts)" in res.output
    assert "128/128 steps" in res.output and "/100 " not in res.output
    assert "no held-out evaluation ran (eval_freq 150 > 128 steps)" in res.output
    assert "None" not in res.output
    assert json.loads((run / "progress.json").read_text())["steps"] == 128
    assert json.loads((run / "run.json").read_text())["steps"] == 128


def test_plan_text_names_imitation_alone() -> None:
    from rlsched.train.progress import plan_text

    cfg = TrainConfig(total_steps=0, imitation_policy="heft")
    assert plan_text(cfg) == "0 RL steps (imitation of heft alone)"
    assert plan_text(TrainConfig(total_steps=3000, n_steps=256, n_envs=4)).startswith("3,072 steps")


def test_plan_text_names_what_a_departure_run_does() -> None:
    from rlsched.train.progress import plan_text
    from tests.conftest import TINY_DEPARTURES

    fit = TrainConfig.from_dict(dict(TINY_DEPARTURES))
    assert plan_text(fit).startswith("12 teacher-labelled episodes of peft")
    joined = TrainConfig.from_dict(dict(TINY_DEPARTURES, departure_members=["a", "b"],
                                        departure_thresholds=[0.0]))  # fmt: skip
    assert plan_text(joined).startswith("2 departure models joined, nothing collected")
