"""rlsched.gate: a model's margin gate chosen on validation data by one rule."""

import json
import math
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rlsched.cli import app
from rlsched.errors import ConfigError
from rlsched.gate import choose_margin, parse_margins, write_gate
from rlsched.policies.learned import LearnedPolicy

RETIRED = "configs/zoo/start/workflow-small-lookahead-ppo"
#: the small-DAG entry's validation set (the WorkflowOffloading test set is wfinstances')
VALIDATION = "synthetic:placement?workflows=30&tasks=15&seed=3"


@pytest.fixture
def model(tmp_path: Path) -> Path:
    """Round W7's small-DAG entry's network (retired to configs/zoo/start by round W8)
    without the gate it shipped with."""
    out = tmp_path / "model"
    shutil.copytree(Path(__file__).resolve().parents[1] / RETIRED / "model", out)
    meta = json.loads((out / "meta.json").read_text())
    meta.pop("gate", None)
    (out / "meta.json").write_text(json.dumps(meta))
    return out


def test_margins_parse_and_bad_ones_are_named() -> None:
    assert parse_margins("0, 0.5,inf") == [0.0, 0.5, math.inf]
    for bad, what in (("0,-1", "'-1'"), ("0,x", "'x'"), ("1,1", "twice"), ("nan", "'nan'")):
        with pytest.raises(ConfigError, match=what):
            parse_margins(bad)


def test_the_rule_keeps_the_best_eligible_margin_ties_to_the_larger(model: Path) -> None:
    res = choose_margin(model, "peft", [0.0, 0.5, math.inf], VALIDATION, 4, 10_000)
    assert res["reference"] == "peft" and res["direction"] == "lower"
    rows = res["margins"]
    assert [r["margin"] for r in rows] == [0.0, 0.5, math.inf]
    # infinite margin is PEFT itself: every episode tied with the reference
    assert rows[-1]["paired"]["ties"] == 4 and rows[-1]["paired"]["mean_diff"] == 0
    eligible = [r for r in rows if r["paired"]["verdict"] != "worse"]
    best = min(r["mean"] for r in eligible)
    assert res["kept"] == max(r["margin"] for r in eligible if r["mean"] == best)


def test_test_data_is_refused(model: Path) -> None:
    with pytest.raises(ConfigError, match=r"shares .* test set"):
        choose_margin(model, "peft", [0.0], "wfinstances:blast-43,helloworld-10", 3, 0)


def test_write_gate_is_what_the_model_then_plays(model: Path) -> None:
    write_gate(model, "peft", 0.75)
    pol = LearnedPolicy(model)
    assert (pol.anchor, pol.margin) == ("peft", 0.75)


def test_cli_chooses_and_writes_the_gate(model: Path, tmp_path: Path) -> None:
    out = tmp_path / "gate.json"
    args = ["gate", f"learned:{model}", "--anchor", "peft", "--dataset", VALIDATION,
            "--margins", "0,inf", "--episodes", "3", "--write", "--json", str(out)]  # fmt: skip
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    choice = json.loads(out.read_text())
    assert "kept: margin" in res.output and choice["kept"] in (0.0, math.inf)
    assert json.loads((model / "meta.json").read_text())["gate"]["margin"] == choice["kept"]
