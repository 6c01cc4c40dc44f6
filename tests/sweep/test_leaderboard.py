"""Leaderboard statistics: Student's t intervals over per-seed means, the normalised score and
its direction, one table per env setting."""

from __future__ import annotations

import math
from typing import Any

import pytest

from rlsched.envs import ENV_IDS
from rlsched.envs.args import env_class
from rlsched.report.leaderboard import (
    mean_ci95,
    metric_direction,
    sweep_csv,
    sweep_markdown,
    sweep_tables,
    t_quantile,
)


def _r(policy: str, seed: int, reward: float, env: str = "rlsched/ServerlessPlacement-v0",
       **metrics: float) -> dict[str, Any]:  # fmt: skip
    return {
        "trial_id": f"{policy}-{seed}",
        "env": env,
        "dataset": "d",
        "env_kwargs": {},
        "policy": policy,
        "kind": "heuristic",
        "seed": seed,
        "episodes": 3,
        "mean_reward": reward,
        "metrics": metrics,
    }


def test_t_quantile_matches_tables() -> None:
    # two-sided 95% critical values of Student's t (any statistics textbook)
    for df, t in {1: 12.7062, 2: 4.3027, 3: 3.1824, 4: 2.7764, 9: 2.2622, 30: 2.0423}.items():
        assert t_quantile(0.975, df) == pytest.approx(t, abs=1e-4)
    stats = pytest.importorskip("scipy.stats")
    for df in (1, 2, 5, 17, 100):
        for p in (0.9, 0.975, 0.995, 0.025):
            assert t_quantile(p, df) == pytest.approx(stats.t.ppf(p, df), rel=1e-9)


def test_mean_ci95_over_seeds() -> None:
    s = mean_ci95([1.0, 2.0, 3.0])
    assert s["n"] == 3 and s["mean"] == 2.0 and s["std"] == 1.0
    assert s["ci95"] == pytest.approx(4.302652729749464 / math.sqrt(3))
    assert s["low"] == pytest.approx(2 - s["ci95"]) and s["high"] == pytest.approx(2 + s["ci95"])
    one = mean_ci95([5.0, float("nan")])  # NaN is no sample
    assert one["n"] == 1 and one["mean"] == 5.0 and math.isnan(one["ci95"])
    assert mean_ci95([])["n"] == 0


def test_tables_group_by_env_and_score_against_the_reference() -> None:
    rs = [
        _r("first_fit", 0, -10.0, cost=2.0, mean_rfrt=1.0),
        _r("first_fit", 1, -12.0, cost=4.0, mean_rfrt=1.0),
        _r("best_fit", 0, -8.0, cost=1.0, mean_rfrt=2.0),
        _r("best_fit", 1, -9.0, cost=2.0, mean_rfrt=2.0),
        _r("first_fit", 0, 50.0, env="rlsched/VMPlacement-v0", placed=50.0),
        _r("worst_fit", 0, 40.0, env="rlsched/VMPlacement-v0", placed=40.0),
    ]
    tables = sweep_tables(rs, reference="first_fit")
    assert [t["env"] for t in tables] == [
        "rlsched/ServerlessPlacement-v0",
        "rlsched/VMPlacement-v0",
    ]
    sp, vm = tables
    # main metric = the env's main_metric (ServerlessPlacement: the reward), the first column;
    # rows best first on it
    assert sp["main_metric"] == "reward" and sp["metrics"][:2] == ["reward", "cost"]
    assert [r["policy"] for r in sp["rows"]] == ["best_fit", "first_fit"]
    best = sp["rows"][0]
    assert best["stats"]["cost"]["mean"] == 1.5 and best["stats"]["cost"]["n"] == 2
    assert best["stats"]["reward"]["mean"] == -8.5
    # a higher reward is better; against a negative reference a lower ratio is
    assert best["score"] == -8.5 / -11.0 and sp["score_better"] == "lower"
    assert vm["main_metric"] == "placed" and vm["directions"]["placed"] == "higher"
    assert [r["policy"] for r in vm["rows"]] == ["first_fit", "worst_fit"]
    assert vm["rows"][1]["score"] == 40.0 / 50.0 and vm["score_better"] == "higher"
    md = sweep_markdown(tables)
    assert md.count("| # | policy |") == 2 and "score vs first_fit" in md
    assert "1.5000 ± " in md  # two seeds: an interval
    csv_text = sweep_csv(tables)
    assert csv_text.splitlines()[0].startswith("env,dataset,env_kwargs,rank,policy")
    assert len(csv_text.splitlines()) == 1 + 2 * len(sp["metrics"]) + 2 * len(vm["metrics"])


