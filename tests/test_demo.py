"""The main job end to end, with tiny training: every output exists and the model is usable."""

import io
import json
import re
from pathlib import Path

import pytest
from rich.console import Console

from rlsched.demo import run_demo
from rlsched.evaluate import compare


def test_demo_writes_report_figures_and_a_usable_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import rlsched.demo

    monkeypatch.setattr(rlsched.demo, "LOG_EVERY", 0.0)
    out = tmp_path / "demo"
    log = io.StringIO()  # not a terminal, as in CI: progress comes as lines
    res = run_demo(out, steps=600, seeds=2, episodes=2, console=Console(file=log, width=160))
    lines = re.findall(r"training: ([\d,]+)/([\d,]+) steps .*steps/s, ETA", log.getvalue())
    assert lines, log.getvalue()
    done, total = (int(x.replace(",", "")) for x in lines[-1])
    assert 0 <= done <= total and total >= 2 * 600
    for f in (
        "report.md",
        "learning_curve.png",
        "comparison.png",
        "leaderboard.json",
        "model/model.zip",
        "model/meta.json",
    ):
        assert (out / f).is_file(), f
    board = json.loads((out / "leaderboard.json").read_text())["leaderboard"]
    names = [r["policy"] for r in board["results"]]
    assert "maskable_ppo (2 seeds)" in names and "k8s_balanced" in names
    learned = next(r for r in board["results"] if r["policy"].startswith("maskable_ppo"))
    assert [s["policy"] for s in learned["seeds"]] == ["seed 0", "seed 1"]
    p = learned["paired"]
    assert p["reference"] == board["reference"] and p["method"] == "iqm stratified bootstrap"
    report = (out / "report.md").read_text()
    assert "Held-out leaderboard" in report and "k8s_balanced" in report
    assert isinstance(res["margin"], float)
    # the headline is generated from the verdict, and the validation check is stated
    head = res["verdicts"][0]
    if p["verdict"] == "no significant difference":
        assert f"no significant difference from {board['reference']}" in head
    else:
        assert f"significantly {p['verdict']} than {board['reference']}" in head
    assert any(line.startswith("validation: the kept model") for line in res["verdicts"])
    assert head in report
    # stage 0: every zoo policy judged on its own test data, its verdict line in the report
    from rlsched.zoo import names

    assert [z["name"] for z in res["zoo"]] == names()
    for z in res["zoo"]:
        assert z["line"].startswith(f"zoo: learned:zoo/{z['name']}") and z["line"] in report
        assert z["line"] in log.getvalue().replace("\n", " ") or z["name"] in log.getvalue()
    rep = compare(
        "rlsched/ServerlessPlacement-v0",
        "wfinstances:blast-43",
        f"learned:{out}/model",
        episodes=1,
        env_kwargs={"episode_length": 30},
    )
    assert rep["results"][0]["metrics"]["invalid_actions"] == 0
