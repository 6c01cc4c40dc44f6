"""Does the decision matter in a setting? The two spreads of one compare report.

(a) *spread*: the best heuristic against the env's simplest baseline (the best of
:data:`rlsched.scenarios.SIMPLEST` measured in the report): does a sensible policy beat a
trivial one? (b) *headroom*: the clairvoyant oracle against the best heuristic: is there
anything left to learn? Both are paired 95% intervals (:mod:`rlsched.stats`) on the env's main
metric. A setting is *informative* when (a) is significant and at least
:data:`MIN_SPREAD_PCT` and (b) significant and at least :data:`MIN_HEADROOM_PCT`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rlsched.report.leaderboard import main_mean
from rlsched.scenarios import SIMPLEST, class_name
from rlsched.stats import paired

MIN_SPREAD_PCT = 3.0
MIN_HEADROOM_PCT = 2.0


def gain_pct(p: Mapping[str, Any] | None, direction: str) -> float:
    """A paired percentage turned into an improvement (positive: better), either direction."""
    if not p:
        return float("nan")
    pct = float(p["pct_diff"])
    return pct if direction == "higher" else -pct


def spreads(report: Mapping[str, Any]) -> dict[str, Any]:
    """``{"baseline", "spread", "headroom", "informative"}`` of a :func:`rlsched.evaluate.
    compare` report that ran the env's simplest baselines, its heuristics and ``clairvoyant``.
    ``spread`` / ``headroom``: a paired comparison's JSON plus ``gain_pct`` (improvement in
    percent of the worse policy's mean, positive when better); None when a policy is missing."""
    rows = {r["policy"]: r for r in report["results"]}
    direction = report["direction"]
    sign = 1.0 if direction == "higher" else -1.0
    ref = rows.get(report.get("reference") or "")
    simple = [rows[n] for n in SIMPLEST.get(class_name(report["env"]), ()) if n in rows]
    base = max(simple, key=lambda r: sign * main_mean(r)) if simple else None
    spread = None
    if ref is not None and base is not None and len(ref["episode_values"]) >= 2:
        p = paired(
            ref["episode_values"], base["episode_values"], direction=direction,
            reference=base["policy"], metric=report["main_metric"],
        ).to_json()
        spread = {**p, "policy": ref["policy"], "gain_pct": gain_pct(p, direction)}
    orc = rows.get("clairvoyant")
    headroom = None
    if orc is not None and orc.get("paired"):
        p = dict(orc["paired"])
        headroom = {**p, "policy": "clairvoyant", "gain_pct": gain_pct(p, direction)}
    informative = bool(
        spread and headroom
        and spread["verdict"] == "better" and spread["gain_pct"] >= MIN_SPREAD_PCT
        and headroom["verdict"] == "better" and headroom["gain_pct"] >= MIN_HEADROOM_PCT
    )
    return {
        "baseline": None if base is None else {"policy": base["policy"], "mean": main_mean(base)},
        "spread": spread,
        "headroom": headroom,
        "informative": informative,
    }
