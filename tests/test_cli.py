"""The CLI end to end: datasets, compare (JSON shape), train + learned:PATH, clean errors."""

import json
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from rlsched.cli import app

runner = CliRunner()


def rlsched(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", "from rlsched.cli import main; main()", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_datasets_list_and_show() -> None:
    res = runner.invoke(app, ["datasets", "list"])
    assert res.exit_code == 0, res.output
    for scheme in ("wfinstances", "wfcommons", "azure-functions", "alibaba", "synthetic"):
        assert scheme in res.output
    res = runner.invoke(app, ["datasets", "show", "wfinstances:montage-58"])
    assert res.exit_code == 0, res.output
    assert "58" in res.output and "derived_fields" in res.output


def test_bad_dataset_is_one_line_and_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "broken.json"
    bad.write_text('{"name": "x", "workflow": {"specification": {"tasks": [')
    proc = rlsched("datasets", "show", f"file:{bad}")
    assert proc.returncode == 2
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "broken.json" in lines[0], proc.stderr
    proc = rlsched("datasets", "show", "nosuch:thing")
    assert proc.returncode == 2 and "nosuch" in proc.stderr


def test_compare_writes_the_documented_json(tmp_path: Path) -> None:
    out = tmp_path / "cmp.json"
    res = runner.invoke(
        app,
        [
            "compare",
            "--dataset",
            "wfinstances:blast-43",
            "--policies",
            "first_fit,random",
            "--episodes",
            "2",
            "--seed",
            "5",
            "--json",
            str(out),
            "--env-arg",
            "episode_length=40",
        ],
    )
    assert res.exit_code == 0, res.output
    data = json.loads(out.read_text())
    assert data["env"] == "rlsched/ServerlessPlacement-v0"
    assert data["dataset"] == "wfinstances:blast-43"
    assert [r["policy"] for r in data["results"]] == ["first_fit", "random"]
    for r in data["results"]:
        assert r["episodes"] == 2
        assert {"mean_reward", "std_reward", "metrics"} <= set(r)
        assert {"cost", "mean_rfrt", "p95_rfrt", "slo_violation_pct", "invalid_actions"} <= set(
            r["metrics"]
        )
    assert "first_fit" in res.output


def test_train_then_compare_and_evaluate_learned(tmp_path: Path) -> None:
    run = tmp_path / "run"
    res = runner.invoke(
        app,
        [
            "train",
            "--dataset",
            "wfinstances:srasearch-22",
            "--eval-dataset",
            "wfinstances:1000genome-52",
            "--steps",
            "300",
            "--seed",
            "1",
            "--out",
            str(run),
            "--n-envs",
            "1",
            "--no-progress",
            "--config",
            str(Path(__file__).resolve().parents[1] / "configs" / "smoke.yaml"),
        ],
    )
    assert res.exit_code == 0, res.output
    assert (run / "model" / "meta.json").is_file()
    out = tmp_path / "cmp.json"
    res = runner.invoke(
        app,
        [
            "compare",
            "--dataset",
            "wfinstances:blast-43",
            "--episodes",
            "2",
            "--policies",
            f"first_fit,learned:{run}/model",
            "--json",
            str(out),
            "--env-arg",
            "episode_length=40",
        ],
    )
    assert res.exit_code == 0, res.output
    names = [r["policy"] for r in json.loads(out.read_text())["results"]]
    assert names[0] == "first_fit" and names[1].startswith("learned:")
    res = runner.invoke(app, ["evaluate", "--model", str(run), "--episodes", "2"])
    assert res.exit_code == 0, res.output


def test_train_max_seconds_stops_with_a_checkpoint_and_says_how_to_go_on(
    tmp_path: Path,
) -> None:
    run = tmp_path / "run"
    smoke = Path(__file__).resolve().parents[1] / "configs" / "smoke.yaml"
    res = runner.invoke(app, ["train", "--config", str(smoke), "--steps", "256", "--out",
                              str(run), "--no-progress", "--max-seconds", "0"])  # fmt: skip
    assert res.exit_code == 0, res.output
    said = res.output.replace("\n", "")  # the console wraps long lines
    assert "stopped by --max-seconds" in said and "--resume" in said and str(run) in said
    assert (run / "checkpoint" / "state.json").is_file() and not (run / "run.json").exists()
    res = runner.invoke(app, ["train", "--resume", str(run), "--no-progress"])
    assert res.exit_code == 0 and "done: 256 steps" in res.output, res.output
    assert json.loads((run / "run.json").read_text())["steps"] == 256


def test_unknown_policy_exits_2() -> None:
    proc = rlsched("compare", "--policies", "magic", "--episodes", "2")
    assert proc.returncode == 2 and "magic" in proc.stderr


def test_compare_gantt_writes_one_png_per_policy(tmp_path: Path) -> None:
    out = tmp_path / "gantt"
    res = runner.invoke(
        app,
        [
            "compare",
            "--env",
            "rlsched/WorkflowOffloading-v0",
            "--dataset",
            "wfinstances:blast-43",
            "--policies",
            "heft,random",
            "--episodes",
            "2",
            "--gantt",
            str(out),
            "--env-arg",
            "num_workflows=1",
        ],
    )
    assert res.exit_code == 0, res.output
    for name in ("heft", "random"):
        png = out / f"{name}.png"
        assert png.is_file(), res.output
        data = png.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
    # an env without schedule_log: one line, no charts, still exit 0
    res = runner.invoke(
        app,
        [
            "compare",
            "--dataset",
            "wfinstances:blast-43",
            "--policies",
            "first_fit",
            "--episodes",
            "2",
            "--gantt",
            str(tmp_path / "none"),
            "--env-arg",
            "episode_length=10",
        ],
    )
    assert res.exit_code == 0, res.output
    assert "not available" in res.output
    assert not (tmp_path / "none").exists()


def test_one_episode_is_refused_in_one_line() -> None:
    proc = rlsched("compare", "--policies", "first_fit", "--episodes", "1")
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert lines == ["error: --episodes 1: a paired interval needs at least 2 episodes"]


def test_train_says_how_long_the_imitation_warm_start_took(tmp_path: Path) -> None:
    """The RL steps' seconds leave the warm start out; the closing line names it."""
    cfg = tmp_path / "warm.yaml"
    cfg.write_text(
        "env_id: rlsched/WorkflowOffloading-v0\n"
        "dataset: synthetic:placement?workflows=20&tasks=8&seed=5\n"
        "env_kwargs: {num_workflows: 1, reward: makespan, num_nodes: 3}\n"
        "total_steps: 64\nn_envs: 1\nn_steps: 64\nbatch_size: 32\nn_epochs: 1\neval_freq: 0\n"
        "imitation_policy: heft\nimitation_episodes: 2\nimitation_epochs: 1\ntensorboard: false\n"
    )
    res = runner.invoke(app, ["train", "--config", str(cfg), "--out", str(tmp_path / "run"),
                              "--no-progress"])  # fmt: skip
    said = res.output.replace("\n", "")
    assert res.exit_code == 0 and "done: 64 steps" in said and "imitation warm start" in said, said


def test_help_lists_each_command_on_its_own_lines_without_rest_quotes() -> None:
    res = runner.invoke(app, ["--help"], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    assert "``" not in res.output
    # one row per command at this width: its first paragraph joined, not cut at the
    # docstring's line breaks
    assert "print a leaderboard with paired verdicts against the reference." in res.output
    assert "(learned:PATH loads a trained model)" in res.output
    res = runner.invoke(app, ["evaluate", "--help"], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    assert "with --reference also that policy" in res.output


def test_policies_table_shows_each_rule_without_rest_quotes() -> None:
    res = runner.invoke(app, ["policies"], env={"COLUMNS": "240"})
    assert res.exit_code == 0, res.output
    assert "gang_binpack" in res.output and "NodeResourcesBalancedAllocation" in res.output
    assert "``" not in res.output
