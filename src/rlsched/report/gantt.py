"""Gantt charts of workflow-offloading schedules (PNG, headless).

One horizontal band per server; a server running tasks concurrently (as its cpu and mem allow)
gets one lane per concurrent task inside its band. Each task is a labelled bar coloured by
workflow (several workflows) or image (one workflow); an image pull is a hatched segment at the
start of the bar; a data transfer is a thin arrow from the sending server's band to the receiving
task, from when the parent finished to when the data arrived.

Bars carry matplotlib ``gid`` s (``"task"``, ``"pull"``, ``"transfer"``) so tests can count them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import gymnasium as gym
import matplotlib.pyplot as plt
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from rlsched.core.offloading import OffloadInstance, Schedule
from rlsched.evaluate import EpisodeHook, safe_filename
from rlsched.report.figures import save_figure

__all__ = ["gantt", "gantt_figure", "gantt_from_schedule", "schedule_rows"]

_BAR = 0.8  # fraction of a lane a bar fills


def schedule_rows(
    inst: OffloadInstance, schedule: Schedule, workflow: int | str = 0
) -> list[dict[str, Any]]:
    """The rows :func:`gantt` draws for a static schedule (the env's ``schedule_log`` layout;
    transfers as ``(from_server, start, end)``, only those that take time)."""
    rows = []
    for t, task in enumerate(inst.tasks):
        s = int(schedule.server[t])
        transfers = []
        for p in task.parents:
            sp = int(schedule.server[p])
            dur = inst.trans_time(p, sp, s)
            if dur > 0:
                f = float(schedule.finish[p])
                transfers.append((sp, f, f + dur))
        rows.append(
            {
                "workflow": workflow,
                "task": t,
                "name": task.name,
                "image": task.image,
                "server": s,
                "start": float(schedule.start[t]),
                "finish": float(schedule.finish[t]),
                "pulled": bool(schedule.pulled[t]),
                "pull_time": float(inst.pull_time),
                "transfers": transfers,
            }
        )
    return rows


def gantt_from_schedule(
    inst: OffloadInstance, schedule: Schedule, out_png: str | Path, title: str = ""
) -> Path:
    """Draw a static instance's schedule; servers named as in ``inst``."""
    return gantt(
        schedule_rows(inst, schedule),
        out_png,
        title=title or inst.name,
        servers=[s.name for s in inst.servers],
    )


def _transfers(
    row: Mapping[str, Any], by_task: Mapping[tuple[Any, int], Mapping[str, Any]]
) -> list[tuple[Any, float, float]]:
    """``(from_server, start, end)`` of a row's transfers.

    Accepts ``(from_server, start, end)`` tuples, dicts with those keys, and the env's
    ``(parent, parent_server, duration)`` tuples (recognised when ``parent`` is a logged task of
    the same workflow placed on ``parent_server``; the transfer then starts at its finish).
    """
    out = []
    for tr in row.get("transfers") or ():
        if isinstance(tr, Mapping):
            a, b, c = tr["from_server"], float(tr["start"]), float(tr["end"])
        else:
            a, b, c = tr
            parent = by_task.get((row.get("workflow"), a)) if isinstance(a, int) else None
            if parent is not None and parent["server"] == b:
                a, b, c = b, float(parent["finish"]), float(parent["finish"]) + float(c)
        if float(c) > float(b) and a != row["server"]:
            out.append((a, float(b), float(c)))
    return out


def _lanes(rows: Sequence[Mapping[str, Any]]) -> tuple[list[int], int]:
    """Greedy interval colouring: a lane per row so that bars on one lane never overlap."""
    ends: list[float] = []
    lane = [0] * len(rows)
    for i in sorted(range(len(rows)), key=lambda i: (rows[i]["start"], rows[i]["finish"])):
        for k, e in enumerate(ends):
            if e <= rows[i]["start"] + 1e-12:
                lane[i], ends[k] = k, rows[i]["finish"]
                break
        else:
            lane[i] = len(ends)
            ends.append(rows[i]["finish"])
    return lane, max(len(ends), 1)


def gantt(
    schedule_rows: Sequence[Mapping[str, Any]],
    out_png: str | Path,
    title: str = "",
    servers: Sequence[str] | None = None,
    pull_time: float | None = None,
) -> Path:
    """Draw rows ``{"workflow", "task", "server", "start", "finish", "pulled", "transfers"}``
    (optional ``"name"``, ``"image"``, ``"pull_time"``) to ``out_png``; returns the path.

    ``server`` is an index into ``servers`` (names) or a name itself. A pulled task's first
    ``pull_time`` seconds are hatched (the whole bar when the pull time is unknown).
    """
    fig = gantt_figure(schedule_rows, title=title, servers=servers, pull_time=pull_time)
    return save_figure(fig, out_png, dpi=fig.dpi)


