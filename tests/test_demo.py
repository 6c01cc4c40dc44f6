"""The main job end to end, with tiny training: every output exists and the model is usable."""

import io
import json
import re
from pathlib import Path

import pytest
from rich.console import Console

from rlsched.demo import run_demo
from rlsched.evaluate import compare
from rlsched.stats import paired
from tests.conftest import small_dag_entry


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
        "zoo.png",
        "leaderboard.json",
        "model/model.zip",
        "model/meta.json",
    ):
        assert (out / f).is_file(), f
    saved = json.loads((out / "leaderboard.json").read_text())
    board = saved["leaderboard"]
    assert [z["name"] for z in saved["zoo"]] == [z["name"] for z in res["zoo"]]
    assert all(z["point"]["learned"]["verdict"] in z["line"] for z in saved["zoo"])
    names = [r["policy"] for r in board["results"]]
    assert "maskable_ppo (2 seeds)" in names and "k8s_balanced" in names
    learned = next(r for r in board["results"] if r["policy"].startswith("maskable_ppo"))
    assert [s["policy"] for s in learned["seeds"]] == ["seed 0", "seed 1"]
    p = learned["paired"]
    assert p["reference"] == board["reference"] and p["method"] == "iqm stratified bootstrap"
    report = (out / "report.md").read_text()
    assert "Held-out leaderboard" in report and "k8s_balanced" in report and "(zoo.png)" in report
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
    stage = re.search(r"zoo stage: (\d+) entries in (\d+)s \((\d+)s of work", log.getvalue())
    assert stage and int(stage[1]) == len(names()) and int(stage[3]) > 0, log.getvalue()
    for z in res["zoo"]:
        assert z["line"].startswith(f"zoo: learned:zoo/{z['name']}") and z["line"] in report
        assert z["line"] in log.getvalue().replace("\n", " ") or z["name"] in log.getvalue()
        # the card's recorded oracle is still of today's episodes: its heuristic re-measured equal
        assert z["oracle"] and "not paired" not in z["oracle"] and z["oracle"] in report
        # a residual entry is also paired with the heuristic it corrects
        if z["name"] == "llm-autoscaling-hpa-threshold-residual-ppo":
            assert z["residual"].startswith("over hpa_threshold") and z["residual"] in report
        else:
            assert z["residual"] is None
    rep = compare(
        "rlsched/ServerlessPlacement-v0",
        "wfinstances:blast-43",
        f"learned:{out}/model",
        episodes=1,
        env_kwargs={"episode_length": 30},
    )
    assert rep["results"][0]["metrics"]["invalid_actions"] == 0


def test_zoo_oracle_is_paired_only_on_the_episodes_it_was_recorded_on() -> None:
    from rlsched.demo import oracle_line

    best = [10.0, 12.0, 11.0, 13.0, 9.0]
    rec = {"policy": "clairvoyant", "recorded": "a full run", "main_metric": "reward",
           "direction": "higher", "reference": "h", "reference_episode_values": best,
           "episode_values": [v + 4 for v in best]}  # fmt: skip

    def rep(mine: list[float], ref_values: list[float]) -> dict:
        return {"main_metric": "reward", "reference": "h",
                "results": [{"policy": "h", "episode_values": ref_values},
                            {"policy": "p", "episode_values": mine}]}  # fmt: skip

    assert oracle_line(None, rep(best, best), "p") is None
    # the same episodes: the oracle's headroom, the share the policy closes, its gap to it
    line = oracle_line(rec, rep([v + 1 + 0.1 * i for i, v in enumerate(best)], best), "p")
    assert line is not None and "significantly better than h" in line
    assert "p closes 30% of it" in line and "p vs the oracle: worse" in line
    # a policy no better than h closes no share of the headroom
    line = oracle_line(rec, rep([v + (-1) ** i for i, v in enumerate(best)], best), "p")
    assert line is not None and "closes" not in line
    # h re-measured differently: not the recorded episodes, so nothing is paired
    line = oracle_line(rec, rep(best, [v + 1 for v in best]), "p")
    assert line is not None and line.endswith("not paired")
    # fewer episodes today than recorded: the first ones are paired
    assert "3 pairs" in (oracle_line(rec, rep(best[:3], best[:3]), "p") or "")


