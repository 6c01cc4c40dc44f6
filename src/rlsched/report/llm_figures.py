"""The timeline figure of an autoscaling run (PNG, matplotlib, headless).

Three panels sharing the time axis (minutes of simulated time):

1. pool sizes: per pool the ACTIVE (solid), SCALING_UP (dashed) and DRAINING (dotted)
   instances after each decision;
2. load: the arrival rate (requests/s per ``bin_s`` bin of arrival time) and, on the right
   axis, the requests waiting in the instances' queues after each decision;
3. SLO attainment per ``bin_s`` bin of arrival time: the fraction of the requests arriving in
   the bin whose TTFT, TBT and E2E slowdowns are all within the limits (dropped or unfinished
   ones miss), with the run's overall attainment as a dotted line.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from rlsched.core.llm.slo import METRICS, slowdowns
from rlsched.report.figures import save_figure


def attained_per_request(table: Mapping[str, np.ndarray], slo: Any) -> np.ndarray:
    """Per request of :meth:`LLMSimulator.request_table`: within the SLO at its attainment
    level (unfinished and dropped requests: False)."""
    arr = table["arrival"]
    ttft = table["first_token"] - arr
    e2e = table["finish"] - arr
    o = table["output_tokens"].astype(float)
    with np.errstate(invalid="ignore"):
        tbt = np.where(o > 1, (e2e - ttft) / np.maximum(o - 1, 1), 0.0)
    measured = {"ttft": ttft, "tbt": tbt, "e2e": e2e}
    sd = slowdowns(measured, {m: table[f"unloaded_{m}"] for m in METRICS})
    done = table["status"] == 1
    return slo.attained(sd) & done


def autoscaling_figure(
    history: Sequence[Mapping[str, Any]],
    table: Mapping[str, np.ndarray],
    slo: Any,
    out: str | Path,
    title: str | None = None,
    bin_s: float = 60.0,
) -> Path:
    """Draw the three panels (module docstring) from an env's per-decision ``history``, the
    simulator's ``request_table()`` and its SLO config; write ``out`` (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt


    fig, axes = plt.subplots(3, 1, figsize=(10, 8.5), sharex=True)
    t = np.array([h["time"] for h in history], dtype=float) / 60.0
    pools = list(history[0]["pools"]) if history else []
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    ax = axes[0]
    for k, tag in enumerate(pools):
        c = colors[k % len(colors)]
        for state, style in (("active", "-"), ("scaling_up", "--"), ("draining", ":")):
            y = [h["pools"][tag][state] for h in history]
            if state != "active" and not any(y):
                continue
            ax.step(
                t,
                y,
                where="post",
                color=c,
                linestyle=style,
                linewidth=2.6 - 1.2 * min(k, 1),
                label=f"{tag} {state}",
            )
    ax.set_ylabel("instances")
    ax.legend(loc="upper left", fontsize=8, ncol=3)
    ax.grid(alpha=0.3)

    arrival = np.asarray(table["arrival"], dtype=float)
    end = max(float(arrival.max()) if len(arrival) else 0.0, t[-1] * 60.0 if len(t) else 0.0)
    edges = np.arange(0.0, end + bin_s, bin_s)
    if len(edges) < 2:
        edges = np.array([0.0, bin_s])
    mid = (edges[:-1] + edges[1:]) / 2 / 60.0
    counts, _ = np.histogram(arrival, edges)
    ax = axes[1]
    width = np.maximum(np.minimum(edges[1:], max(end, 1e-9)) - edges[:-1], 1e-9)
    ax.plot(mid, counts / width, color=colors[0], label="arrival rate")
    ax.set_ylabel("requests / s")
    ax.grid(alpha=0.3)
    ax2 = ax.twinx()
    ax2.plot(t, [h["queue"] for h in history], color=colors[3 % len(colors)], alpha=0.7)
    ax2.set_ylabel("queued requests", color=colors[3 % len(colors)])
    ax.legend(loc="upper left", fontsize=8)

    ok = attained_per_request(table, slo)
    hit, _ = np.histogram(arrival[ok], edges)
    with np.errstate(invalid="ignore", divide="ignore"):
        frac = np.where(counts > 0, hit / np.maximum(counts, 1), np.nan)
    ax = axes[2]
    ax.plot(mid, frac, marker=".", color=colors[2 % len(colors)], label=f"per {bin_s:g} s")
    if len(ok):
        ax.axhline(float(ok.mean()), color="grey", linestyle=":", label="overall")
    ax.set_ylim(-0.02, 1.02)
    ax.set_ylabel(f"SLO attainment (P{slo.attainment_level:g} limits)")
    ax.set_xlabel("time (min)")
    ax.legend(loc="lower left", fontsize=8)
    ax.grid(alpha=0.3)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return save_figure(fig, out)