def gantt_figure(
    schedule_rows: Sequence[Mapping[str, Any]],
    title: str = "",
    servers: Sequence[str] | None = None,
    pull_time: float | None = None,
) -> Figure:
    """The figure :func:`gantt` saves (the caller closes it)."""
    rows = list(schedule_rows)

    def label(s: Any) -> str:
        if servers is not None and isinstance(s, int) and 0 <= s < len(servers):
            return servers[s]
        return str(s)

    names = list(servers) if servers is not None else []
    for r in rows:
        if label(r["server"]) not in names:
            names.append(label(r["server"]))
    workflows = sorted({r.get("workflow", 0) for r in rows}, key=str)
    by_image = len(workflows) <= 1
    keys = sorted({str(r.get("image", "")) if by_image else str(r["workflow"]) for r in rows})
    cmap = plt.get_cmap("tab20" if len(keys) > 10 else "tab10")
    colour = {k: cmap(i % cmap.N) for i, k in enumerate(keys)}

    # band geometry: server i occupies [base_i, base_i + 1), split into lanes
    base = {n: float(len(names) - 1 - i) for i, n in enumerate(names)}
    per_server: dict[str, list[int]] = {n: [] for n in names}
    for i, r in enumerate(rows):
        per_server[label(r["server"])].append(i)
    y0 = [0.0] * len(rows)
    height = [1.0] * len(rows)
    for n, idx in per_server.items():
        lane, k = _lanes([rows[i] for i in idx])
        for i, ln in zip(idx, lane, strict=True):
            height[i] = 1.0 / k
            y0[i] = base[n] + (k - 1 - ln) / k + (1 - _BAR) / (2 * k)

    t_min = min((r["start"] for r in rows), default=0.0)
    t_max = max((r["finish"] for r in rows), default=1.0)
    fig_h = max(2.5, 0.9 * len(names) + 1.5)
    fig, ax = plt.subplots(figsize=(10, fig_h), dpi=110)
    by_task = {(r.get("workflow"), r["task"]): r for r in rows}
    for i, r in enumerate(rows):
        h = height[i] * _BAR
        c = colour[str(r.get("image", "")) if by_image else str(r["workflow"])]
        dur = r["finish"] - r["start"]
        ax.barh(
            y0[i], dur, left=r["start"], height=h, align="edge", color=c, edgecolor="black",
            linewidth=0.6, gid="task",
        )  # fmt: skip
        if r.get("pulled"):
            pt = r.get("pull_time", pull_time)
            pw = dur if pt is None else min(float(pt), dur)
            ax.barh(
                y0[i], pw, left=r["start"], height=h, align="edge", fill=False, hatch="///",
                edgecolor="dimgray", linewidth=0.0, gid="pull",
            )  # fmt: skip
        text = str(r.get("name", r["task"]))
        if len(workflows) > 1:
            text = f"{r['workflow']}:{text}"
        ax.text(
            r["start"] + dur / 2, y0[i] + h / 2, text, ha="center", va="center",
            fontsize=7 if height[i] > 0.3 else 5, clip_on=True,
        )  # fmt: skip
        for src, ts, te in _transfers(r, by_task):
            ys = base.get(label(src), base[label(r["server"])]) + 0.5
            ann = ax.annotate(
                "", xy=(te, y0[i] + h / 2), xytext=(ts, ys),
                arrowprops={"arrowstyle": "->", "color": "crimson", "lw": 0.8, "alpha": 0.8},
            )  # fmt: skip
            ann.set_gid("transfer")

    ax.set_yticks([base[n] + 0.5 for n in names], names)
    ax.set_ylim(-0.1, len(names) + 0.1)
    for n in names:
        ax.axhline(base[n], color="lightgray", lw=0.6, zorder=0)
    span = max(t_max - t_min, 1e-9)
    ax.set_xlim(min(t_min, 0.0) if t_min >= 0 else t_min, t_max + 0.02 * span)
    ax.set_xlabel("time (s)")
    ax.grid(axis="x", alpha=0.3)
    handles = [Patch(facecolor=colour[k], edgecolor="black", label=k or "?") for k in keys]
    handles.append(Patch(facecolor="white", edgecolor="dimgray", hatch="///", label="image pull"))
    handles.append(Patch(facecolor="crimson", label="transfer"))
    ax.legend(
        handles=handles, title="image" if by_image else "workflow", loc="upper left",
        bbox_to_anchor=(1.01, 1.0), fontsize=8, title_fontsize=8,
    )  # fmt: skip
    mk = t_max - t_min
    ax.set_title(f"{title}  (makespan {mk:.3f} s)" if title else f"makespan {mk:.3f} s")
    fig.tight_layout()
    return fig


def has_schedule_log(env: gym.Env) -> bool:
    return callable(getattr(env.unwrapped, "schedule_log", None))


def gantt_hook(
    out_dir: str | Path,
    episode: int = 0,
    written: list[Path] | None = None,
    notify: Callable[[str], None] | None = None,
) -> EpisodeHook:
    """An ``on_episode_end`` hook writing ``out_dir/<policy>.png``, the Gantt chart of episode
    ``episode`` (the first by default) of each policy, from the env's ``schedule_log()``.
    For an env without ``schedule_log`` nothing is drawn and ``notify`` (if given) is called
    once with a one-line message. The paths written are appended to ``written`` if given."""
    out = Path(out_dir)
    told: list[bool] = []

    def hook(policy_name: str, k: int, env: gym.Env) -> None:
        if k != episode:
            return
        if not has_schedule_log(env):
            if notify is not None and not told:
                told.append(True)
                env_id = env.spec.id if env.spec is not None else type(env.unwrapped).__name__
                notify(f"Gantt charts are not available for {env_id} (no schedule_log); skipped")
            return
        base: Any = env.unwrapped  # an env with schedule_log()
        servers = [s.name for s in base.servers] if hasattr(base, "servers") else None
        path = gantt(
            base.schedule_log(),
            out / f"{safe_filename(policy_name)}.png",
            title=f"{policy_name}: episode {k + 1}",
            servers=servers,
            pull_time=getattr(base, "pull_time", None),
        )
        if written is not None:
            written.append(path)

    return hook
