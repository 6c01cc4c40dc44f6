"""``rlsched.agreement``: whether an env's reward orders the heuristics as its main metric."""

import math

from rlsched.agreement import reward_agreement


def _row(name: str, reward: float, values: list[float], kind: str = "heuristic") -> dict:
    return {"policy": name, "kind": kind, "mean_reward": reward, "episode_values": values}


def _report(metric: str, direction: str, rows: list[dict]) -> dict:
    return {"main_metric": metric, "direction": direction, "results": rows}


def test_opposite_orders_are_found_and_named() -> None:
    # lower completion is better; the reward prefers c, the metric prefers a
    rep = _report("mean_completion", "lower", [
        _row("a", 1.0, [10.0, 10.0]), _row("b", 2.0, [20.0, 20.0]), _row("c", 3.0, [30.0, 30.0]),
        _row("learned", 9.0, [1.0, 1.0], kind="learned"),  # only heuristics are ranked
    ])
    a = reward_agreement(rep)
    assert a["tau"] == -1.0 and not a["same_best"]
    assert a["best_by_reward"] == "c" and a["best_by_metric"] == "a"
    assert sorted(a["discordant"]) == [("b", "a"), ("c", "a"), ("c", "b")]


def test_same_orders_agree_and_the_reward_as_metric_is_trivially_consistent() -> None:
    rows = [_row("a", 3.0, [0.9, 0.9]), _row("b", 2.0, [0.8, 0.7]), _row("c", 1.0, [0.1, 0.2])]
    a = reward_agreement(_report("slo_attainment", "higher", rows))
    assert a["tau"] == 1.0 and a["same_best"] and a["discordant"] == []
    assert reward_agreement(_report("reward", "higher", rows))["tau"] == 1.0
    assert math.isnan(reward_agreement(_report("x", "higher", rows[:2]))["tau"])
