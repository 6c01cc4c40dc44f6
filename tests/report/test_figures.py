"""Figures and tables render from real run data and compare reports."""

from pathlib import Path

import matplotlib.image as mpimg

from rlsched.evaluate import compare
from rlsched.report.figures import comparison_bars, learning_curve, zoo_forest
from rlsched.report.leaderboard import markdown_table


def test_comparison_bars_and_markdown(tmp_path: Path) -> None:
    rep = compare(
        "rlsched/ServerlessPlacement-v0",
        "wfinstances:blast-43",
        "first_fit,random,k8s_balanced",
        episodes=2,
        env_kwargs={"episode_length": 30},
    )
    png = comparison_bars(rep, tmp_path / "bars.png")
    img = mpimg.imread(png)
    assert img.shape[0] > 100 and img.shape[1] > 300
    md = markdown_table(rep)
    assert len(md.splitlines()) == 2 + 3 and "cost $" in md and "k8s_balanced" in md


def test_learning_curve_from_monitor_files(tmp_path: Path) -> None:
    mon = tmp_path / "run" / "monitor"
    mon.mkdir(parents=True)
    rows = "\n".join(f"{-50 + k},{100},{k}" for k in range(40))
    (mon / "0.monitor.csv").write_text('#{"t_start": 0}\nr,l,t\n' + rows + "\n")
    png = learning_curve([tmp_path / "run"], tmp_path / "curve.png", references={"x": -20.0})
    assert mpimg.imread(png).shape[0] > 100


def test_zoo_forest_draws_every_row_with_or_without_an_oracle(tmp_path: Path) -> None:
    def v(mean: float, verdict: str) -> dict:
        return {"mean": mean, "lo": mean - 1.0, "hi": mean + 1.0, "verdict": verdict}

    points = [
        {"label": "a\nenv `p`", "reference": "h", "metric": "reward",
         "learned": v(3.0, "better"), "oracle": v(5.0, "better")},
        {"label": "b\nenv `q`", "reference": "g", "metric": "violations",
         "learned": v(-2.0, "worse"), "oracle": None},
        {"label": "c\nenv `r`", "reference": "g", "metric": "violations",
         "learned": None, "oracle": v(0.5, "no significant difference")},
    ]  # fmt: skip
    img = mpimg.imread(zoo_forest(points, tmp_path / "zoo.png"))
    assert img.shape[0] > 200 and img.shape[1] > 500
