"""Matplotlib figures: learning curves and policy comparison bars (PNG, headless)."""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from rlsched.report.leaderboard import leaderboard_metrics, metric_label, ranked


def save_figure(fig: Any, out: str | Path, dpi: float = 120) -> Path:
    """Write ``fig`` as a PNG (creating the folder) and free it; returns the path."""
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    return path


def read_monitor(run_dir: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """Training episodes of a run, in time order: (cumulative env steps, episode reward)."""
    rows: list[tuple[float, float, float]] = []
    for f in sorted(Path(run_dir, "monitor").glob("*.monitor.csv")):
        with f.open() as fh:
            fh.readline()  # the JSON header line SB3's Monitor writes
            for r in csv.DictReader(fh):
                rows.append((float(r["t"]), float(r["r"]), float(r["l"])))
    if not rows:
        return np.zeros(0), np.zeros(0)
    rows.sort()
    arr = np.array(rows)
    return np.cumsum(arr[:, 2]), arr[:, 1]


def read_evaluations(run_dir: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """Periodic evaluation of a run: (timesteps, mean reward per evaluation)."""
    f = Path(run_dir, "eval", "evaluations.npz")
    if not f.is_file():
        return np.zeros(0), np.zeros(0)
    d = np.load(f)
    return d["timesteps"], d["results"].mean(axis=1)


def _smooth(y: np.ndarray, k: int) -> np.ndarray:
    if len(y) < k or k <= 1:
        return y
    return np.convolve(y, np.ones(k) / k, mode="valid")


def learning_curve(
    run_dirs: Sequence[str | Path],
    out: str | Path,
    references: dict[str, float] | None = None,
    title: str = "Learning curve",
) -> Path:
    """Training and evaluation reward against env steps, mean ± std over runs (seeds).

    ``references`` draws horizontal lines (e.g. heuristics' evaluation reward).
    """
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    grid = None
    train_curves, eval_curves = [], []
    for run in run_dirs:
        x, y = read_monitor(run)
        if len(x):
            k = max(1, len(y) // 30)
            xs, ys = x[k - 1 :] if k > 1 else x, _smooth(y, k)
            grid = np.linspace(xs[0], xs[-1], 100) if grid is None else grid
            train_curves.append(np.interp(grid, xs, ys))
        ex, ey = read_evaluations(run)
        if len(ex):
            eval_curves.append((ex, ey))
    if train_curves and grid is not None:
        m, s = np.mean(train_curves, axis=0), np.std(train_curves, axis=0)
        ax.plot(grid, m, label=f"training episodes (mean of {len(train_curves)} runs)")
        ax.fill_between(grid, m - s, m + s, alpha=0.25)
    if eval_curves:
        n = min(len(e[0]) for e in eval_curves)
        ex = eval_curves[0][0][:n]
        ey = np.array([e[1][:n] for e in eval_curves])
        ax.errorbar(
            ex,
            ey.mean(axis=0),
            yerr=ey.std(axis=0),
            marker="o",
            ms=3,
            capsize=3,
            label="held-out evaluation",
        )
    for k, (name, val) in enumerate(sorted((references or {}).items(), key=lambda kv: -kv[1])):
        ax.axhline(val, ls="--", lw=1, color=f"C{(k + 2) % 10}", label=name)
    ax.set_xlabel("env steps")
    ax.set_ylabel("episode reward")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    return save_figure(fig, out)


def comparison_bars(
    report: dict[str, Any],
    out: str | Path,
    metrics: Sequence[str] | None = None,
    highlight: str | None = None,
) -> Path:
    """Mean episode reward and key metrics per policy, with std error bars."""
    rows = ranked(report)
    metrics = list(metrics) if metrics is not None else leaderboard_metrics(report)[:3]
    panels = [("mean_reward", "episode reward")] + [
        (m, metric_label(m, report["env"])) for m in metrics
    ]
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 0.35 * len(rows) + 1.8))
    axes = np.atleast_1d(axes)
    names = [r["policy"].replace("learned:", "") for r in rows]
    y = np.arange(len(rows))
    for ax, (key, label) in zip(axes, panels, strict=True):
        if key == "mean_reward":
            vals = [r["mean_reward"] for r in rows]
            errs = [r["std_reward"] for r in rows]
        else:
            vals = [r["metrics"].get(key, np.nan) for r in rows]
            errs = [r.get("metrics_std", {}).get(key, 0.0) for r in rows]
        colors = ["C3" if (highlight and highlight in r["policy"]) else "C0" for r in rows]
        ax.barh(y, vals, xerr=errs, color=colors, capsize=3)
        ax.set_yticks(y, names if ax is axes[0] else [""] * len(y), fontsize=8)
        ax.invert_yaxis()
        ax.set_title(label, fontsize=9)
        ax.grid(axis="x", alpha=0.3)
    fig.suptitle(
        f"{report['env']} on {report['dataset']} ({report.get('episodes', '?')} episodes)",
        fontsize=9,
    )
    fig.tight_layout()
    return save_figure(fig, out)


#: marker colour of a paired verdict
VERDICT_COLORS = {"better": "C2", "worse": "C3", "no significant difference": "0.45"}


def zoo_forest(points: Sequence[dict[str, Any]], out: str | Path, title: str = "") -> Path:
    """A forest plot of shipped policies, one row each: the policy's paired difference from
    the best heuristic measured on its test episodes, and that of the oracle recorded in its
    card on the same episodes (its headroom: the clairvoyant oracle, or CP-SAT's optimum), as
    percent of that heuristic's mean with their 95% intervals, signed so that right of zero is
    better than the heuristic. Each point is
    ``{"label", "reference", "metric", "learned", "oracle"}``, the last two ``{"mean", "lo",
    "hi", "verdict"}`` or None (:func:`rlsched.demo.zoo_point`). A marker's colour is its
    verdict: green better, red worse, grey no significant difference."""
    fig, ax = plt.subplots(figsize=(9.5, 0.62 * len(points) + 1.8))
    y = np.arange(len(points), dtype=float)
    for i, pt in enumerate(points):
        for key, dy, marker in (("learned", -0.12, "o"), ("oracle", 0.16, "D")):
            v = pt.get(key)
            if not v:
                continue
            color = VERDICT_COLORS.get(v["verdict"], "0.45")
            err = [[v["mean"] - v["lo"]], [v["hi"] - v["mean"]]]
            ax.errorbar(v["mean"], y[i] + dy, xerr=err, fmt=marker, color=color,
                        mfc=color if key == "learned" else "white", capsize=3, ms=6)  # fmt: skip
    labels = [f"{p['label']}\nvs {p['reference']} ({p['metric']})" for p in points]
    ax.set_yticks(y, labels, fontsize=7)
    ax.invert_yaxis()
    ax.axvline(0.0, color="k", lw=0.8)
    ax.set_xlabel("difference from the best heuristic, % of its mean (right: better)")
    ax.grid(axis="x", alpha=0.3)
    handles = [
        plt.Line2D([], [], marker="o", ls="", color="0.3", label="shipped policy"),
        plt.Line2D([], [], marker="D", ls="", color="0.3", mfc="white",
                   label="the card's oracle (headroom)"),
        *(plt.Line2D([], [], marker="s", ls="", color=c, label=v)
          for v, c in VERDICT_COLORS.items()),
    ]  # fmt: skip
    # below the axes: inside, it would cover a row's interval
    ax.legend(handles=handles, fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.1),
              ncol=5, frameon=False)  # fmt: skip
    ax.set_title(title or "Shipped policies on held-out test data (paired 95% intervals)",
                 fontsize=9)  # fmt: skip
    fig.tight_layout()
    return save_figure(fig, out)