def test_a_zoo_point_is_percent_of_the_best_heuristic_signed_better_to_the_right() -> None:
    from rlsched.demo import oracle_pairs, zoo_point

    best = [10.0, 12.0, 11.0, 13.0, 9.0]  # mean 11; lower is better (violations)
    mine = [v - 1.1 + 0.1 * (i % 2) for i, v in enumerate(best)]  # fewer violations
    rep = {"main_metric": "violations", "direction": "lower", "reference": "h",
           "results": [{"policy": "h", "episode_values": best},
                       {"policy": "learned:zoo/x", "episode_values": mine,
                        "paired": paired(mine, best, direction="lower", reference="h",
                                         metric="violations").to_json()}]}  # fmt: skip
    row = {"name": "x", "path": "learned:zoo/x", "env": "rlsched/E-v0", "preset": "p",
           "report": rep}  # fmt: skip
    rec = {"policy": "clairvoyant", "recorded": "a run", "main_metric": "violations",
           "direction": "lower", "reference": "h", "reference_episode_values": best,
           "episode_values": [v - 2.2 for v in best]}  # fmt: skip
    pt = zoo_point(row, oracle_pairs(rec, rep, "learned:zoo/x"))
    assert pt["learned"]["verdict"] == "better" and pt["oracle"]["verdict"] == "better"
    assert pt["learned"]["mean"] == pytest.approx(100 * 1.06 / 11)
    assert pt["oracle"]["mean"] == pytest.approx(20.0)
    for v in (pt["learned"], pt["oracle"]):
        assert 0 < v["lo"] <= v["mean"] <= v["hi"]
    # higher is better: the sign stays; an oracle on other episodes is left out
    rep["direction"] = "higher"
    rec["reference_episode_values"] = [v + 1 for v in best]
    pt = zoo_point(row, oracle_pairs(rec, rep, "learned:zoo/x"))
    assert pt["learned"]["mean"] == pytest.approx(-100 * 1.06 / 11) and pt["oracle"] is None
    # the label names the preset, and the split where an entry is judged on a named one
    assert pt["label"] == "x\nE-v0 `p`"
    assert zoo_point({**row, "split": "code-time"}, None)["label"] == "x\nE-v0 `p`, split code-time"


def test_the_zoo_stage_starts_the_policies_with_the_most_trial_rollouts_first() -> None:
    """A learned policy's work grows with its trial guard's rollouts per decision (the anchor
    and each candidate over every future, every ``every`` decisions); without one: 0."""
    from rlsched.demo import trial_rollouts
    from rlsched.zoo import card, entries

    got = {e["name"]: trial_rollouts(e) for e in entries()}
    for name, value in got.items():
        trial = card(name).get("trial")
        if not trial:
            assert value == 0.0
            continue
        rollouts = (2 + len(trial.get("thresholds") or ())) * trial["futures"] / trial["every"]
        assert value == pytest.approx(rollouts) and value > 0
    # the congested entry (4 futures every 10 decisions) before the LLM ones (every 15)
    assert got["workflow-congested-vetted"] == pytest.approx(0.8)
    assert got["workflow-congested-vetted"] > got["llm-autoscaling-slo-ppo"] > 0


def test_a_residual_entry_is_paired_with_its_heuristic_on_its_card_metrics() -> None:
    from rlsched.demo import EpisodeMetrics, residual_line
    from rlsched.zoo import card, entries

    by_name = {e["name"]: e for e in entries()}
    kw = {"scenario": "conv-3x", "episode_duration": 60.0}
    entry = by_name["llm-autoscaling-hpa-threshold-residual-ppo"]
    played = EpisodeMetrics()  # the comparison's own episodes, as the demo's zoo stage keeps them
    base = card(entry["name"])["residual"]["policy"]  # with the arguments it was trained over
    assert base == "hpa_threshold?switch_window=1"
    compare("rlsched/LLMAutoscaling-v0", None, f"{base},{entry['path']}", episodes=3,
            seed=0, env_kwargs=kw, on_episode_end=played)  # fmt: skip
    line = residual_line(entry, base, played)
    assert line is not None
    assert line.startswith(
        "over hpa_threshold?switch_window=1, the heuristic it corrects (3 pairs)"
    )
    assert "slo_attainment" in line and "; cost " in line
    assert card("llm-autoscaling-slo-ppo").get("residual") is None


