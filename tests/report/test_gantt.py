"""Gantt charts of offloading schedules."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.image import imread

from rlsched.core.offloading import patent_example, simulate
from rlsched.core.optimal import random_instance, solve
from rlsched.report.gantt import gantt, gantt_figure, gantt_from_schedule, schedule_rows


def _count(ax, gid):
    arts = [*ax.patches, *ax.texts, *ax.get_children()]
    return len({id(a) for a in arts if a.get_gid() == gid})


def test_patent_example_optimal_gantt(tmp_path):
    inst = patent_example()
    res = solve(inst, time_limit=10)
    out = gantt_from_schedule(inst, res.schedule, tmp_path / "g" / "patent.png")
    assert out.is_file() and out.stat().st_size > 10_000
    img = imread(out)
    assert img.shape[0] >= 250 and img.shape[1] >= 800
    assert np.asarray(img).std() > 0.01  # not blank

    rows = schedule_rows(inst, res.schedule)
    fig = gantt_figure(rows, servers=[s.name for s in inst.servers])
    try:
        ax = fig.axes[0]
        assert _count(ax, "task") == len(inst.tasks) == 6
        assert _count(ax, "pull") == int(res.schedule.pulled.sum())
        n_tr = sum(len(r["transfers"]) for r in rows)
        assert _count(ax, "transfer") == n_tr
        # the optimum moves data between servers: at least one transfer arrow is drawn
        assert n_tr == sum(
            inst.trans_time(p, int(res.schedule.server[p]), int(res.schedule.server[c])) > 0
            for c, t in enumerate(inst.tasks)
            for p in t.parents
        )
        assert [t.get_text() for t in ax.get_yticklabels()] == ["es1", "es2", "es3"]
        # bars span the schedule in seconds
        xs = [(p.get_x(), p.get_x() + p.get_width()) for p in ax.patches if p.get_gid() == "task"]
        assert min(a for a, _ in xs) == pytest.approx(0.0)
        # the bars end at the last finish; the makespan adds the sink output's return to the origin
        assert max(b for _, b in xs) == pytest.approx(float(res.schedule.finish.max()), abs=1e-3)
        assert res.makespan == pytest.approx(res.schedule.makespan, abs=1e-3)
    finally:
        plt.close(fig)


def test_pulls_hatched_and_concurrent_tasks_get_lanes(tmp_path):
    inst = random_instance(10, seed=3)
    sched = simulate(inst, [0] * 10)  # everything on one edge server: pulls and concurrency
    rows = schedule_rows(inst, sched)
    fig = gantt_figure(rows)
    try:
        ax = fig.axes[0]
        assert _count(ax, "task") == 10
        assert _count(ax, "pull") == int(sched.pulled.sum()) >= 1
        bars = [p for p in ax.patches if p.get_gid() == "task"]
        for i, a in enumerate(bars):  # bars in one band never overlap
            for b in bars[i + 1 :]:
                t_overlap = min(a.get_x() + a.get_width(), b.get_x() + b.get_width()) - max(
                    a.get_x(), b.get_x()
                )
                y_overlap = min(a.get_y() + a.get_height(), b.get_y() + b.get_height()) - max(
                    a.get_y(), b.get_y()
                )
                assert t_overlap <= 1e-9 or y_overlap <= 1e-9
    finally:
        plt.close(fig)


def test_env_style_rows_several_workflows(tmp_path):
    # the env logs transfers as (parent, parent_server, duration); the brief's form is
    # (from_server, start, end): both are drawn
    rows = [
        {"workflow": 0, "task": 0, "server": 0, "start": 0.0, "finish": 1.0, "pulled": True,
         "transfers": []},
        {"workflow": 0, "task": 1, "server": 1, "start": 1.5, "finish": 2.0, "pulled": False,
         "transfers": [(0, 0, 0.5)]},
        {"workflow": 1, "task": 0, "server": "cloud", "start": 0.5, "finish": 1.0,
         "pulled": False, "transfers": []},
        {"workflow": 1, "task": 1, "server": 0, "start": 2.0, "finish": 3.0, "pulled": False,
         "transfers": [("cloud", 1.0, 2.0)]},
    ]  # fmt: skip
    out = gantt(rows, tmp_path / "env.png", title="two workflows", pull_time=0.5)
    assert out.is_file()
    fig = gantt_figure(rows, servers=["es1", "es2"])
    try:
        ax = fig.axes[0]
        assert _count(ax, "task") == 4
        assert _count(ax, "pull") == 1
        assert _count(ax, "transfer") == 2
        assert [t.get_text() for t in ax.get_yticklabels()] == ["es1", "es2", "cloud"]
        arrows = [a for a in ax.texts if a.get_gid() == "transfer"]
        assert sorted(a.xy[0] for a in arrows) == [1.5, 2.0]
    finally:
        plt.close(fig)
