"""A self-contained HTML leaderboard page: tables and bar charts (base64 PNG) in one file.

No external resources (no scripts, fonts, stylesheets or image files): the page opens offline
and can be mailed or attached to a CI run as it is.
"""

from __future__ import annotations

import base64
import html
import io
from collections.abc import Sequence
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from rlsched.report.leaderboard import (
    SAMPLE_UNIT,
    metric_label,
    score_note,
    sweep_header,
    sweep_row_cells,
)

#: Panels per chart: the main metric, reward, and the next leaderboard metrics up to this many.
MAX_PANELS = 4

_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto;
       max-width: 72rem; padding: 0 1rem; color: #222; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.15rem; margin-top: 2.5rem; }
p.note { color: #555; font-size: .9rem; }
table { border-collapse: collapse; margin: .5rem 0 1rem; font-size: .85rem; }
th, td { border-bottom: 1px solid #ddd; padding: .3rem .6rem; text-align: right;
         white-space: nowrap; }
th { background: #f4f4f4; } td.policy, th.policy { text-align: left; }
tr.reference td { background: #fff7e0; }
img { max-width: 100%; height: auto; display: block; }
"""


def png_base64(fig: Any, dpi: int = 100) -> str:
    """``fig`` as a base64 PNG (and closed)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def ci_bars(table: dict[str, Any]) -> Any:
    """One horizontal bar chart per metric (main metric first), bars at the mean, error bars at
    the 95% confidence interval; the reference policy in orange, learned policies in red."""
    rows = table["rows"]
    metrics = table["metrics"][:MAX_PANELS]
    fig, axes = plt.subplots(
        1, len(metrics), figsize=(3.6 * len(metrics), 0.32 * len(rows) + 1.6), squeeze=False
    )
    names = [r["policy"] for r in rows]
    y = np.arange(len(rows))
    colors = [
        "C1" if r["policy"] == table["reference"] else "C3" if r["kind"] == "learned" else "C0"
        for r in rows
    ]
    for k, (ax, m) in enumerate(zip(axes[0], metrics, strict=True)):
        vals = np.array([r["stats"][m]["mean"] for r in rows], dtype=float)
        errs = np.array([r["stats"][m]["ci95"] for r in rows], dtype=float)
        xerr = None if np.isnan(errs).all() else np.where(np.isnan(errs), 0.0, errs)
        ax.barh(y, np.nan_to_num(vals), xerr=xerr, color=colors, capsize=3)
        ax.set_yticks(y, names if k == 0 else [""] * len(y), fontsize=8)
        ax.invert_yaxis()
        d = table["directions"].get(m)
        label = metric_label(m, table["env"])
        ax.set_title(label + (f" ({d} is better)" if d else ""), fontsize=9)
        ax.grid(axis="x", alpha=0.3)
        ax.tick_params(axis="x", labelsize=8)
    fig.suptitle(table["title"], fontsize=9)
    fig.tight_layout()
    return fig


def sweep_html(tables: Sequence[dict[str, Any]], title: str = "Leaderboard") -> str:
    """The whole page: the method, then per env setting a note, the table and the chart."""
    e = html.escape
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{e(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{e(title)}</h1>",
        '<p class="note">Each cell: mean ± half-width of a 95% confidence interval (Student\'s '
        f"t, n − 1 degrees of freedom) over trials; the sample unit is a {e(SAMPLE_UNIT)}. "
        "One seed: the mean alone. Rows best first on the main metric. Charts: bars at the "
        "mean, error bars at the same intervals; the reference policy in orange, learned "
        "policies in red, heuristics in blue.</p>",
    ]
    for i, t in enumerate(tables):
        tid = f"table-{i}"
        parts.append(f'<h2 id="{tid}">{e(t["title"])}</h2>')
        parts.append(f'<p class="note">{e(score_note(t))}</p>')
        head = sweep_header(t)
        parts.append(f'<table data-env="{e(t["env"])}"><thead><tr>')
        parts += [f"<th{' class=policy' if k == 1 else ''}>{e(h)}</th>" for k, h in enumerate(head)]
        parts.append("</tr></thead><tbody>")
        for row in t["rows"]:
            ref = ' class="reference"' if row["policy"] == t["reference"] else ""
            parts.append(f'<tr{ref} data-policy="{e(row["policy"])}">')
            for k, c in enumerate(sweep_row_cells(t, row)):
                parts.append(f"<td{' class=policy' if k == 1 else ''}>{e(c)}</td>")
            parts.append("</tr>")
        parts.append("</tbody></table>")
        img = png_base64(ci_bars(t))
        labels = [metric_label(m, t["env"]) for m in t["metrics"][:MAX_PANELS]]
        alt = f"bar charts of {', '.join(labels)}"
        parts.append(f'<img alt="{e(alt)}" src="data:image/png;base64,{img}">')
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
