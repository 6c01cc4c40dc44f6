"""LLMAutoscaling-v0: both env checkers, determinism, the decision clock, episode windows,
end-of-episode metrics, and compare over the env's own policies."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env as gym_check_env
from stable_baselines3.common.env_checker import check_env as sb3_check_env

import rlsched  # noqa: F401
from rlsched.core.llm.trace import LLMRequests
from rlsched.envs import ENV_IDS
from rlsched.envs.llm_autoscaling import LLMAutoscalingEnv
from rlsched.envs.llm_rl import FEATURES, round_half_away
from rlsched.policies.llm import BASELINES

ENV_ID = "rlsched/LLMAutoscaling-v0"


def _env(**kw) -> gym.Env:
    # the conversation trace: steady enough for the load-proportional checks below (the
    # default preset, code-1x, is the bursty coding trace)
    kw = {"episode_duration": 60.0, "dataset": "azure-llm:conv", **kw}
    return gym.make(ENV_ID, disable_env_checker=True, **kw)


def test_registered():
    assert ENV_IDS[ENV_ID] == "rlsched.envs.llm_autoscaling:LLMAutoscalingEnv"
    u = _env().unwrapped
    assert isinstance(u, LLMAutoscalingEnv)
    assert u.action_space == gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
    assert u.observation_space.shape == (len(FEATURES),)
    assert u.feature_names == FEATURES
    assert u.action_masks().tolist() == [True, True]


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_env_checkers():
    gym_check_env(_env().unwrapped, skip_render_check=False)
    sb3_check_env(_env().unwrapped, warn=True)
    gym_check_env(_env(render_mode="ansi").unwrapped, skip_render_check=False)


def _rollout(seed: int, **kw) -> list[tuple]:
    env = _env(**kw)
    obs, _ = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    out = [obs.tobytes()]
    done = False
    while not done:
        obs, r, term, trunc, info = env.step(rng.uniform(-0.4, 0.4, 2))
        out.append((obs.tobytes(), r))
        done = term or trunc
    out.append(tuple(sorted(info["metrics"].items())))
    return out


def test_deterministic_under_seed():
    assert _rollout(3) == _rollout(3)
    assert _rollout(3) != _rollout(4)


def test_each_step_advances_one_decision_interval_and_ends_with_metrics():
    env = _env(episode_duration=30.0, decision_interval=2.5, rate_scale=2.0)
    u = env.unwrapped
    _, info = env.reset(seed=1)
    assert u.sim.now == 0.0 and u.steps_total == 12
    assert 0.0 <= info["episode_start"] <= u._base.scale_rate(2.0).span - 30.0
    for k in range(1, 13):
        _, _, term, trunc, info = env.step(np.array([0.2, 0.0], np.float32))
        assert not term
        if k < 12:
            assert u.sim.now == pytest.approx(2.5 * k, abs=1e-12)
            assert not trunc and "metrics" not in info
    assert trunc
    m = info["metrics"]
    for key in u.leaderboard_metrics:
        assert key in m and isinstance(m[key], float)
    for key in ("ttft_p50", "ttft_p90", "ttft_p99", "tbt_p99", "e2e_p99", "energy_kwh"):
        assert math.isfinite(m[key])
    assert m["requests"] + m["dropped"] == m["arrivals"] == len(u.requests) > 0
    assert m["dropped"] == 0  # drained after the window: every request completed
    assert m["scale_up_actions"] == 12.0  # +1 prompt instance per step
    assert m["blocked_actions"] == 0.0
    assert m["mean_prompt_instances"] > 2.0
    assert 0.0 <= m["slo_attainment"] <= 1.0 and m["cost"] > 0 and m["gpu_hours"] > 0
    assert len(u.history) == 13 and u.history[0]["time"] == 0.0
    with pytest.raises(RuntimeError):
        env.step(np.zeros(2))


def test_scaling_happens_through_the_executor():
    env = _env()
    u = env.unwrapped
    env.reset(seed=0)
    _, _, _, _, info = env.step(np.array([0.4, -0.2], np.float32))
    assert info["scaling"] == {"prompt": 2, "token": -1}
    assert info["scaling_done"] == {"prompt": 2, "token": -1}
    sizes = {t: u.sim.scaling_manager.pool_sizes(t) for t in u.pools}
    assert sizes["prompt"]["scaling_up"] == 2
    assert sizes["token"]["active"] == 1
    _, _, _, _, info = env.step(np.array([0.0, -1.0], np.float32))  # token pool at its minimum
    assert info["scaling_blocked"]["token"] == 5
    _, _, _, _, info = env.step(0.2)  # a scalar applies to every pool
    assert info["scaling"] == {"prompt": 1, "token": 1}
    assert set(info["reward_components"]) >= {"slo", "cost", "switches", "magnitude"}


def test_windows_rate_scale_and_whole_trace():
    u = _env(episode_duration=100.0, rate_scale=[1.0, 3.0]).unwrapped
    starts, scales = set(), set()
    for seed in range(4):
        _, info = u.reset(seed=seed)
        starts.add(round(info["episode_start"], 6))
        scales.add(round(u.rate_scale, 6))
        assert 1.0 <= u.rate_scale <= 3.0
        assert u.requests.arrival.min() >= 0 and u.requests.arrival.max() < 100.0
    assert len(starts) == 4 and len(scales) == 4
    fixed = _env(episode_duration=100.0, episode_start=50.0).unwrapped
    _, info = fixed.reset(seed=0)
    assert info["episode_start"] == 50.0
    reqs = LLMRequests.from_arrays([0.0, 1.0, 5.0, 9.0], [100, 200, 300, 400], [5, 6, 7, 8])
    whole = LLMAutoscalingEnv(dataset=reqs, episode_duration=None)
    whole.reset(seed=0)
    assert whole.steps_total == 5 and len(whole.requests) == 4
    done = False
    while not done:
        _, _, _, done, info = whole.step(np.zeros(2))
    assert info["metrics"]["requests"] == 4.0
    with pytest.raises(ValueError):
        _env(rate_scale=0.0)
    with pytest.raises(ValueError):
        _env(cost_reference="peak")


def test_log_rate_draw_weighs_low_loads_like_high_ones_and_keeps_the_other_draws():
    from rlsched.envs.llm_autoscaling import _draw

    rng_u, rng_l = np.random.default_rng(0), np.random.default_rng(0)
    uni = np.array([_draw(rng_u, (0.5, 4.0)) for _ in range(3000)])
    log = np.array([_draw(rng_l, (0.5, 4.0), "log") for _ in range(3000)])
    assert log.min() >= 0.5 and log.max() <= 4.0
    # log-uniform: a third of the draws in each doubling (0.5-1x, 1-2x, 2-4x); uniform: 1/7 below 1x
    assert abs(np.mean(log < 1.0) - 1 / 3) < 0.03 and abs(np.mean(log > 2.0) - 1 / 3) < 0.03
    assert abs(np.mean(uni < 1.0) - 1 / 7) < 0.03
    assert _draw(np.random.default_rng(0), (2.0, 2.0), "log") == 2.0  # fixed: nothing drawn
    # one number per draw either way: the request mix drawn after it is the same
    kw = {"episode_duration": 100.0, "rate_scale": [0.5, 4.0], "prompt_scale": [0.5, 2.5]}
    plain, logd = _env(**kw).unwrapped, _env(**kw, rate_scale_draw="log").unwrapped
    for seed in range(3):
        plain.reset(seed=seed)
        logd.reset(seed=seed)
        assert plain.prompt_scale == logd.prompt_scale and 0.5 <= logd.rate_scale <= 4.0
        assert plain.rate_scale != logd.rate_scale
    with pytest.raises(ValueError, match="rate_scale_draw"):
        _env(rate_scale_draw="loguniform")


def test_bursty_arrivals_replay_under_their_seed_and_keep_the_request_count():
    kw = {"episode_duration": 120.0, "burst": 0.5}
    a, b = _env(**kw).unwrapped, _env(**kw).unwrapped
    plain = _env(episode_duration=120.0).unwrapped
    a.reset(seed=4)
    b.reset(seed=4)
    plain.reset(seed=4)
    np.testing.assert_array_equal(a.requests.arrival, b.requests.arrival)
    assert not np.array_equal(a.requests.arrival, plain.requests.arrival)
    assert a.burst == 0.5 and a.burst_window == 30.0
    with pytest.raises(ValueError, match="burst must be >= 0"):
        _env(burst=-0.1)
    with pytest.raises(ValueError, match="burst must be >= 0"):
        _env(burst=[0.8, 0.2])
    with pytest.raises(ValueError, match="burst_window"):
        _env(burst=0.5, burst_window=0)


def test_sampled_futures_in_blocks_replay_the_recent_arrivals_as_they_came():
    env = _env(episode_duration=120.0, future_sampler="blocks", burst=1.0)
    u = env.unwrapped
    env.reset(seed=3)
    for _ in range(45):  # 90 s in: the last 300 s of the trace hold the recent arrivals
        env.step(np.zeros(2, np.float32))
    a, now = u._reqs.arrival, float(u.sim.now)
    t = u.window_start + now
    t0 = max(t - u.future_history, float(a[0]))
    rng = np.random.default_rng(0)
    arrival, pick = u._blocks(rng, t0, t, 30.0 + 2.5)  # one whole block and part of a second
    assert len(pick) > 0 and np.all(np.diff(arrival) >= 0)
    assert np.all((arrival >= 0) & (arrival < 32.5)) and np.all(a[pick] < t)
    first = arrival < 30.0  # the first block: the trace's gaps between its requests, as they were
    np.testing.assert_allclose(np.diff(arrival[first]), np.diff(a[pick[first]]))
    assert np.all(np.diff(pick[first]) == 1)  # consecutive requests of the trace
    # through the env: the future after the clock, the present kept
    before = u.sim.requests.arrival[: u.sim._next].copy()
    u.resample_future(np.random.default_rng(1))
    future = u.sim.requests.arrival[u.sim._next :]
    assert len(future) > 0 and future[0] >= now and future[-1] < 120.0
    np.testing.assert_array_equal(u.sim.requests.arrival[: u.sim._next], before)
    with pytest.raises(ValueError, match="future_sampler"):
        _env(future_sampler="weekly")


def test_one_block_as_long_as_the_history_repeats_the_last_seconds_in_every_future():
    env = _env(episode_duration=120.0, future_sampler="blocks", burst=1.0,
               future_history=20.0, future_block=20.0)  # fmt: skip
    u = env.unwrapped
    assert (u.future_history, u.future_block) == (20.0, 20.0)
    env.reset(seed=3)
    for _ in range(30):  # 60 s in
        env.step(np.zeros(2, np.float32))
    a, now = u._reqs.arrival, float(u.sim.now)
    t = u.window_start + now
    recent = a[(a >= t - 20.0) & (a < t)] - (t - 20.0)  # the last 20 s, from their start
    assert len(recent) > 0
    futures = []
    for seed in (0, 1):
        snap = u.snapshot()
        u.resample_future(np.random.default_rng(seed))
        futures.append(u.sim.requests.arrival[u.sim._next :].copy())
        u.restore(snap)
    np.testing.assert_array_equal(futures[0], futures[1])  # nothing left to chance
    first = futures[0][futures[0] < now + 20.0] - now
    np.testing.assert_allclose(first, recent)
    second = futures[0][(futures[0] >= now + 20.0) & (futures[0] < now + 40.0)] - now - 20.0
    np.testing.assert_allclose(second, recent)
    for bad in ({"future_history": 0}, {"future_block": -1.0}, {"future_history": float("inf")},
                {"future_block": True}):  # fmt: skip
        with pytest.raises(ValueError, match=next(iter(bad))):
            _env(**bad)


def test_a_burst_range_draws_sigma_per_episode_and_a_fixed_one_draws_nothing():
    kw = {"episode_duration": 120.0}
    ranged = _env(burst=[0.0, 1.0], **kw).unwrapped
    sigmas = {ranged.reset(seed=s)[1]["burst"] for s in range(6)}
    assert len(sigmas) == 6 and all(0.0 <= x <= 1.0 for x in sigmas)
    again = _env(burst=[0.0, 1.0], **kw).unwrapped
    again.reset(seed=3)
    ranged.reset(seed=3)
    np.testing.assert_array_equal(again.requests.arrival, ranged.requests.arrival)
    # a fixed sigma takes no draw: its episodes are the ones it always replayed
    fixed, pinned = _env(burst=0.5, **kw).unwrapped, _env(burst=[0.5, 0.5], **kw).unwrapped
    fixed.reset(seed=3)
    pinned.reset(seed=3)
    assert fixed.burst == pinned.burst == 0.5
    np.testing.assert_array_equal(fixed.requests.arrival, pinned.requests.arrival)


def test_request_mix_scales_token_counts_per_episode_and_leaves_fixed_settings_alone():
    reqs = LLMRequests.from_arrays([0.0, 1.0, 5.0, 9.0], [100, 201, 3, 400], [5, 6, 1, 8])
    base = LLMAutoscalingEnv(dataset=reqs, episode_duration=None)
    base.reset(seed=3)
    assert base.requests.prompt_tokens.tolist() == [100, 201, 3, 400]
    fixed = LLMAutoscalingEnv(dataset=reqs, episode_duration=None, prompt_scale=2.0,
                              output_scale=0.5)  # fmt: skip
    _, info = fixed.reset(seed=3)
    assert info["prompt_scale"] == 2.0 and info["output_scale"] == 0.5
    assert fixed.requests.prompt_tokens.tolist() == [200, 402, 6, 800]
    assert fixed.requests.output_tokens.tolist() == [2, 3, 1, 4]  # rounded, at least 1
    assert fixed.requests.arrival.tolist() == base.requests.arrival.tolist()
    # a range: one factor per episode, from the reset seed, the rate's draw unchanged
    u = _env(episode_duration=100.0, rate_scale=[1.0, 3.0], prompt_scale=[0.5, 2.5]).unwrapped
    plain = _env(episode_duration=100.0, rate_scale=[1.0, 3.0]).unwrapped
    drawn = set()
    for seed in range(4):
        _, info = u.reset(seed=seed)
        plain.reset(seed=seed)
        assert 0.5 <= info["prompt_scale"] <= 2.5 and info["output_scale"] == 1.0
        assert u.rate_scale == plain.rate_scale
        drawn.add(round(info["prompt_scale"], 6))
    assert len(drawn) == 4
    for bad in (0.0, [2.0, 1.0], "x"):
        with pytest.raises(ValueError, match="prompt_scale"):
            _env(prompt_scale=bad)


def test_cost_reference_makes_the_cost_term_rate_invariant():
    refs = []
    for rs in (1.0, 4.0):
        u = _env(rate_scale=rs, episode_duration=300.0).unwrapped
        u.reset(seed=0)
        refs.append(u.reward_calc.cost_reference)
    assert refs[1] > 2.5 * refs[0]  # 4x the load: a reference cluster about 4x as big
    start = _env(cost_reference="start").unwrapped
    start.reset(seed=0)
    _, _, _, _, info = start.step(np.zeros(2))
    assert info["reward_components"]["cost"] == pytest.approx(1.0, rel=1e-6)


def test_render_ansi():
    env = _env(render_mode="ansi")
    env.reset(seed=0)
    env.step(np.zeros(2))
    text = env.render()
    assert "prompt" in text and "token" in text and "slo=" in text


def test_compare_runs_the_env_policies():
    from rlsched.evaluate import compare

    rep = compare(ENV_ID, None, "all", episodes=1, seed=0, env_kwargs={"episode_duration": 40.0})
    assert [r["policy"] for r in rep["results"]] == list(BASELINES)
    assert rep["dataset"] == "azure-llm:code"  # the default preset, code-1x
    for r in rep["results"]:
        assert r["metrics"]["requests"] > 0


def _play(env: gym.Env, act) -> tuple[list[float], list[np.ndarray], dict]:
    obs, _ = env.reset(seed=3)
    gaps, seen, done, info = [], [obs], False, {}
    while not done:
        obs, _, term, trunc, info = env.step(act(obs))
        gaps.append(info["reward_components"]["gap"])
        seen.append(obs)
        done = term or trunc
    return gaps, seen, info


def test_an_slo_reference_charges_only_the_misses_beyond_hpas_on_the_same_episode():
    from rlsched.policies.registry import make_policy

    kw = {"episode_duration": 60.0, "rate_scale": 3.0, "reward_weights": {
        "slo": 0.0, "slo_target": 0.9, "slo_penalty": 20.0}}  # fmt: skip
    env, plain = _env(slo_reference="hpa", **kw), _env(**kw)
    mask = env.unwrapped.action_masks()
    hpa = make_policy("hpa", env, seed=0)
    gaps, seen, _ = _play(env, lambda o: hpa.act(o, mask))
    assert gaps and all(g == 0.0 for g in gaps)  # HPA itself is never behind HPA
    # the reference is played in a snapshot: the episode itself is the one without it
    hpa = make_policy("hpa", plain, seed=0)
    _, seen_plain, _ = _play(plain, lambda o: hpa.act(o, mask))
    assert all(np.array_equal(a, b) for a, b in zip(seen, seen_plain, strict=True))
    # starving both pools misses far more; the gaps add up to the excess over HPA's misses,
    # the queue left at the last decision included (charged once it has drained)
    u = env.unwrapped
    gaps, _, info = _play(env, lambda o: np.array([-1.0, -1.0]))
    ref, calc = u.reward_calc.reference_misses, u.reward_calc
    assert info["metrics"]["slo_attainment"] < 0.5 and u._missed_all() > ref[-1]
    expected = (u._missed_all() - ref[-1]) / calc.requests_per_interval
    assert sum(gaps) == pytest.approx(expected)
    with pytest.raises(ValueError, match="slo_reference"):
        _env(slo_reference="kubernetes")


def test_a_snapshots_decision_log_is_untouched_by_the_episodes_end():
    """Snapshots copy the decision log one level deep (``snapshot_shallow``): the reward the
    episode's end settles replaces the last record, so the record a snapshot shares stays."""
    kw = {"episode_duration": 60.0, "rate_scale": 3.0, "reward_weights": {
        "slo": 0.0, "slo_target": 0.9, "slo_penalty": 20.0}}  # fmt: skip
    env = _env(slo_reference="hpa", **kw)
    u = env.unwrapped
    env.reset(seed=3)
    starve = np.array([-1.0, -1.0])
    done = False
    while not done:
        snap, before = u.snapshot(), [dict(h) for h in u.history]
        _, reward, term, trunc, _ = env.step(starve)
        done = term or trunc
    assert u.history[-1]["reward"] == reward  # the settled reward, the queue left included
    u.restore(snap)
    assert u.history == before and u.history[-1] is snap.state["history"][-1]


