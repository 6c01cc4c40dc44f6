"""``rlsched results``: one row per env with the best heuristic, the oracle's headroom and each
learned policy's paired verdict; written as Markdown and JSON."""

import dataclasses
import json
from pathlib import Path

import pytest
from rich.console import Console

from rlsched import results as res_mod
from rlsched.splits import SPLITS


@pytest.fixture
def tiny_pods(monkeypatch: pytest.MonkeyPatch) -> str:
    env_id = "rlsched/PodRebalancing-v0"
    split = dataclasses.replace(
        SPLITS[env_id],
        env_kwargs={**SPLITS[env_id].env_kwargs, "episode_length": 6},
        episodes={"quick": 2, "full": 2},
    )
    monkeypatch.setitem(SPLITS, env_id, split)
    return env_id


def test_results_table_for_one_env(tmp_path: Path, tiny_pods: str) -> None:
    out = res_mod.run_results(tmp_path, "quick", envs=["PodRebalancing"], console=Console())
    (row,) = out["rows"]
    assert row["env"] == tiny_pods
    assert row["best_heuristic"]["policy"] == out["reports"][0]["reference"]
    orc = row["oracle"]
    assert orc["base"] == row["best_heuristic"]["policy"]
    # violations: lower is better, and the fortified oracle is never above its base
    assert orc["mean"] <= row["best_heuristic"]["mean"]
    assert orc["paired"]["verdict"] in ("better", "no significant difference")
    md = (tmp_path / "results.md").read_text()
    assert "| PodRebalancing-v0 |" in md and "headroom" in md
    assert json.loads((tmp_path / "results.json").read_text())["rows"][0]["env"] == tiny_pods


def test_learned_flags_and_budget_are_checked() -> None:
    assert res_mod.parse_learned(["VMPlacement=runs/x"]) == {
        "rlsched/VMPlacement-v0": ["learned:runs/x"]
    }
    assert res_mod.parse_learned(["VMPlacement:fading-20=runs/x"]) == {
        "rlsched/VMPlacement-v0:fading-20": ["learned:runs/x"]
    }
    with pytest.raises(ValueError, match="no preset"):
        res_mod.parse_learned(["VMPlacement:nope=runs/x"])
    with pytest.raises(ValueError, match="not ENV=PATH"):
        res_mod.parse_learned(["runs/x"])
    with pytest.raises(ValueError, match="unknown env"):
        res_mod.parse_learned(["Nope=runs/x"])
    with pytest.raises(ValueError, match="--budget"):
        res_mod.run_results("/tmp/unused", "huge")


def test_rows_per_preset_carry_both_spreads(tmp_path: Path, tiny_pods: str) -> None:
    out = res_mod.run_results(
        tmp_path, "quick", envs=["PodRebalancing"], console=Console(), presets="all"
    )
    assert [r["preset"] for r in out["rows"]] == ["today", "contention"]
    assert all("seed=2" in r["dataset"] for r in out["rows"])  # the test set, every preset
    for row in out["rows"]:
        assert row["baseline"]["policy"] == "no_migration"
        assert row["spread"]["policy"] == row["best_heuristic"]["policy"]
        assert row["headroom"]["policy"] == "clairvoyant"
        assert isinstance(row["informative"], bool)
    md = (tmp_path / "results.md").read_text()
    assert "| PodRebalancing-v0 | today |" in md and "| PodRebalancing-v0 | contention |" in md


def test_preset_rows_keep_held_out_data() -> None:
    pods = "rlsched/PodRebalancing-v0"
    assert res_mod.row_dataset("synthetic:pods?seed=2", "today", pods) == "synthetic:pods?seed=2"
    llm = "rlsched/LLMAutoscaling-v0"
    assert res_mod.row_dataset("azure-llm:code", "code-2x", llm) == "azure-llm:code"
    assert res_mod.row_dataset("azure-llm:code", "conv-2x", llm) is None  # training trace
    assert "conv-1x" in res_mod.row_presets(llm, "all")
    assert res_mod.row_presets("rlsched/VMPlacement-v0", "all") == [
        "fading-5", "fading-20", "fading-100", "recovering-5", "recovering-20", "recovering-100"
    ]
    assert res_mod.row_presets(llm, None) == [None]
    # the preset wins over the split's arguments
    kw = res_mod.preset_kwargs("rlsched/VMPlacement-v0", "fading-5")
    assert kw == {"scenario": "fading-5"}


