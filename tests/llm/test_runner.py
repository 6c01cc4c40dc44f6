"""``rlsched simulate`` (the trace runner): JSON and figure, start states, policies by name,
and a tiny trained PPO model used through ``learned:PATH`` in compare and simulate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from rlsched.cli import app
from rlsched.core.llm.scaling import StartState
from rlsched.errors import PolicyError
from rlsched.llm_runner import METRIC_KEYS, simulate

runner = CliRunner()
PNG = b"\x89PNG\r\n\x1a\n"


def test_simulate_writes_json_and_png(tmp_path: Path) -> None:
    out, fig = tmp_path / "r.json", tmp_path / "r.png"
    res = runner.invoke(
        app,
        ["simulate", "--trace", "azure-llm:conv", "--policy", "threshold", "--duration", "120",
         "--rate-scale", "2", "--json", str(out), "--figure", str(fig), "--no-progress"],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    assert "SLO attainment" in res.output and "wall time" in res.output
    data = json.loads(out.read_text())
    for key in METRIC_KEYS:
        assert key in data, key
    assert data["config"]["trace"] == "azure-llm:conv"
    assert data["config"]["policy"] == "threshold"
    assert data["config"]["rate_scale"] == 2.0
    assert data["config"]["start_state"] == "default"
    assert data["requests"] + data["dropped"] == data["total_requests"] > 0
    assert 0.0 <= data["slo_attainment"] <= 1.0 and data["cost"] > 0
    assert fig.read_bytes()[:8] == PNG


def test_simulate_pool_sizes_and_start_state(tmp_path: Path) -> None:
    d = StartState.default().to_dict()
    d["pools"]["token"]["num_instances"] = 3
    path = tmp_path / "ss.yaml"
    path.write_text(yaml.safe_dump(d))
    run = simulate(policy="none", duration=60.0, start_state=path, prompt=1)
    cfg = run.result["config"]
    assert cfg["start_state"] == str(path) and cfg["pools"] == {"prompt": 1, "token": 3}
    sm = run.sim.scaling_manager
    assert sm.pool_sizes("prompt")["active"] == 1 and sm.pool_sizes("token")["active"] == 3
    assert run.result["scale_up_actions"] == 0 == run.result["scale_down_actions"]
    assert run.result["mean_instances"] == 4.0


def test_unknown_policy_is_an_error() -> None:
    with pytest.raises(PolicyError, match="static_peak"):
        simulate(policy="k8s_balanced", duration=10.0)
    res = runner.invoke(app, ["simulate", "--policy", "nope", "--duration", "10", "--no-progress"])
    assert isinstance(res.exception, PolicyError)


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from rlsched.train import TrainConfig, train

    cfg = TrainConfig(
        env_id="rlsched/LLMAutoscaling-v0",
        dataset="azure-llm:conv",
        eval_dataset=None,
        env_kwargs={"episode_duration": 60.0},
        algo="ppo",
        policy_net="mlp",
        net_arch=[16, 16],
        total_steps=1024,
        n_envs=2,
        n_steps=128,
        batch_size=128,
        n_epochs=2,
        eval_freq=0,
        tensorboard=False,
    )
    out = tmp_path_factory.mktemp("ppo")
    train(cfg, out, progress=False)
    return out


def test_learned_policy_in_compare_and_simulate(tiny_model: Path, tmp_path: Path) -> None:
    from rlsched.evaluate import compare

    rep = compare(
        "rlsched/LLMAutoscaling-v0",
        None,
        f"none,learned:{tiny_model}",
        episodes=1,
        env_kwargs={"episode_duration": 30.0},
    )
    learned = rep["results"][1]
    assert learned["policy"] == f"learned:{tiny_model}"
    assert learned["metrics"]["requests"] > 0
    out = tmp_path / "l.json"
    res = runner.invoke(
        app,
        ["simulate", "--policy", f"learned:{tiny_model}", "--duration", "60", "--json", str(out),
         "--no-progress"],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    assert json.loads(out.read_text())["config"]["policy"] == f"learned:{tiny_model}"