def test_slo_dual_charges_each_bucket_its_multiplier_and_reports_the_violation():
    kw = {"episode_duration": 60.0, "rate_scale": 3.0, "slo_reference": "hpa",
          "reward_weights": {"slo": 0.0, "slo_target": 0.9, "slo_penalty": 20.0}}  # fmt: skip
    env = _env(slo_dual={"lr": 10.0, "margin": 0.01}, **kw)
    u = env.unwrapped
    _, info = env.reset(seed=3)
    key = info["slo_dual_bucket"]
    assert key.startswith("load2-")
    gaps, _, info = _play(env, lambda o: np.array([-1.0, -1.0]))  # starved: far behind HPA
    ref, total = u.reward_calc.reference_misses, u.sim.results()["total_requests"]
    out = info["slo_dual"]
    assert out["bucket"] == key and out["multiplier"] == 20.0
    assert out["violation"] == pytest.approx((u._missed_all() - ref[-1]) / total + 0.01)
    assert out["violation"] > 0.2
    # a table handed in (as the training loop does) sets the episode's multiplier, and
    # the rewards scale with it: the same starved episode pays 3x the gap penalty at 60
    env.reset(seed=3)
    u.set_slo_dual_table({key: 60.0})  # read at the first decision, as after an autoreset
    gaps60, _, info60 = _play(env, lambda o: np.array([-1.0, -1.0]))
    assert gaps60 == pytest.approx(gaps) and info60["slo_dual"]["multiplier"] == 60.0
    with pytest.raises(ValueError, match="slo_dual"):
        _env(slo_dual={}, episode_duration=60.0)  # no penalty to learn a multiplier for
    with pytest.raises(Exception, match="unknown slo_dual"):
        _env(slo_dual={"rate": 1.0}, **kw)


