"""Leaderboard tables from a ``compare`` report, for the terminal (rich) and Markdown."""

from __future__ import annotations

from typing import Any

from rich.table import Table

#: How each metric is labelled, and whether lower is better.
METRIC_LABELS: dict[str, tuple[str, bool]] = {
    "cost": ("cost $", True),
    "mean_rfrt": ("mean RFRT", True),
    "p95_rfrt": ("p95 RFRT", True),
    "slo_violation_pct": ("SLO viol. %", True),
    "cold_start_pct": ("cold starts %", True),
    "invalid_actions": ("invalid", True),
}


def leaderboard_metrics(report: dict[str, Any]) -> list[str]:
    """The env's own leaderboard metrics, else every metric the results share."""
    try:
        import gymnasium as gym

        import rlsched  # noqa: F401

        spec = gym.spec(report["env"])
        from importlib import import_module

        mod, cls = str(spec.entry_point).split(":")
        wanted = list(getattr(getattr(import_module(mod), cls), "leaderboard_metrics", ()))
    except Exception:  # an env this process cannot import still gets a table
        wanted = []
    have = set(report["results"][0]["metrics"]) if report["results"] else set()
    return [m for m in wanted if m in have] or sorted(have)


def _fmt(x: float) -> str:
    if x != x:  # NaN
        return "-"
    a = abs(x)
    return f"{x:.4f}" if a < 10 else f"{x:.2f}" if a < 1000 else f"{x:.0f}"


def ranked(report: dict[str, Any]) -> list[dict[str, Any]]:
    return sorted(report["results"], key=lambda r: -r["mean_reward"])


def rich_table(report: dict[str, Any], title: str | None = None) -> Table:
    metrics = leaderboard_metrics(report)
    t = Table(title=title or f"{report['env']} on {report['dataset']}", show_lines=False)
    t.add_column("#", justify="right")
    t.add_column("policy", no_wrap=True)
    t.add_column("reward (mean ± std)", justify="right")
    for m in metrics:
        t.add_column(METRIC_LABELS.get(m, (m, True))[0], justify="right")
    for k, r in enumerate(ranked(report), 1):
        t.add_row(
            str(k),
            r["policy"],
            f"{r['mean_reward']:.3f} ± {r['std_reward']:.3f}",
            *(_fmt(r["metrics"].get(m, float("nan"))) for m in metrics),
        )
    return t


def markdown_table(report: dict[str, Any]) -> str:
    metrics = leaderboard_metrics(report)
    head = ["#", "policy", "reward (mean ± std)"] + [
        METRIC_LABELS.get(m, (m, True))[0] for m in metrics
    ]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for k, r in enumerate(ranked(report), 1):
        cells = [str(k), r["policy"], f"{r['mean_reward']:.3f} ± {r['std_reward']:.3f}"]
        cells += [_fmt(r["metrics"].get(m, float("nan"))) for m in metrics]
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)
