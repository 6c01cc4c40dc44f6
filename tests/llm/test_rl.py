"""RLActionExecutor, RLStateCollector and RLRewardCalculator on small hand-built clusters."""

from __future__ import annotations

import logging
import math

import numpy as np
import pytest

from rlsched.core.llm.cluster import InstanceState
from rlsched.core.llm.simulator import LLMSimulator
from rlsched.envs.llm_rl import (
    FEATURES,
    GLOBAL_FEATURES,
    POOL_FEATURES,
    SLO_CONSTRAINED,
    RLActionExecutor,
    RLRewardCalculator,
    RLStateCollector,
    ScalingRewardWeights,
    feature_bounds,
    feature_names,
    round_half_away,
)
from rlsched.errors import ConfigError

from .helpers import requests, start_state

LOGGER = "rlsched.envs.llm_rl"


def _sim(prompt: int = 2, token: int = 2, reqs=None, **kw) -> LLMSimulator:
    reqs = reqs or requests((0.0, 500, 20), (0.5, 800, 40), (1.0, 300, 10))
    return LLMSimulator(reqs, start_state(prompt, token), **kw)


# ---------------------------------------------------------------------------- executor
def test_round_half_away_from_zero():
    assert [round_half_away(x) for x in (0.49, 0.5, 1.5, 2.5, -0.5, -2.5, -0.49)] == [
        0,
        1,
        2,
        3,
        -1,
        -3,
        0,
    ]


def test_delta_arithmetic():
    ex = RLActionExecutor(_sim(), action_scale_step=5)
    assert ex.deltas([0.3, -1.0]) == [2, -5]  # 1.5 rounds away from zero
    assert ex.deltas([0.09, 0.1]) == [0, 1]  # dead zone |a| < 0.1
    assert ex.deltas([np.nan, 7.0]) == [0, 5]  # non-finite -> 0, clipped to [-1, 1]
    assert ex.deltas(-0.5) == [-3, -3]  # a scalar applies to every pool
    assert RLActionExecutor(_sim(), action_scale_step=3).deltas([1.0, -0.5]) == [3, -2]
    with pytest.raises(ValueError, match="expected 2"):
        ex.deltas([0.1, 0.2, 0.3])
    with pytest.raises(ConfigError):
        RLActionExecutor(_sim(), action_scale_step=0)
    with pytest.raises(ConfigError, match="no 'mixed' pool"):
        RLActionExecutor(_sim(), pools=("prompt", "mixed"))


def test_scale_up_uses_the_start_state_and_becomes_active():
    sim = _sim(1, 1, scale_up_delay=10.0)
    ex = RLActionExecutor(sim)
    out = ex.execute([0.4, 0.2])  # +2 prompt, +1 token
    assert [(o.requested, o.done, o.blocked) for o in out] == [(2, 2, 0), (1, 1, 0)]
    assert ex.summary() == {
        "prompt": {"requested": 2, "done": 2, "blocked": 0},
        "token": {"requested": 1, "done": 1, "blocked": 0},
    }
    new = [i for i in sim.instances if i.id in out[0].instances + out[1].instances]
    assert all(i.state is InstanceState.SCALING_UP for i in new)
    ss = sim.start_state
    for i in new:
        assert i.config == ss.get_instance_config(i.tag)
        assert i.parallelism == ss.get_parallelism(i.tag)
        assert i.server.sku.name == ss.get_server_sku(i.tag)
    sim.run_until(10.0)
    assert all(i.state is InstanceState.ACTIVE for i in new)


def test_scale_down_drains_the_least_loaded_active_instance():
    sim = _sim(3, 3)
    p = sim.scaling_manager.get_active_instances(tag="prompt")
    t = sim.scaling_manager.get_active_instances(tag="token")
    for inst, pend, mem in zip(p, (500, 100, 900), (0, 50, 0), strict=True):
        inst.sched_pending_tokens, inst.sched_memory_tokens = pend, mem
    for inst, pend, mem in zip(t, (0, 10, 0), (700, 900, 200), strict=True):
        inst.sched_pending_tokens, inst.sched_memory_tokens = pend, mem
    ex = RLActionExecutor(sim)
    assert ex.least_loaded("prompt") is p[1]  # fewest sched_pending_tokens
    assert ex.least_loaded("token") is t[2]  # least sched_memory
    out = ex.execute([-0.2, -0.4])  # -1 prompt, -2 token
    assert out[0].instances == [p[1].id] and out[0].done == -1
    assert out[1].instances == [t[2].id, t[0].id] and out[1].done == -2
    assert p[1].state is InstanceState.DRAINING and t[0].state is InstanceState.DRAINING
    # only ACTIVE instances are candidates: a draining one is never picked again
    assert ex.least_loaded("token") is t[1]


