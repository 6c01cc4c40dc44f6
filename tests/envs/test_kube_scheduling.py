"""KubeScheduling-v0: the plugin's state vector, the four action kinds, masks, the plugin score,
heuristics and a short training run."""

import math
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rlsched  # noqa: F401
from rlsched.envs.kube_scheduling import GIB, KubeSchedulingEnv
from rlsched.evaluate import compare, evaluate, make_env
from rlsched.policies.registry import applicable_heuristics, make_policy


def pod(cpu, mem=GIB // 4, duration=10.0, arrival=0.0, priority=1):
    return {
        "cpu": cpu,
        "memory": mem,
        "duration": duration,
        "arrival": arrival,
        "priority": priority,
    }


def make(nodes, pods, **kw) -> KubeSchedulingEnv:
    kw.setdefault("scenario", "note")  # pods scheduled one by one (the gang preset: below)
    env = KubeSchedulingEnv(nodes=nodes, dataset=pods, episode_length=len(pods), **kw)
    env.reset(seed=0)
    return env


def test_registered_with_plugin_dimensions() -> None:
    env = gym.make("rlsched/KubeScheduling-v0")
    assert env.observation_space.shape == (16,)
    assert env.action_space.n == 16
    big = gym.make("rlsched/KubeScheduling-v0", num_nodes=100, scenario="note")
    obs, _ = big.reset(seed=1)
    assert obs.shape == (202,) and big.action_space.n == 202
    cpu = big.unwrapped.allocatable[:, 0]
    assert set(cpu.tolist()) <= {4000, 8000, 16000, 32000}
    assert np.array_equal(big.unwrapped.allocatable[:, 1], cpu // 1000 * 4 * GIB)


def test_state_vector_layout_and_scaling() -> None:
    env = make(
        [(4000, 8 * GIB), (2000, 4 * GIB)],
        [pod(1000, 2 * GIB, arrival=0.0), pod(500, GIB, arrival=0.0)],
    )
    obs = env._observation()
    np.testing.assert_allclose(obs, [0, 0, 0, 0, 1000 / 100000, 2.0])
    obs, *_ = env.step(0)  # bind pod 0 on node 0
    np.testing.assert_allclose(obs, [0.25, 0.25, 0, 0, 500 / 100000, 1.0], rtol=1e-6)
    obs, *_ = env.step(1)  # pod 1 on node 1
    np.testing.assert_allclose(obs, [0.25, 0.25, 0.25, 0.25, 0, 0], rtol=1e-6)
    assert obs.dtype == np.float32


def test_bind_uses_resources_and_completion_frees_them() -> None:
    env = make([(1000, GIB)], [pod(1000, duration=10.0), pod(1000, arrival=0.0)])
    # bind, no preempt (it fits), delay (a pod is queued behind), reject
    assert env.action_masks().tolist() == [True, False, True, True]
    env.step(0)
    assert env._used[0].tolist() == [1000, GIB // 4]
    # pod 1 fits nowhere, same priority: only delay or reject
    assert env.action_masks().tolist() == [False, False, True, True]
    env.step(2)  # delay: the clock moves to the completion
    assert env._now == 10.0 and env._used[0].tolist() == [0, 0]
    assert env.action_masks()[0]
    _, _, term, _, info = env.step(0)
    assert term and info["wait"] == 10.0
    assert info["metrics"]["delays"] == 1 and info["metrics"]["mean_wait"] == 5.0


def test_preempt_evicts_only_needed_lower_priority_pods_and_requeues_them() -> None:
    pods = [
        pod(1000, priority=0, duration=50),  # A
        pod(500, priority=0, duration=50),  # B
        pod(500, priority=1, duration=50),  # C
        pod(1000, priority=2, arrival=1.0),  # D
        pod(2000, priority=0, arrival=1.0),  # E: can never preempt
    ]
    env = make([(2000, 4 * GIB)], pods)
    for _ in range(3):
        assert env.action_masks()[0]
        env.step(0)
    assert env._now == 1.0 and env._queue[0] == 3
    m = env.action_masks()
    assert m.tolist() == [False, True, True, True]  # no fit, preempt, delay, reject
    credit_a = env._credit[0]
    _, r, _, _, info = env.step(1)
    assert info["evicted"] == [0]  # A alone frees enough; B and C are reprieved
    assert set(env._node_pods[0]) == {1, 2, 3}
    assert env._used[0, 0] == 2000
    assert list(env._queue) == [4, 0]  # A back in the queue behind E
    # D's credit minus A's credit back and the eviction cost 2 (1 + priority 0) / L
    assert r == pytest.approx(env._credit[3] - credit_a - 2 * 1 / 5)
    # E (priority 0) can never preempt; A restarts from scratch later
    assert not env.action_masks()[1]
    env.step(3)  # reject E
    assert env._queue[0] == 0 and not env.action_masks()[1]  # equal priority: no preempt
    env.step(2)  # delay A until the next completion (D at t=11)
    assert env._now == 11.0
    _, _, term, _, info = env.step(0)
    assert term
    met = info["metrics"]
    assert met["preemptions"] == 1 and met["preempt_actions"] == 1 and met["rejections"] == 1
    assert env._bind_time[0] == 11.0  # rebinding restarts the pod: completes at 11 + 50


def test_preempt_not_offered_when_pod_fits() -> None:
    env = make([(2000, GIB), (1000, GIB)], [pod(1000, priority=0), pod(1000, priority=2)])
    env.step(0)
    # fits on node 0 and on node 1: no preemption anywhere
    assert env.action_masks().tolist() == [True, True, False, False, True, True]


def test_delay_cap_and_delay_waits_for_next_event() -> None:
    pods = [pod(1000, duration=10), pod(1000), pod(100, arrival=3.0, duration=1.0)]
    env = make([(1000, GIB)], pods, max_delays=1)
    env.step(0)
    env.step(2)  # delay pod 1: next event is pod 2 arriving at 3
    assert env._now == 3.0 and list(env._queue) == [1, 2]
    assert env.action_masks().tolist() == [False, False, False, True]  # cap reached
    _, r, _, _, _ = env.step(3)
    assert r == pytest.approx(-1.0 / 3)
    assert env.metrics()["rejections"] == 1


def test_delay_invalid_when_nothing_can_change() -> None:
    env = make([(1000, GIB)], [pod(2000)])  # too big for the only node, alone
    assert env.action_masks().tolist() == [False, False, False, True]


def test_invalid_action_ends_episode_with_penalty() -> None:
    env = make([(1000, GIB)], [pod(1000), pod(1000)])
    _, r, term, _, info = env.step(1)  # preempt: not valid
    assert term and info["invalid_action"] and info["metrics"]["invalid_actions"] == 1
    assert r == pytest.approx(-(25 * 2 / 2 + 8 * 2 / 2))


def test_plugin_score_and_rewards_on_hand_computed_episode() -> None:
    nodes = [(2000, 4 * GIB), (2000, 4 * GIB)]
    pods = [
        pod(1000, GIB, duration=10.0),  # large (>= 1000 m)
        pod(500, GIB // 2, duration=20.0),
        pod(500, GIB // 2, duration=5.0),
    ]
    env = make(nodes, pods)
    rewards = [env.step(a)[1] for a in (0, 1)]
    *_, r3, term, _, info = env.step(5)  # reject
    assert term
    m = info["metrics"]
    match = 3 / math.sqrt(10)  # request (2:1) against an empty node (1:1)
    var = (0.0625 + 0.015625 + 0.015625) / 3
    expected = (
        10 * 2 / 3
        + 5 * math.exp(0.0)
        + 5 * math.exp(-15 / 100)
        + 3 * math.exp(-10 * var)
        + 2 * match
        + 8 * 1.0
    )
    assert m["completion_rate"] == pytest.approx(2 / 3)
    assert m["mean_wait"] == 0 and m["mean_jct"] == pytest.approx(15)
    assert m["cpu_util_var"] == pytest.approx(var)
    assert m["resource_match"] == pytest.approx(match)
    assert m["plugin_score"] == pytest.approx(expected)
    r1 = (10 + 5 + 5 * math.exp(-0.1) + 2 * match + 3 * math.exp(-10 * 0.0625)) / 3 + 8
    r2 = (10 + 5 + 5 * math.exp(-0.2) + 2 * match + 3 * math.exp(-10 * 0.015625)) / 3
    assert rewards == pytest.approx([r1, r2])
    assert r3 == pytest.approx(-1 / 3)


def _check_invariants(env: KubeSchedulingEnv) -> None:
    alloc = env.allocatable
    for i in range(env.num_nodes):
        on = list(env._node_pods[i])
        used = [sum(env._cpu_l[q] for q in on), sum(env._mem_l[q] for q in on)]
        assert env._used[i].tolist() == used
    assert (env._used >= 0).all() and (env._used <= alloc).all()
    for p in range(3):
        low = [
            [
                sum(getattr(env, f)[q] for q in env._node_pods[i] if env._prio_l[q] < p)
                for i in range(env.num_nodes)
            ]
            for f in ("_cpu_l", "_mem_l")
        ]
        assert env._low[p].tolist() == low
    np.testing.assert_allclose(env._ucpu, env._used[:, 0] / alloc[:, 0])
    np.testing.assert_allclose(env._cpu_var(), np.var(env._used[:, 0] / alloc[:, 0]), atol=1e-12)
    if env._done:
        return
    j = env._queue[0]
    d = np.array([env._cpu_l[j], env._mem_l[j]])
    p = env._prio_l[j]
    mask = env.action_masks()
    N = env.num_nodes
    for i in range(N):
        free = alloc[i] - env._used[i]
        low = [
            sum(getattr(env, f)[q] for q in env._node_pods[i] if env._prio_l[q] < p)
            for f in ("_cpu_l", "_mem_l")
        ]
        fits = bool((free >= d).all())
        assert mask[i] == fits
        assert mask[N + i] == (not fits and bool((free + low >= d).all()))
    assert mask[2 * N + 1]


pods_st = st.lists(
    st.tuples(
        st.sampled_from([250, 500, 1000, 2000, 3000]),
        st.sampled_from([GIB // 8, GIB // 2, GIB, 3 * GIB]),
        st.floats(0.5, 30.0),
        st.floats(0.0, 20.0),
        st.integers(0, 2),
    ),
    min_size=1,
    max_size=30,
)


@settings(max_examples=30)
@given(
    nodes=st.lists(
        st.tuples(st.sampled_from([1000, 2000, 4000]), st.sampled_from([GIB, 4 * GIB])),
        min_size=1,
        max_size=4,
    ),
    pods=pods_st,
    seed=st.integers(0, 2**16),
)
def test_masked_random_play_keeps_resources_within_allocatable(nodes, pods, seed) -> None:
    env = make(nodes, [pod(c, m, d, a, p) for c, m, d, a, p in pods], max_delays=3)
    rng = np.random.default_rng(seed)
    _check_invariants(env)
    done, steps = False, 0
    while not done:
        valid = np.flatnonzero(env.action_masks())
        obs, _, done, _, info = env.step(int(rng.choice(valid)))
        assert env.observation_space.contains(obs)
        assert not info.get("invalid_action")
        _check_invariants(env)
        steps += 1
        assert steps < 10_000
    m = info["metrics"]
    assert m["completion_rate"] * len(pods) + m["rejections"] == pytest.approx(len(pods))


@pytest.mark.parametrize("num_nodes", [3, 7])
def test_every_heuristic_plays_full_episodes_validly(num_nodes: int) -> None:
    env = make_env(
        "rlsched/KubeScheduling-v0", num_nodes=num_nodes, episode_length=120, scenario="note"
    )
    names = applicable_heuristics(env)
    assert {"k8s_balanced", "k8s_least_allocated", "k8s_most_allocated", "best_fit"} <= set(names)
    for name in names:
        for res in evaluate(make_policy(name, env, seed=0), env, episodes=2, seed=0):
            assert res.metrics["invalid_actions"] == 0, name
            assert res.metrics["pods"] == 120


def test_synthetic_dataset_and_load_scaling() -> None:
    env = KubeSchedulingEnv(
        dataset="synthetic:placement?workflows=5&tasks=10", load=0.8, scenario="note"
    )
    obs, _ = env.reset(seed=0)
    assert obs.shape == (16,)
    steps, done = 0, False
    while not done:
        _, _, done, _, info = env.step(int(env.action_masks().argmax()))
        steps += 1
    assert steps >= 50 and info["metrics"]["pods"] == 50


def test_render_ansi() -> None:
    env = KubeSchedulingEnv(render_mode="ansi", num_nodes=3)
    env.reset(seed=0)
    env.step(int(env.action_masks().argmax()))
    text = env.render()
    assert "node-2" in text and "pending pod" in text


def test_train_mlp_then_compare_learned(tmp_path: Path) -> None:
    from rlsched.train import TrainConfig, train

    cfg = TrainConfig(
        env_id="rlsched/KubeScheduling-v0",
        dataset="alibaba:cloudsimpy-jobs?part=train",
        eval_dataset=None,
        policy_net="mlp",
        total_steps=512,
        n_envs=2,
        n_steps=128,
        batch_size=64,
        n_epochs=2,
        eval_freq=256,
        eval_episodes=1,
        tensorboard=False,
        env_kwargs={"episode_length": 40},
    )
    res = train(cfg, tmp_path / "run", progress=False)
    assert (res.model_dir / "vecnormalize.pkl").is_file()
    rep = compare(
        "rlsched/KubeScheduling-v0",
        None,
        f"k8s_balanced,learned:{tmp_path / 'run'}",
        episodes=1,
        env_kwargs={"episode_length": 40},
    )
    rows = {r["policy"].split(":")[0]: r for r in rep["results"]}
    assert rows["learned"]["metrics"]["invalid_actions"] == 0
    assert rows["k8s_balanced"]["metrics"]["invalid_actions"] == 0


# ------------------------------------------------------------------ gang mode (the gang preset)
def gang_env(nodes, pods, **kw) -> KubeSchedulingEnv:
    env = KubeSchedulingEnv(
        nodes=nodes, dataset=pods, episode_length=len(pods), gang=True, max_delays=5,
        scenario="note", **kw,  # the note's arguments (no load scaling) with gangs on
    )
    env.reset(seed=0)
    return env


def test_gang_pods_start_together_and_jct_is_the_jobs() -> None:
    # job 0: two pods (10 s and 30 s); job 1: one pod; two nodes of 1 core
    pods = [
        {**pod(1000, duration=10.0), "job": 0},
        {**pod(1000, duration=30.0), "job": 0},
        {**pod(1000, duration=5.0, arrival=1.0), "job": 1},
    ]
    env = gang_env([(1000, GIB), (1000, GIB)], pods)
    assert env.main_metric == "mean_job_jct" and env.main_metric_direction == "lower"
    m = env.action_masks()
    assert not m[5]  # reject is a last resort in gang mode: binding is possible
    env.step(0)  # first pod of job 0 reserved on node 0: nothing runs yet
    assert env._timeline.peek_time() == np.inf
    env.step(1)  # the gang's last pod: both start at 0
    assert len(env._timeline) == 2
    # job 1 arrives at 1 s; no node is free until 10 s: it waits (delay), then binds
    assert env.action_masks()[4] and not env.action_masks()[:2].any()
    env.step(4)
    assert env._now == 10.0
    *_, done, _, info = env.step(0)
    assert done
    m = info["metrics"]
    # job 0: 30 s; job 1: arrived at 1, ran 10..15: 14 s
    assert m["mean_job_jct"] == pytest.approx((30.0 + 14.0) / 2)
    assert m["makespan"] == pytest.approx(30.0) and m["jobs_rejected"] == 0


def test_gang_delay_takes_back_the_partial_placement() -> None:
    pods = [
        {**pod(1000, duration=50.0), "job": 0},
        {**pod(1000), "job": 1},
        {**pod(1000), "job": 1},
    ]
    env = gang_env([(1000, GIB), (1000, GIB)], pods)
    env.step(0)  # job 0 runs on node 0
    _, r1, *_ = env.step(1)  # job 1's first pod reserved on node 1
    assert env._used[:, 0].tolist() == [1000, 1000]
    m = env.action_masks()
    assert not m[:4].any() and m[4] and not m[5]  # it fits nowhere: delay, not reject
    _, r, *_ = env.step(4)  # delay parks the whole gang and frees what it held
    assert r == pytest.approx(-r1)
    assert env._now == 50.0 and env._used[:, 0].tolist() == [0, 0]
    env.step(0)
    *_, done, _, info = env.step(1)
    assert done
    assert info["metrics"]["mean_job_jct"] == pytest.approx((50.0 + 60.0) / 2)
    assert info["metrics"]["delays"] == 1


def test_gang_preemption_evicts_the_whole_victim_gang() -> None:
    pods = [
        {**pod(1000, duration=50.0, priority=0), "job": 0},
        {**pod(1000, duration=50.0, priority=0), "job": 0},
        {**pod(1000, duration=5.0, arrival=1.0, priority=2), "job": 1},
    ]
    env = gang_env([(1000, GIB), (1000, GIB)], pods)
    env.step(0)
    env.step(1)
    m = env.action_masks()
    assert m[2] and m[3]  # the high-priority pod may preempt on either node
    _, _, _, _, info = env.step(2)  # preempt on node 0: job 0 loses both pods
    assert sorted(info["evicted"]) == [0, 1]
    assert env._used[:, 0].tolist() == [1000, 0]
    assert env.metrics()["preemptions"] == 2


def test_gang_binpack_places_whole_gangs_or_delays() -> None:
    from rlsched.policies.gang import GangBinpackPolicy

    pods = [
        {**pod(1000), "job": 0},
        {**pod(1000), "job": 0},
        {**pod(1000, duration=5.0), "job": 1},
        {**pod(1000, duration=5.0), "job": 1},
    ]
    env = gang_env([(2000, GIB), (1000, GIB)], pods)
    pol = GangBinpackPolicy(env)
    # binpack: the node most requested after placement, the 1-core one first
    assert pol.act(env._observation(), env.action_masks()) == 1
    env.step(1)
    assert pol.act(env._observation(), env.action_masks()) == 0
    env.step(0)
    # job 1 needs 2 cores, 1 is free: the gang waits whole instead of taking that core
    m = env.action_masks()
    assert m[0] and pol.act(env._observation(), m) == 4
    assert "gang_binpack" in applicable_heuristics(env)


def test_gang_preset_is_the_default_and_windows_hold_whole_jobs() -> None:
    env = gym.make("rlsched/KubeScheduling-v0").unwrapped
    assert env.preset == "gang" and env.gang
    assert env.observation_space.shape == (16,)  # the note's 7 nodes: 2N + 2
    env.reset(seed=3)
    jobs = env._job_l
    assert env._L >= 400
    # whole jobs, each job's pods contiguous and arriving together
    assert np.all(np.diff(jobs) >= 0)
    arr = np.asarray(env._arr_l)
    for g in range(int(jobs.max()) + 1):
        assert np.ptp(arr[jobs == g]) == 0


@pytest.mark.parametrize("gang", [True, False])
def test_compiled_step_plays_the_numpy_steps_episodes(monkeypatch, gang: bool) -> None:
    """With numba the mask and a pod's placement are compiled (rlsched.envs.kube_kernels):
    masks, rewards, node state and metrics at every step are those of the numpy step."""
    import rlsched.envs.kube_scheduling as ks

    pytest.importorskip("numba")
    kernels = ks._kernels()
    assert kernels is not None
    nodes = [(2000, 9 * GIB)] * 3  # small nodes: full often, so preemptions are offered

    def play(compiled: bool) -> list:
        monkeypatch.setattr(ks, "_KERNELS", kernels if compiled else False)
        env = KubeSchedulingEnv(nodes=nodes, episode_length=80, gang=gang)
        env.reset(seed=11)
        rng = np.random.default_rng(3)
        out, done = [], False
        while not done:
            mask = env.action_masks()
            a = int(rng.choice(np.flatnonzero(mask)))  # preemptions, delays and rejections too
            obs, r, term, trunc, info = env.step(a)
            out.append((mask.tolist(), a, r, obs.tolist(), env._low.tolist(), env._ucpu.tolist()))
            done = term or trunc
        out.append(info["metrics"])
        return out

    compiled, plain = play(True), play(False)
    assert len(compiled) > 100
    assert compiled == plain
    if gang:  # preemptions offered (and taken) in these episodes
        assert any(any(step[0][3:6]) for step in compiled[:-1])