def test_slo_dual_update_moves_one_bucket_within_its_bounds():
    from rlsched.envs.llm_rl import SLODual

    d = SLODual(lr=50.0, low=5.0, high=40.0, init=20.0)
    assert d.bucket(0.7, 8.0) == "load0-mix0" and d.bucket(3.0, 70.0) == "load2-mix2"
    assert d.update("load0-mix0", 0.1) == 25.0  # short by 10 points: up by lr x 0.1
    assert d.update("load0-mix0", -1.0) == 5.0  # held with room: down, not below low
    assert d.update("load2-mix2", 1.0) == 40.0 and d.multiplier("load1-mix1") == 20.0


def test_a_cost_penalty_charges_only_the_cost_spent_beyond_hpas_on_the_same_episode():
    from rlsched.policies.registry import make_policy

    kw = {"episode_duration": 60.0, "rate_scale": 1.0, "slo_reference": "hpa",
          "reward_weights": {"slo": 0.0, "slo_target": 0.9, "slo_penalty": 20.0,
                             "cost_penalty": 3.0}}  # fmt: skip
    env = _env(**kw)
    u, mask = env.unwrapped, env.unwrapped.action_masks()

    def play(act):
        obs, _ = env.reset(seed=5)
        over, rewards, done = [], [], False
        while not done:
            obs, _, term, trunc, info = env.step(act(obs))
            over.append(info["reward_components"]["cost_over"])
            rewards.append(info["reward_components"])
            done = term or trunc
        return over, rewards

    hpa = make_policy("hpa", env, seed=0)
    over, _ = play(lambda o: hpa.act(o, mask))
    assert over and all(x == 0.0 for x in over)  # HPA never spends more than HPA
    over, comps = play(lambda o: np.array([1.0, 1.0]))  # scale both pools up every decision
    ref = u.reward_calc.reference_costs
    assert ref is not None and len(ref) == u.steps_total + 1
    assert sum(over) == pytest.approx(u.reward_calc.cost_spent - ref[-1]) and sum(over) > 0
    for c in comps:  # the term is in the reward at its weight
        rest = -0.5 * c["cost"] - 0.1 * c["switches"] - 0.05 * c["magnitude"] - 20 * c["gap"]
        assert c["reward"] == pytest.approx(rest - 3.0 * c["cost_over"])
    with pytest.raises(ValueError, match="cost_penalty"):
        _env(episode_duration=60.0, reward_weights={"cost_penalty": 1.0})