def test_blocked_actions_are_logged_not_raised(caplog):
    caplog.set_level(logging.INFO, logger=LOGGER)
    sim = _sim(1, 1, max_total_instances=4, min_instances_per_pool=1)
    ex = RLActionExecutor(sim)
    out = ex.execute([1.0, 0.0])  # +5 prompt, only 2 fit under the cluster cap
    assert (out[0].requested, out[0].done, out[0].blocked) == (5, 2, 3)
    assert "max cluster size reached (4)" in out[0].reason
    assert any("[Action Blocked] prompt: 3 of 5 scale-ups" in r.message for r in caplog.records)
    caplog.clear()
    out = ex.execute([0.0, -1.0])  # the token pool is at its minimum (1 active)
    assert (out[1].requested, out[1].done, out[1].blocked) == (-5, 0, 5)
    assert "min limit" in out[1].reason
    assert any("[Action Blocked] token" in r.message for r in caplog.records)
    assert len(sim.scaling_manager.get_instances(tag="token")) == 1
    assert sim.scaling_manager.blocked_actions == 2  # one refusal per blocked pool action


# ---------------------------------------------------------------------------- collector
def test_feature_names_and_bounds():
    assert feature_names(("prompt", "token")) == FEATURES
    assert len(FEATURES) == 2 * len(POOL_FEATURES) + len(GLOBAL_FEATURES) + 2
    assert len(set(FEATURES)) == len(FEATURES)
    lo, hi = feature_bounds()
    assert lo.shape == hi.shape == (len(FEATURES),) and (lo < hi).all()


def _loaded_sim(**kw) -> LLMSimulator:
    rows = [(0.05 * k, 600 + 37 * (k % 7), 60 + 13 * (k % 5)) for k in range(120)]
    return LLMSimulator(requests(*rows), start_state(1, 2), **kw)


def _pool_load(col: RLStateCollector, v: np.ndarray, tag: str) -> dict[str, float]:
    d = col.as_dict(v)
    skip = ("active", "scaling_up", "draining")
    return {f: d[f"{tag}_{f}"] for f in POOL_FEATURES if f not in skip}


def test_collector_vector_shape_and_active_only():
    sim = _loaded_sim()
    col = RLStateCollector(sim)
    v0 = col.collect()
    assert v0.dtype == np.float32 and v0.shape == (len(FEATURES),)
    sim.run_until(4.0)
    v1 = col.collect([0.5, -0.25])
    assert ((col.low <= v1) & (v1 <= col.high)).all()
    d1 = col.as_dict(v1)
    assert (d1["prompt_active"], d1["token_active"]) == pytest.approx((0.1, 0.2))
    assert (d1["last_action_prompt"], d1["last_action_token"]) == (0.5, -0.25)
    assert d1["token_committed_memory"] > 0 and d1["prompt_utilization"] > 0
    assert d1["arrival_rate"] > 0 and d1["prompt_tokens_mean"] > 0
    load1 = _pool_load(col, v1, "token")
    # a SCALING_UP token instance changes the counts, not the load features
    sim.scaling_manager.scale_up("token")
    v2 = col.collect([0.5, -0.25])
    d2 = col.as_dict(v2)
    assert (d2["token_scaling_up"], d2["token_active"]) == pytest.approx((0.1, 0.2))
    assert _pool_load(col, v2, "token") == load1
    # a DRAINING one leaves the averages: they are over the remaining ACTIVE instance only
    act = sim.scaling_manager.get_active_instances(tag="token")
    busiest = max(act, key=lambda i: i.sched_memory_tokens)
    other = next(i for i in act if i is not busiest)
    assert sim.scaling_manager.scale_down_full(busiest)
    d3 = col.as_dict(col.collect())
    assert (d3["token_draining"], d3["token_active"]) == pytest.approx((0.1, 0.1))
    assert d3["token_committed_memory"] == pytest.approx(other.memory_utilization, rel=1e-6)
    assert d3["token_running"] == pytest.approx(math.log1p(len(other.running)), rel=1e-6)


def test_collector_slo_features_from_the_last_interval():
    sim = _loaded_sim()
    col = RLStateCollector(sim)
    col.collect()
    sim.run_until(30.0)
    st = sim.window_stats(0.0)
    d = col.as_dict(col.collect(window=st))
    assert st["completed"] > 0
    assert d["slo_attainment"] == pytest.approx(st["slo_attainment"], rel=1e-6)
    lim = sim.slo.limits(sim.slo.attainment_level)["ttft"]
    p90 = float(np.percentile(st["slowdown_ttft"], 90)) / lim
    assert d["ttft_slowdown_p90"] == pytest.approx(p90, rel=1e-6)
    # an interval without completions keeps the previous SLO values
    sim.run_until(200.0)
    col.collect()
    sim.run_until(202.0)
    d2 = col.as_dict(col.collect())
    assert sim.window_stats(200.0)["completed"] == 0
    assert d2["arrival_rate"] == 0.0 and 0.0 <= d2["slo_attainment"] <= 1.0


