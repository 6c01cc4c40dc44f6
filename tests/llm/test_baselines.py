"""Autoscaling baselines: the HPA rule, the threshold scaler and the static sizing rule on
hand-built inputs, then each policy inside the env."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest

import rlsched  # noqa: F401
from rlsched.core.llm.perf_model import PerfModel
from rlsched.core.llm.scaling import StartState
from rlsched.core.llm.slo import SLOConfig
from rlsched.errors import ConfigError, PolicyError
from rlsched.policies.llm import (
    BASELINES,
    DEFAULT_TARGET_UTILIZATION,
    HPAConfig,
    HPAController,
    HPAPolicy,
    HPAThresholdPolicy,
    PoolThroughput,
    ThresholdConfig,
    ThresholdPolicy,
    ThresholdScaler,
    peak_rates,
    pool_throughput,
    sizes_for_rates,
    static_peak_sizes,
)
from rlsched.policies.registry import env_policy_factories, make_policy

from .helpers import requests


# ---------------------------------------------------------------------------- HPA
def test_hpa_formula_and_tolerance():
    h = HPAController(HPAConfig(target=0.7, tolerance=0.1))
    assert h.replica_count(4, 0, 0.75) == 4  # ratio 1.07: within 10 %
    assert h.replica_count(4, 0, 0.63) == 4  # ratio 0.9: within 10 %
    assert h.replica_count(4, 0, 0.9) == 6  # ceil(4 x 0.9 / 0.7) = ceil(5.14)
    assert h.replica_count(4, 0, 0.35) == 2  # ceil(4 x 0.5)
    assert h.replica_count(4, 0, 0.7 * 0.88) == 4 - 0  # ceil(3.52) = 4
    assert h.replica_count(0, 2, 5.0) == 2  # no ready replica: no change
    assert h.replica_count(3, 0, math.nan) == 3
    # scaling up with unready replicas: they count at 0 % utilisation
    assert h.replica_count(2, 2, 1.4) == 4  # 2 x 2 / 4 = 1.0 -> within tolerance
    assert h.replica_count(2, 2, 2.1) == 6  # ratio 3 -> 1.5 over 4 replicas -> 6
    assert h.replica_count(2, 3, 1.4) == 5  # 2 x 2 / 5 = 0.8 < 1: direction flips, no change
    assert h.replica_count(2, 2, 0.35) == 1  # scale-down ignores the unready ones: ceil(2 x 0.5)


def test_hpa_stabilization_and_rate_limits():
    cfg = HPAConfig(target=0.5, scale_down_stabilization=300.0, min_replicas=1, max_replicas=50)
    h = HPAController(cfg)
    assert h.desired(0.0, 4, 0, 1.0) == 8  # ratio 2: x2 (limit max(+100 %, +4) = 8)
    assert h.desired(15.0, 8, 0, 0.125) == 8  # recommends 2, but 8 was recommended < 300 s ago
    assert h.desired(299.0, 8, 0, 0.125) == 8
    assert h.desired(301.0, 8, 0, 0.125) == 2  # the t=0 recommendation left the window
    # scale-up rate limit: at most max(2 x current, current + 4) per period
    h2 = HPAController(cfg)
    assert h2.desired(0.0, 2, 0, 10.0) == 6  # wants 40
    assert h2.desired(15.0, 6, 0, 10.0) == 12  # wants 120 -> 2 x 6
    assert HPAController(HPAConfig(max_replicas=10)).desired(0.0, 8, 0, 7.0) == 10
    assert HPAController(HPAConfig(min_replicas=2)).desired(0.0, 3, 0, 0.01) == 2
    # a scale-up stabilization window takes the lowest recent recommendation
    h3 = HPAController(HPAConfig(target=0.5, scale_up_stabilization=60.0))
    assert h3.desired(0.0, 4, 0, 0.5) == 4
    assert h3.desired(15.0, 4, 0, 1.0) == 4  # min(4, 8) over the last 60 s
    assert h3.desired(61.0, 4, 0, 1.0) == 8


# ---------------------------------------------------------------------------- threshold
def test_threshold_scaler():
    s = ThresholdScaler(ThresholdConfig(up_cooldown=20.0, down_stable=60.0, down_cooldown=60.0))
    assert s.decide(0.0, 2, 0, queue=1.0, latency=0.7) == 0  # neither high nor low
    assert s.decide(2.0, 2, 0, queue=5.0, latency=0.5) == 2  # queue over 4 per instance
    assert s.decide(4.0, 2, 2, queue=9.0, latency=2.0) == 0  # a scale-up is still starting
    assert s.decide(12.0, 4, 0, queue=9.0, latency=2.0) == 0  # up_cooldown (20 s)
    assert s.decide(22.0, 4, 0, queue=0.0, latency=1.2) == 2  # latency over 0.9 x limit
    # low for 60 s and 60 s after the last change -> -1, then the clock starts again
    t = 24.0
    outs = []
    while t <= 150.0:
        outs.append((t, s.decide(t, 6, 0, queue=0.0, latency=0.2)))
        t += 2.0
    downs = [x for x, d in outs if d]
    assert downs == [84.0, 144.0]
    assert all(d in (0, -1) for _, d in outs)
    # NaN latency (no completions) is neither high nor low
    s2 = ThresholdScaler()
    assert all(s2.decide(float(k), 3, 0, 0.0, math.nan) == 0 for k in range(200))
    # never below min_instances
    s3 = ThresholdScaler(ThresholdConfig(down_stable=0.0, down_cooldown=0.0, min_instances=1))
    assert s3.decide(0.0, 1, 0, 0.0, 0.1) == 0
    assert s3.decide(1.0, 2, 0, 0.0, 0.1) == -1


# ---------------------------------------------------------------------------- sizing
def test_sizes_for_rates_formula():
    tps = {"prompt": PoolThroughput("prompt", 1000.0, 10, 100.0),
           "token": PoolThroughput("token", 1000.0, 10, 100.0)}  # fmt: skip
    rates = {"requests_per_s": 1.0, "prompt_tokens_per_s": 2000.0, "output_tokens_per_s": 450.0}
    assert sizes_for_rates(rates, tps, {"prompt": 0.5, "token": 0.9}) == {"prompt": 4, "token": 5}
    assert sizes_for_rates(rates, tps, 1.0) == {"prompt": 2, "token": 5}  # 4.5 -> 5
    zero = dict.fromkeys(rates, 0.0)
    assert sizes_for_rates(zero, tps, None, min_instances=1) == {"prompt": 1, "token": 1}
    with pytest.raises(ConfigError):
        sizes_for_rates(rates, tps, {"prompt": 0.0})


def test_peak_rates_find_the_burst():
    rows = [(float(k), 100, 10) for k in range(120)]  # 1 request/s for 2 minutes ...
    rows += [(50.0 + 0.1 * k, 1000, 50) for k in range(100)]  # ... plus 10/s for 10 s
    pk = peak_rates(requests(*rows), window=60.0)
    assert pk["requests_per_s"] == pytest.approx((60 + 100) / 60.0)
    assert pk["prompt_tokens_per_s"] == pytest.approx((60 * 100 + 100 * 1000) / 60.0)
    assert pk["output_tokens_per_s"] == pytest.approx((60 * 10 + 100 * 50) / 60.0)


def test_pool_throughput_slo_batch_and_static_sizes():
    ss, pm, slo = StartState.default(), PerfModel.load(), SLOConfig()
    tp = pool_throughput(ss, pm, slo, "token")
    curve = pm.token_curve("llama2-70b", "a100-80gb", 8)
    limit = 1.5 * 0.9 * curve(1)
    assert curve(tp.decode_batch) <= limit < curve(tp.decode_batch + 1)
    assert tp.decode_tokens_per_s == pytest.approx(tp.decode_batch / curve(tp.decode_batch))
    pp = pool_throughput(ss, pm, slo, "prompt")
    pc = pm.prompt_curve("llama2-70b", "h100-80gb", 8)
    assert pp.prefill_tokens_per_s == pytest.approx(2048 / pc(2048))
    # a memory-bound batch when contexts are huge
    assert pool_throughput(ss, pm, slo, "token", mean_context=50_000).decode_batch == 3
    # sizes follow the peak: 10x the requests in one minute -> about 10x the instances
    rows = [(float(k), 1000, 200) for k in range(600)]
    base = static_peak_sizes(requests(*rows), ss, pm, slo)
    rows += [(300.0 + 0.1 * k, 1000, 200) for k in range(540)]
    burst = static_peak_sizes(requests(*rows), ss, pm, slo)
    need_p = 10 * 1000 / (DEFAULT_TARGET_UTILIZATION["prompt"] * pp.prefill_tokens_per_s)
    assert burst["prompt"] == math.ceil(need_p - 1e-9)
    assert burst["token"] > 5 * base["token"] - 5


# ---------------------------------------------------------------------------- in the env
def _env(**kw):
    # the conversation trace these checks were written for (the default preset is code-1x)
    kw = {"episode_duration": 120.0, "rate_scale": 2.0, "dataset": "azure-llm:conv", **kw}
    return gym.make("rlsched/LLMAutoscaling-v0", disable_env_checker=True, **kw)


def _episode(env, name, seed=0):
    pol = make_policy(name, env, seed=seed) if isinstance(name, str) else name
    obs, _ = env.reset(seed=seed)
    pol.reset(seed)
    actions, done, info = [], False, {}
    while not done:
        a = pol.act(obs, env.unwrapped.action_masks())
        assert env.action_space.contains(np.asarray(a, dtype=np.float32))
        actions.append(np.asarray(a, dtype=float))
        obs, _, term, trunc, info = env.step(a)
        done = term or trunc
    return np.array(actions), info


def test_every_baseline_runs_an_episode():
    env = _env()
    assert set(env_policy_factories(env)) == set(BASELINES)
    for name in BASELINES:
        actions, info = _episode(env, name)
        assert info["metrics"]["requests"] > 0, name
        if name == "none":
            assert not actions.any()


def test_static_peak_scales_once_then_holds():
    env = _env()
    actions, info = _episode(env, "static_peak")
    u = env.unwrapped
    final = {t: u.sim.scaling_manager.pool_sizes(t)["active"] for t in u.pools}
    pol = make_policy("static_peak", env)
    env.reset(seed=0)
    pol.act(None, u.action_masks())
    targets = pol.targets
    assert targets["token"] > 2  # 2x the conv rate needs more than the start state's 2
    moved = np.flatnonzero(np.abs(actions).sum(axis=1))
    assert moved.max() < 3  # a few decisions to reach the targets (5 per step), then nothing
    assert final == targets
    assert info["metrics"]["scale_down_actions"] == 0


def test_policy_deltas_convert_to_action_units():
    u = _env(action_scale_step=5).unwrapped
    assert u.delta_to_action([2, -5]) == pytest.approx([0.4, -1.0])
    assert u.delta_to_action([12, 0]) == pytest.approx([1.0, 0.0])  # more than a step: clipped
    u.reset(seed=0)
    for d in range(-5, 6):
        a = u.delta_to_action([d, -d])
        assert u.executor.deltas(a) == [d, -d]


def test_hpa_threshold_plays_hpa_on_light_pools_and_threshold_on_heavy_ones():
    # conv at 2x: the token pool's demand needs more than 2.5 instances at the sizing rule's
    # target, the prompt pool's less, so both branches play in one episode
    env = _env()
    u = env.unwrapped
    pol = HPAThresholdPolicy(env, 0, switch_window=1)
    hpa, thr = HPAPolicy(env, 0), ThresholdPolicy(env, 0)
    obs, _ = env.reset(seed=0)
    names = list(u.feature_names)
    done, heavy_seen = False, set()
    while not done:
        mask = u.action_masks()
        a, h, t = (p.act(obs, mask) for p in (pol, hpa, thr))
        for i, tag in enumerate(u.pools):
            util = DEFAULT_TARGET_UTILIZATION[tag]
            heavy = obs[names.index(f"{tag}_demand")] * u.collector.count_scale / util >= 2.5
            heavy_seen.add((tag, bool(heavy)))
            assert a[i] == (t[i] if heavy else h[i]), (tag, u.sim.now)
        obs, _, term, trunc, _ = env.step(a)
        done = term or trunc
    assert ("token", True) in heavy_seen and ("prompt", False) in heavy_seen


def test_hpa_threshold_at_its_extremes_is_each_heuristic():
    env = _env(episode_duration=60.0)
    for switch, alone in ((1e9, "hpa"), (1e-9, "threshold")):
        pol = HPAThresholdPolicy(env, 0, switch_instances=switch)
        played = _episode(env, pol)[0]
        assert np.array_equal(played, _episode(env, alone)[0]), alone
    with pytest.raises(PolicyError, match="switch_instances"):
        HPAThresholdPolicy(env, 0, switch_instances=0.0)


def test_hpa_threshold_takes_a_bound_per_pool():
    # HPA on the prompt pool and threshold on the token pool whatever the demand: at every
    # decision each pool gets the action its heuristic, following the same episode, plays
    env = _env(episode_duration=120.0)
    u = env.unwrapped
    pol = HPAThresholdPolicy(env, 0, switch_instances={"prompt": 1e9, "token": 1e-9})
    assert pol.switch_instances == {"prompt": 1e9, "token": 1e-9}
    hpa, thr = HPAPolicy(env, 0), ThresholdPolicy(env, 0)
    obs, _ = env.reset(seed=0)
    done, differ = False, 0
    while not done:
        mask = u.action_masks()
        a, h, t = (p.act(obs, mask) for p in (pol, hpa, thr))
        assert (a[0], a[1]) == (h[0], t[1]), u.sim.now
        differ += not np.array_equal(h, t)
        obs, _, term, trunc, _ = env.step(a)
        done = term or trunc
    assert differ  # the episode tells the two heuristics apart
    assert HPAThresholdPolicy(env, 0, switch_instances=3.0).switch_instances == {
        "prompt": 3.0,
        "token": 3.0,
    }
    for bad, match in (
        ({"prompt": 2.0}, "missing \\['token'\\]"),
        ({"prompt": 2.0, "token": 2.0, "gpu": 1.0}, "unknown \\['gpu'\\]"),
        ({"prompt": 2.0, "token": -1.0}, "must be > 0"),
    ):
        with pytest.raises(PolicyError, match=match):
            HPAThresholdPolicy(env, 0, switch_instances=bad)


def test_hpa_threshold_switch_window_averages_the_recent_demand():
    # with a window of 4 decisions a pool goes to threshold when its mean demand over the last
    # four observations (fewer at the episode's start) reaches the bound, not on one spike
    env = _env()
    u = env.unwrapped
    assert HPAThresholdPolicy(env, 0).switch_window == 16  # the default, chosen on validation
    pol = HPAThresholdPolicy(env, 0, switch_window=4)
    hpa, thr = HPAPolicy(env, 0), ThresholdPolicy(env, 0)
    names = list(u.feature_names)
    at = [names.index(f"{t}_demand") for t in u.pools]
    obs, _ = env.reset(seed=0)
    per = np.array([u.collector.count_scale / DEFAULT_TARGET_UTILIZATION[t] for t in u.pools])
    seen, done, spikes = [], False, 0
    while not done:
        mask = u.action_masks()
        a, h, t = (p.act(obs, mask) for p in (pol, hpa, thr))
        seen.append(np.asarray(obs, dtype=float)[at])
        heavy = np.mean(seen[-4:], axis=0) * per >= 2.5
        spikes += int(np.any((seen[-1] * per >= 2.5) != heavy))
        for i in range(len(u.pools)):
            assert a[i] == (t[i] if heavy[i] else h[i]), (u.pools[i], u.sim.now)
        obs, _, term, trunc, _ = env.step(a)
        done = term or trunc
    assert spikes  # the window changed the switch at least once in this episode
    for bad in (0, 2.5):
        with pytest.raises(PolicyError, match="switch_window"):
            HPAThresholdPolicy(env, 0, switch_window=bad)