def test_advance_is_step_without_the_observation_and_a_trial_over_it_decides_alike():
    """``advance`` (what a blind heuristic's rollouts call) gives ``step``'s rewards, ends and
    metrics; a trial guard whose anchor is advanced takes the same decisions as one whose
    anchor steps."""
    from rlsched.policies.llm import RandomScalingPolicy, ThresholdPolicy
    from rlsched.policies.trial import TrialGuard

    stepped, advanced = _env(dataset="azure-llm:code"), _env(dataset="azure-llm:code")
    for env in (stepped, advanced):
        env.reset(seed=3)
    a_pol, b_pol = ThresholdPolicy(stepped), ThresholdPolicy(advanced)
    assert not a_pol.reads_observation
    done, n = False, 0
    while not done:
        _, r, te, tr, info = stepped.step(a_pol.act(None, stepped.unwrapped.action_masks()))
        r2, te2, tr2, info2 = advanced.unwrapped.advance(b_pol.act(None, None))
        assert (r, te, tr) == (r2, te2, tr2)
        done, n = te or tr, n + 1
    assert info["metrics"] == info2["metrics"] and n > 10

    played = []
    for blind in (True, False):
        env = _env(dataset="azure-llm:code")
        anchor = ThresholdPolicy(env)
        anchor.reads_observation = not blind  # stepped: the env builds every observation
        guard = TrialGuard(env, RandomScalingPolicy(env, 0), anchor, "threshold", seed=0, futures=2,
                           horizon=None, every=5)  # fmt: skip
        obs, _ = env.reset(seed=4)
        guard.reset(4)
        acts, gains, done = [], [], False
        while not done:
            acts.append(np.asarray(guard.act(obs, env.unwrapped.action_masks())).tolist())
            gains.append(None if guard.last_gain is None else guard.last_gain.tolist())
            obs, _r, te, tr, _ = env.step(acts[-1])
            done = te or tr
        played.append((acts, gains, guard.trials))
    assert played[0] == played[1] and played[0][2] > 2
    assert any(g is not None and any(g) for g in played[0][1])  # trials that told them apart


