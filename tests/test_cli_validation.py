"""Ordinary mistakes on the command line: exit status 2, one line on stderr naming what is
wrong (with a close match where there is one), no traceback, nothing written."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


def rlsched(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", "from rlsched.cli import main; main()", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
    )


def one_error_line(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr + proc.stdout
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, proc.stderr
    return lines[0]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        # unknown env argument: the valid ones are listed, the close one suggested
        (["--env-arg", "bogus=1"], ["'bogus'", "valid: num_nodes, num_functions"]),
        (["--env-arg", "num_node=3"], ["did you mean 'num_nodes'?"]),
        # wrong type: the flag, the value and the type
        (["--env-arg", "num_nodes=ten"], ["--env-arg num_nodes='ten'", "expected int"]),
        # out of range: the flag, the value and the range
        (["--env-arg", "num_nodes=-3"], ["--env-arg num_nodes=-3", ">= 1"]),
        (["--env", "rlsched/ServerlessPlacment-v0"], ["'rlsched/ServerlessPlacement-v0'?"]),
        (["--policies", "firstfit"], ["did you mean 'first_fit'?"]),
        (["--dataset", "wfinstances:montag-58"], ["did you mean 'montage-58'?"]),
        (["--dataset", "wfinstance:all"], ["did you mean 'wfinstances'?"]),
        (["--episodes", "0"], ["--episodes 0", "a paired interval needs at least 2 episodes"]),
        (["--episodes", "1"], ["a paired interval needs at least 2 episodes"]),
    ],
)
def test_compare_mistakes_are_one_line(args: list[str], expected: list[str]) -> None:
    line = one_error_line(rlsched("compare", "--policies", "first_fit", *args))
    for text in expected:
        assert text in line, line


@pytest.mark.parametrize(
    ("env", "arg", "expected"),
    [
        ("rlsched/KubeScheduling-v0", "num_nodes=0", "must be >= 1"),
        ("VMPlacement-v0", "episode_length=0", "episode_length must be >= 1"),
        ("rlsched/LLMAutoscaling-v0", "episode_duration=-1", "episode_duration must be > 0"),
        ("rlsched/ServerlessPlacement-v0", "reward=foo", "choose one of"),
        ("rlsched/WorkflowOffloading-v0", "bandwidth=0", "bandwidth must be positive"),
    ],
)
def test_out_of_range_env_args_are_one_line(env: str, arg: str, expected: str) -> None:
    line = one_error_line(rlsched("compare", "--env", env, "--env-arg", arg))
    key = arg.split("=")[0]
    assert f"--env-arg {key}=" in line and expected in line, line


def test_evaluate_needs_two_episodes() -> None:
    line = one_error_line(rlsched("evaluate", "--model", "first_fit", "--episodes", "1"))
    assert "at least 2 episodes" in line


def test_simulate_checks_env_args() -> None:
    line = one_error_line(rlsched("simulate", "--env-arg", "decision_intervall=3"))
    assert "did you mean 'decision_interval'?" in line


@pytest.mark.parametrize(
    ("config", "env_arg", "expected"),
    [
        ("total_steps: 64\nlearning_rate: fast\n", [], [":2: learning_rate: 'fast'", "float"]),
        ("total_step: 64\n", [], [":1: unknown field 'total_step'", "'total_steps'?"]),
        ("learning_rate: -1\n", [], ["learning_rate must be > 0"]),
        ("total_steps: 64\n", ["--env-arg", "num_nodes=-3"], ["num_nodes=-3", ">= 1"]),
        ("total_steps: 64\n", ["--env-arg", "bogus=1"], ["'bogus'"]),
        ("total_steps: 64\n", ["--env-arg", "num_nodes=ten"], ["num_nodes='ten'", "int"]),
        ("total_steps: 64\n", ["--env", "rlsched/ServerlessPlacment-v0"], ["did you mean"]),
        ("total_steps: 64\n", ["--dataset", "wfinstances:montag-58"], ["'montage-58'?"]),
        ("env_kwargs: {num_nodes: ten}\n", [], ["cfg.yaml: env_kwargs num_nodes='ten'", "int"]),
    ],
)
def test_train_mistakes_write_nothing(
    tmp_path: Path, config: str, env_arg: list[str], expected: list[str]
) -> None:
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(config)
    out = tmp_path / "run"
    line = one_error_line(rlsched("train", "--config", str(cfg), "--out", str(out), *env_arg))
    for text in expected:
        assert text in line, line
    assert not out.exists()


def test_typed_config_values_are_read_as_their_types(tmp_path: Path) -> None:
    from rlsched.train import TrainConfig

    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("learning_rate: 3e-4\ntotal_steps: 100\n")  # YAML 1.1 reads 3e-4 as a string
    c = TrainConfig.from_yaml(cfg)
    assert c.learning_rate == pytest.approx(3e-4) and isinstance(c.learning_rate, float)


def test_policies_lists_every_env_policy_in_full() -> None:
    from rlsched.policies.registry import policy_catalogue

    proc = rlsched("policies")
    assert proc.returncode == 0, proc.stderr
    assert "…" not in proc.stdout
    for name in ("heft", "mdp_rollout", "static_peak", "no_migration", "k8s_balanced"):
        assert f"│ {name} " in proc.stdout, name
    names = {row[0] for row in policy_catalogue()}
    assert {"heft", "greedy_migration", "hpa", "first_fit", "learned:PATH"} <= names


def test_datasets_list_shows_whole_examples() -> None:
    from rlsched.data import list_datasets

    proc = rlsched("datasets", "list")
    assert proc.returncode == 0, proc.stderr
    assert "…" not in proc.stdout and "..." not in proc.stdout
    cells = [ln.split("│")[2].strip() for ln in proc.stdout.splitlines() if ln.count("│") > 3]
    for d in list_datasets():
        for example in d["examples"]:
            assert example in cells, example


def test_simulate_rejects_an_unknown_compat_mode() -> None:
    line = one_error_line(rlsched("simulate", "--compat", "splitwise"))
    assert "--compat 'splitwise'" in line and "splitwise-sim" in line


def test_results_with_an_unknown_split_is_one_line(tmp_path: Path) -> None:
    line = one_error_line(rlsched("results", "--split", "nope", "--out", str(tmp_path)))
    assert "--split 'nope': no env has it" in line, line
    line = one_error_line(rlsched("results", "--split", "code-time", "--env", "VMPlacement",
                                  "--out", str(tmp_path)))  # fmt: skip
    assert "no split named 'code-time' (known: default)" in line, line