def test_the_main_metric_is_the_one_compare_and_the_verdicts_use() -> None:
    """Every env's table ranks and scores on its ``main_metric`` (``compare``'s), in its
    direction; the leaderboard metrics stay columns after it."""
    for env_id in ENV_IDS:
        cls = env_class(env_id)
        measured = {m: 1.0 for m in cls.METRICS if m != "reward"}
        (t,) = sweep_tables([_r("a", 0, 1.0, env=env_id, **measured)])
        assert t["main_metric"] == cls.main_metric == t["metrics"][0], env_id
        assert t["directions"][cls.main_metric] == cls.main_metric_direction, env_id
        assert set(t["metrics"]) == {"reward", *cls.leaderboard_metrics}, env_id
    # the main metric compare recorded in the trials (a scenario may set it per env instance)
    rs = [{**_r(p, 0, -v, cost=v), "main_metric": "cost"} for p, v in (("a", 2.0), ("b", 1.0))]
    (t,) = sweep_tables(rs)
    assert t["main_metric"] == "cost" and [r["policy"] for r in t["rows"]] == ["b", "a"]
    # a main metric no trial measured: the reward
    (t,) = sweep_tables([_r("a", 0, 1.0, env="rlsched/VMPlacement-v0", cpu_util=0.5)])
    assert t["main_metric"] == "reward"


def test_score_direction_flips_with_a_negative_reference() -> None:
    """On reward (higher is better) with negative rewards, a smaller ratio is better."""
    rs = [
        _r("a", 0, -4.0, env="rlsched/NoSuchEnv-v0"),
        _r("ref", 0, -8.0, env="rlsched/NoSuchEnv-v0"),
    ]
    (t,) = sweep_tables(rs, reference={"rlsched/NoSuchEnv-v0": "ref"})
    assert t["main_metric"] == "reward" and t["directions"]["reward"] == "higher"
    assert t["rows"][0]["policy"] == "a" and t["rows"][0]["score"] == 0.5
    assert t["score_better"] == "lower"
    (t,) = sweep_tables(rs, reference="missing")
    assert not t["reference_found"] and all(math.isnan(r["score"]) for r in t["rows"])
    # no reference named: the best heuristic measured (here "a") is the reference
    (t,) = sweep_tables(rs)
    assert t["reference"] == "a" and "score vs a" in sweep_markdown([t])


def test_metric_directions() -> None:
    env = "rlsched/ServerlessPlacement-v0"
    assert metric_direction(env, "cost") == "lower"
    assert metric_direction(env, "reward") == "higher"
    assert metric_direction(env, "something_new") is None


def test_a_label_with_two_configs_gets_two_rows() -> None:
    """`--all` over a folder holding an earlier config's trials: never one mixed row."""
    old = [{**_r("ppo", s, -5.0 - s), "config": {"seed": s, "lr": 1}} for s in (0, 1)]
    new = [{**_r("ppo", s, -3.0 - s), "config": {"seed": s, "lr": 2}} for s in (0, 1)]
    (t,) = sweep_tables(old + new)
    labels = [r["policy"] for r in t["rows"]]
    assert len(labels) == 2 and all(lab.startswith("ppo #") for lab in labels)
    assert [r["stats"]["reward"]["mean"] for r in t["rows"]] == [-3.5, -5.5]
    (t,) = sweep_tables(new)
    assert [r["policy"] for r in t["rows"]] == ["ppo"]


def test_rows_are_paired_seed_by_seed_with_the_reference() -> None:
    """Each seed meets its own episodes: a policy 1.0 better on every episode of every seed is
    `better`; the reference's own row carries no verdict."""
    env = "rlsched/NoSuchEnv-v0"
    rs = []
    for seed in (0, 1, 2):
        base = [float(seed * 10 + k) for k in range(4)]
        for name, shift, kind in (("ref", 0.0, "heuristic"), ("rl", 1.0, "learned")):
            r = _r(name, seed, sum(base) / 4 + shift, env=env)
            r.update(kind=kind, episode_seed=seed * 4,
                     episode_values=[b + shift + 0.01 * k * (name == "rl") for k, b in
                                     enumerate(base)])
            rs.append(r)
    (t,) = sweep_tables(rs, reference="ref")
    rows = {r["policy"]: r for r in t["rows"]}
    assert "paired" not in rows["ref"]
    p = rows["rl"]["paired"]
    assert p["verdict"] == "better" and p["method"] == "iqm stratified bootstrap"
    assert 1.0 <= p["ci95"][0] <= p["mean_diff"] <= p["ci95"][1] <= 1.04
    assert "better" in sweep_markdown([t])


def test_labels_and_directions_come_from_the_envs_metrics_spec() -> None:
    from rlsched.envs import PodRebalancingEnv, ServerlessPlacementEnv
    from rlsched.report import leaderboard
    from rlsched.report.leaderboard import metric_label, metric_spec

    assert not hasattr(leaderboard, "METRIC_LABELS")
    assert not hasattr(leaderboard, "HIGHER_IS_BETTER")
    pods = "rlsched/PodRebalancing-v0"
    assert metric_spec("violations", pods) is PodRebalancingEnv.METRICS["violations"]
    assert metric_direction(pods, "violations") == "lower"
    assert metric_direction(pods, "requests") is None  # a descriptive count
    assert metric_label("cost", "rlsched/ServerlessPlacement-v0") == "cost $"
    assert metric_spec("p95_rfrt") is ServerlessPlacementEnv.METRICS["p95_rfrt"]  # no env given
    assert metric_label("reward") == "reward" and metric_label("brand_new") == "brand_new"
