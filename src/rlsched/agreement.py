"""Does an env's reward rank policies the way its main metric does?

A learned policy maximises the reward; operators judge it on the main metric
(:func:`rlsched.envs.base.main_metric_of`), and every verdict is read on the main metric. Where
the two order the heuristics differently, a policy that gets better at its reward may get worse
at what it is judged on. :func:`reward_agreement` measures it on one compare report: Kendall's
tau between the two orders of the report's heuristics, whether both name the same best
heuristic, and the pairs they order oppositely.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scipy.stats import kendalltau

from rlsched.report.leaderboard import main_mean


def reward_agreement(report: Mapping[str, Any]) -> dict[str, Any]:
    """``{"metric", "tau", "same_best", "best_by_reward", "best_by_metric", "discordant"}`` over
    the heuristics of a :func:`rlsched.evaluate.compare` report (``tau`` is 1.0 when the main
    metric is the reward itself; NaN when fewer than 3 heuristics ran)."""
    heur = [r for r in report["results"] if r.get("kind") == "heuristic"]
    metric = report["main_metric"]
    sign = 1.0 if report["direction"] == "higher" else -1.0
    by_metric = {r["policy"]: sign * main_mean(r) for r in heur}  # larger: better
    by_reward = {r["policy"]: float(r["mean_reward"]) for r in heur}
    names = list(by_metric)
    discordant = [
        (a, b)
        for i, a in enumerate(names)
        for b in names[i + 1 :]
        if (by_metric[a] - by_metric[b]) * (by_reward[a] - by_reward[b]) < 0
    ]
    if metric == "reward":
        tau = 1.0
    elif len(names) < 3:
        tau = float("nan")
    else:
        tau = float(kendalltau([by_metric[n] for n in names], [by_reward[n] for n in names])[0])
    best_m = max(names, key=by_metric.__getitem__) if names else None
    best_r = max(names, key=by_reward.__getitem__) if names else None
    return {
        "metric": metric,
        "tau": tau,
        "same_best": best_m == best_r,
        "best_by_reward": best_r,
        "best_by_metric": best_m,
        "discordant": [
            # reward prefers the first of each pair, the main metric the second
            (a, b) if by_reward[a] > by_reward[b] else (b, a)
            for a, b in discordant
        ],
    }