def test_an_unrewarded_advance_keeps_the_simulator_and_metrics_and_must_be_restored():
    """``advance(a, rewarded=False)`` (a trial's rollouts scored by metrics alone): the same
    ends and metrics as ``advance(a)``, the reward NaN and no history record; stepping with
    rewards after it raises until a snapshot is restored. With ``slo_dual`` (whose update
    reads the rewards' misses) it is rewarded as before."""
    from rlsched.policies.llm import ThresholdPolicy

    full, lean = _env(dataset="azure-llm:code"), _env(dataset="azure-llm:code")
    for env in (full, lean):
        env.reset(seed=3)
    snap = lean.unwrapped.snapshot()
    a_pol, b_pol = ThresholdPolicy(full), ThresholdPolicy(lean)
    records = len(lean.unwrapped.history)
    done, n = False, 0
    while not done:
        r, te, tr, info = full.unwrapped.advance(a_pol.act(None, None))
        r2, te2, tr2, info2 = lean.unwrapped.advance(b_pol.act(None, None), rewarded=False)
        assert math.isfinite(r) and math.isnan(r2) and (te, tr) == (te2, tr2)
        assert info["time"] == info2["time"] and info["scaling"] == info2["scaling"]
        done, n = te or tr, n + 1
    assert repr(info["metrics"]) == repr(info2["metrics"]) and n > 10  # NaNs alike too
    assert info["metrics"]["requests"] > 0
    assert len(lean.unwrapped.history) == records  # nothing recorded
    lean.unwrapped.restore(snap)
    b_pol.reset()
    lean.unwrapped.advance(b_pol.act(None, None), rewarded=False)
    with pytest.raises(RuntimeError, match="restore a snapshot"):
        lean.step(np.zeros(2, np.float32))
    lean.unwrapped.restore(snap)
    _, r, _, _, _ = lean.step(np.zeros(2, np.float32))  # rewarded again after the restore
    assert math.isfinite(r)

    dual = _env(slo_dual={"lr": 10.0, "margin": 0.01}, reward_weights={"slo_target": 0.9})
    dual.reset(seed=5)
    r, *_ = dual.unwrapped.advance(np.zeros(2, np.float32), rewarded=False)
    assert math.isfinite(r)


def test_oracle_steps_set_the_searchs_candidates_and_bad_ones_are_refused():
    """By default the oracle's candidates are hold or one full scale step in one pool;
    ``oracle_steps=[1, 5]`` adds single instances, largest drain first in each pool."""
    def delta(u, a):  # the instances an action asks for, per pool
        return [round_half_away(float(x) * u.action_scale_step) for x in a]

    u = _env().unwrapped
    deltas = [delta(u, a) for a in u.oracle_candidates()]
    assert deltas == [[0, 0], [-5, 0], [5, 0], [0, -5], [0, 5]]
    fine = _env(oracle_steps=[5, 1]).unwrapped
    deltas = [delta(fine, a) for a in fine.oracle_candidates()]
    assert deltas == [[0, 0], [-5, 0], [-1, 0], [1, 0], [5, 0], [0, -5], [0, -1], [0, 1],
                      [0, 5]]  # fmt: skip
    for bad in ([], [0], [6], [1.5], [True]):
        with pytest.raises(ValueError, match="oracle_steps must be whole numbers"):
            _env(oracle_steps=bad)