def test_an_entry_that_needs_numba_is_skipped_with_a_line_where_numba_is_missing(
    monkeypatch,
) -> None:
    """The small-DAG entry's env computes PEFT's schedule with the compiled rollouts: without
    numba the zoo stage names it and goes on, and judges the rest."""
    from rich.console import Console

    from rlsched import demo
    from rlsched.envs import offloading_fast

    entries = [e for e in demo.zoo_entries() if e["name"] == small_dag_entry()]
    assert entries and demo.needs_numba(entries[0]) is not offloading_fast.available()
    monkeypatch.setattr(offloading_fast, "available", lambda: False)
    monkeypatch.setattr(demo, "zoo_entries", lambda: entries)
    console = Console(record=True, width=200)
    assert demo.zoo_stage(console, episodes=2) == []
    text = console.export_text()
    assert "skipped" in text and "rlsched[fast]" in text


def test_the_zoo_stage_plays_a_policy_two_rows_share_once_and_judges_each_row_as_compare() -> None:
    """Each row's policies are tasks; the two LLMAutoscaling entries compare on the same data,
    preset and episodes, so their heuristics are the same tasks (played once). A row built
    from its tasks' results is the row :func:`compare` gives playing them all in one env."""
    from rlsched import demo

    by_name = {e["name"]: e for e in demo.zoo_entries()}
    names = ("llm-autoscaling-slo-ppo", "llm-autoscaling-hpa-threshold-residual-ppo")
    slo, res = (demo.zoo_plan(by_name[n], 2) for n in names)
    shared = set(slo["tasks"]) & set(res["tasks"])
    assert {t.spec for t in shared} >= {"hpa", "threshold", "static_peak"}
    assert slo["tasks"][-1].spec == "learned:zoo/llm-autoscaling-slo-ppo" not in shared
    assert res["specs"][-2] == "hpa_threshold?switch_window=1"  # the residual's own heuristic
    e = by_name["vm-recovering-5-ppo"]
    plan = demo.zoo_plan(e, 2)
    assert plan["episodes"] == 10  # the card's own test episodes, more than asked
    row = demo._zoo_row(e, plan, {t: demo._zoo_task(t) for t in reversed(plan["tasks"])})
    whole = compare(e["env"], plan["card"]["dataset"], plan["specs"], episodes=10,
                    seed=demo.TEST_SEED, env_kwargs=plan["kwargs"])  # fmt: skip
    assert row["report"] == whole and row["line"].startswith(f"zoo: {e['path']}")
    assert row["seconds"] > 0


def test_compile_kernels_plays_each_policy_of_each_zoo_row_once_for_one_episode(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Set-up's ``rlsched zoo compile``: every task the zoo stage plays, with its episodes cut
    to one, each once (the LLM heuristics two rows share included); nothing else."""
    from dataclasses import replace

    from typer.testing import CliRunner

    from rlsched import demo
    from rlsched.cli import app

    played: list[demo.ZooTask] = []
    monkeypatch.setattr(demo, "_zoo_task", lambda t: played.append(t) or {})
    stage = {replace(t, episodes=1) for e in demo.staged_entries()
             for t in demo.zoo_plan(e, 10)["tasks"]}  # fmt: skip
    res = CliRunner().invoke(app, ["zoo", "compile"])
    assert res.exit_code == 0, res.output
    assert len(played) == len(set(played)) and set(played) == stage
    assert {t.episodes for t in played} == {1}
    assert "zoo kernels compiled (or loaded from the cache) in" in res.output
    # the two LLM rows on the whole code trace share it; the third plays on its split's test set
    assert sum(t.spec == "threshold" and t.dataset == "azure-llm:code" for t in played) == 1
    assert sum(t.spec == "threshold" for t in played) == 2

    played.clear()  # without numba: nothing to compile, nothing played
    monkeypatch.setattr(demo, "imported", lambda module: None)
    console = Console(record=True, width=200)
    assert demo.compile_kernels(console) is None and played == []
    assert "rlsched[fast]" in console.export_text()