def test_a_preset_on_a_training_trace_gets_spreads_but_no_learned_verdict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    llm = "rlsched/LLMAutoscaling-v0"
    split = dataclasses.replace(
        SPLITS[llm], env_kwargs={"episode_duration": 30.0}, episodes={"quick": 2, "full": 2}
    )
    monkeypatch.setitem(SPLITS, llm, split)
    # a learned policy trained on conv must not be judged on conv: it is never even loaded
    learned = {llm: ["learned:/nonexistent/model"]}
    out = res_mod.run_results(
        tmp_path, "quick", learned=learned, envs=["LLMAutoscaling"], console=Console(),
        presets=["conv-1x"],
    )
    (row,) = out["rows"]
    assert row["training_data"] is True and row["learned"] == []
    assert row["dataset"].startswith("azure-llm:conv")
    assert row["oracle"] is not None and "headroom" in row
    md = (tmp_path / "results.md").read_text()
    assert "| LLMAutoscaling-v0 | conv-1x |" in md and "n/a: training data" in md


def test_the_shipped_pods_entry_is_judged_in_its_row(tmp_path: Path, tiny_pods: str) -> None:
    """The zoo's PodRebalancing entry reads history features the split's row does not set."""
    out = res_mod.run_results(
        tmp_path, "quick", envs=["PodRebalancing"], console=Console(),
        learned={tiny_pods: ["learned:zoo/pod-rebalancing-anchored-ppo"]},
    )  # fmt: skip
    (row,) = out["rows"]
    (lr,) = row["learned"]
    assert lr["policy"] == "learned:zoo/pod-rebalancing-anchored-ppo"
    assert lr["paired"]["verdict"] in ("better", "worse", "no significant difference")
    assert row["env_kwargs"]["history_features"] is True


def test_a_model_of_another_split_is_refused_before_any_episode(tmp_path: Path) -> None:
    """A scaler trained on the code trace's first half (split ``code-time``) has seen part of
    the default split's test set, the whole code trace: results refuses it."""
    from rlsched.agents.models import MODEL_FORMAT
    from rlsched.errors import ConfigError

    d = tmp_path / "model"
    d.mkdir()
    (d / "meta.json").write_text(json.dumps({
        "format": MODEL_FORMAT, "dataset": "azure-llm:conv", "split": "code-time",
        "train_datasets": ["azure-llm:code?end=1800"]}))  # fmt: skip
    with pytest.raises(ConfigError, match="trained under the split 'code-time'"):
        res_mod.run_results(
            tmp_path / "out", "quick", learned={"rlsched/LLMAutoscaling-v0": [f"learned:{d}"]},
            envs=["LLMAutoscaling"], console=Console(),
        )
    assert not (tmp_path / "out" / "results.json").exists()


def test_a_named_split_runs_its_envs_on_its_test_set_and_judges_its_models_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rlsched.errors import ConfigError
    from rlsched.splits import VARIANTS
    from rlsched.train import TrainConfig, train

    key = ("rlsched/LLMAutoscaling-v0", "code-time")
    monkeypatch.setitem(VARIANTS, key, dataclasses.replace(
        VARIANTS[key], env_kwargs={"episode_duration": 120.0}))  # fmt: skip
    train(TrainConfig(
        env_id=key[0], dataset="azure-llm:conv", eval_dataset=None, split="code-time",
        train_datasets=["azure-llm:code?end=1800"], algo="ppo", policy_net="mlp",
        total_steps=32, n_envs=2, n_steps=16, batch_size=16, n_epochs=1, eval_freq=0,
        checkpoint_freq=0, tensorboard=False, env_kwargs={"episode_duration": 30.0},
    ), tmp_path / "run", progress=False)  # fmt: skip
    learned = {key[0]: [f"learned:{tmp_path / 'run' / 'model'}"]}
    out = res_mod.run_results(
        tmp_path / "out", "quick", learned=learned, console=Console(), presets=["code-2x"],
        split="code-time",
    )
    (row,) = out["rows"]  # the envs that have the split: LLMAutoscaling alone
    assert out["split"] == "code-time" and row["preset"] == "code-2x"
    assert row["dataset"] == "azure-llm:code?start=1800" and row["episodes"] == 2
    assert [r["policy"] for r in row["learned"]] == learned[key[0]]
    assert "--split code-time" in (tmp_path / "out" / "results.md").read_text()
    with pytest.raises(ConfigError, match="trained under the split 'code-time'"):
        res_mod.run_results(tmp_path / "x", "quick", learned=learned, envs=["LLMAutoscaling"],
                            console=Console(), presets=["code-2x"])  # fmt: skip
    with pytest.raises(ConfigError, match="no split named 'code-time'"):
        res_mod.run_results(tmp_path / "y", "quick", envs=["VMPlacement"], console=Console(),
                            split="code-time")  # fmt: skip
    with pytest.raises(ConfigError, match="no env has it"):
        res_mod.run_results(tmp_path / "z", "quick", console=Console(), split="nope")