# ---------------------------------------------------------------------------- reward
def _stats(att: float, cost: float, completed: int = 10, span: float = 2.0) -> dict:
    return {"since": 0.0, "now": span, "slo_attainment": att, "completed": completed,
            "dropped": 0, "cost": cost}  # fmt: skip


def test_reward_components_and_weights():
    calc = RLRewardCalculator(cost_reference=0.01, action_scale_step=5, pools=2)
    r = calc.compute(_stats(1.0, 0.02), [0, 0])  # cost 0.02 $ over 2 s = 1x the reference
    assert calc.components["cost"] == pytest.approx(1.0)
    assert r == pytest.approx(2.0 * 1.0 - 0.5 * 1.0)
    calc.reset()
    assert calc.compute(_stats(0.9, 0.02), [0, 0]) < r  # SLO down -> reward down
    calc.reset()
    assert calc.compute(_stats(1.0, 0.04), [0, 0]) == pytest.approx(r - 0.5)  # cost up
    # weights
    w = RLRewardCalculator({"slo": 1.0, "cost": 0.0, "switch": 0.0, "magnitude": 0.0}, 0.01)
    assert w.compute(_stats(0.7, 5.0), [5, -5]) == pytest.approx(0.7)
    assert ScalingRewardWeights.coerce(None) == ScalingRewardWeights(2.0, 0.5, 0.1, 0.05)
    with pytest.raises(ConfigError, match="unknown reward weight"):
        RLRewardCalculator({"latency": 1.0})


def test_slo_constrained_gaps_sum_to_the_episodes_shortfall():
    """With ``slo_target`` each interval pays the multiplier times its count-weighted gap; over
    an episode the gaps add up to intervals x (target - the episode's attainment), whatever
    the split of requests over intervals; no cost term hides a miss."""
    ns, atts = [4, 16, 10, 0, 10], [0.5, 1.0, 0.8, math.nan, 0.9]
    w = {"slo": 0.0, "cost": 0.0, "switch": 0.0, "magnitude": 0.0, "slo_target": 0.9}
    calc = RLRewardCalculator(w, 0.01, requests_per_interval=sum(ns) / len(ns))
    pairs = list(zip(ns, atts, strict=True))
    total = sum(calc.compute(_stats(a, 0.0, completed=n), [0, 0]) for n, a in pairs)
    episode_att = sum(n * a for n, a in pairs if n) / sum(ns)
    assert total == pytest.approx(-20.0 * len(ns) * (0.9 - episode_att))
    # the steep multiplier: 10 points of attainment outweigh twice the reference cost
    c = RLRewardCalculator(SLO_CONSTRAINED, 0.01, requests_per_interval=10)
    cheap_miss = c.compute(_stats(0.8, 0.02), [0, 0])
    c.reset()
    dear_hit = c.compute(_stats(0.9, 0.04), [0, 0])
    assert dear_hit > cheap_miss
    # without a target the term is absent (the default weights are unchanged)
    assert ScalingRewardWeights.coerce(None).slo_target is None


def test_switch_penalty_direction_and_magnitude():
    calc = RLRewardCalculator(cost_reference=1.0, action_scale_step=5, pools=2)
    base = calc.compute(_stats(1.0, 0.0), [0, 0])
    assert calc.components["switches"] == 0 and calc.components["magnitude"] == 0
    r1 = calc.compute(_stats(1.0, 0.0), [5, 0])  # magnitude 1, no reversal yet
    assert calc.components["magnitude"] == 1.0 and calc.components["switches"] == 0
    assert r1 == pytest.approx(base - 0.05)
    calc.compute(_stats(1.0, 0.0), [0, 0])
    r3 = calc.compute(_stats(1.0, 0.0), [-1, 2])  # prompt reverses (after a pause)
    assert calc.components["switches"] == 1 and calc.components["magnitude"] == 0.6
    assert r3 == pytest.approx(base - 0.1 - 0.05 * 0.6)
    calc.compute(_stats(1.0, 0.0), [-2, 2])  # same directions: no reversal
    assert calc.components["switches"] == 0
    calc.compute(_stats(1.0, 0.0), [3, -3])  # both reverse
    assert calc.components["switches"] == 2


def test_reward_keeps_the_last_attainment_when_nothing_completed():
    calc = RLRewardCalculator(cost_reference=1.0)
    calc.compute(_stats(0.5, 0.0), [0, 0])
    calc.compute(_stats(math.nan, 0.0, completed=0), [0, 0])
    assert calc.components["slo"] == 0.5
    calc.reset()
    calc.compute(_stats(math.nan, 0.0, completed=0), [0, 0])
    assert calc.components["slo"] == 1.0
