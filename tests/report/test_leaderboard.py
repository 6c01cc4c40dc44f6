"""The terminal leaderboard (``rich_table``): every column keeps its figures when a policy's
spec is longer than the terminal leaves room for."""

from __future__ import annotations

import io

from rich.console import Console

from rlsched.evaluate import compare
from rlsched.report.leaderboard import rich_table


def test_a_long_policy_spec_wraps_and_every_figure_stays() -> None:
    report = compare("rlsched/VMPlacement-v0", None, "first_fit,best_fit", episodes=2, seed=0,
                     env_kwargs={"num_nodes": 4})  # fmt: skip
    long = "learned:" + "/a-long-run-folder" * 6 + "/model?anchor=first_fit&margin=1"
    report["results"][1]["policy"] = long
    out = io.StringIO()
    Console(file=out, width=160, color_system=None).print(rich_table(report))
    text = out.getvalue()
    for r in report["results"]:  # each row's main metric and reward are printed in full
        assert f"{r['metrics']['placed']:.2f}" in text and f"{r['mean_reward']:.3f}" in text
    assert "no significant difference" in text or "worse" in text or "better" in text
    folded = "".join(line.split("│")[2].strip() for line in text.splitlines() if "│" in line)
    assert long in folded  # the whole spec, wrapped within its column
    assert max(len(line) for line in text.splitlines()) <= 160
