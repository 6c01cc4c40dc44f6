"""WorkflowOffloading-v0: the timing model, masks, loader edge cases, planning API."""

import copy

import gymnasium as gym
import numpy as np
import pytest

import rlsched  # noqa: F401
from rlsched.core.offloading import check_schedule, simulate
from rlsched.core.workload import Task, Workflow
from rlsched.envs.workflow_offloading import WorkflowOffloadingEnv


def _play(env: WorkflowOffloadingEnv, seed: int, pick=None):
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    done, info, steps = False, {}, 0
    while not done:
        mask = env.action_masks()
        valid = np.flatnonzero(mask)
        a = pick(env, mask) if pick else int(rng.choice(valid))
        _, r, done, _, info = env.step(a)
        assert np.isfinite(r) and not info.get("invalid_action", False)
        steps += 1
    return info, steps


def test_random_play_valid_and_matches_simulate() -> None:
    env = WorkflowOffloadingEnv(num_workflows=3)
    for seed in range(3):
        info, steps = _play(env, seed)
        m = info["metrics"]
        assert m["tasks"] == steps and m["workflows"] == 3
        assert np.isnan(m["optimality_gap"])
        log = env.schedule_log()
        # every server within capacity across all workflows, every dependency respected
        for s, srv in enumerate(env.servers):
            if srv.is_cloud:
                continue
            runs = [r for r in log if r["server"] == s]
            for r in runs:
                live = [u for u in runs if u["start"] <= r["start"] < u["finish"]]
                wfs = [env._wf[u["workflow"]].tasks[u["task"]] for u in live]
                assert sum(t.cpu for t in wfs) <= srv.cpu + 1e-9
                assert sum(t.mem for t in wfs) <= srv.mem + 1e-9
        for w, inst in enumerate(env._wf):
            rows = {r["task"]: r for r in log if r["workflow"] == w}
            for t, task in enumerate(inst.tasks):
                for p in task.parents:
                    assert rows[t]["start"] >= rows[p]["finish"] - 1e-9


def test_the_mask_is_the_current_tasks_hosts_at_every_step_and_a_copy() -> None:
    """The hosts of a task are computed once per task (the observation, the mask and the
    policies read them at every step): at every decision, of every workflow and after a
    restore, they are the current task's, and changing a returned mask changes nothing."""
    wfs = [  # a task only the cloud can host beside tasks every server can
        Workflow("small", [Task("t", "x", 3.0), Task("u", "x", 1.0, (0,))]),
        Workflow("big", [Task("a", "x", 2.0), Task("b", "y", 5.0, (0,), cores=64.0)]),
    ]
    env = WorkflowOffloadingEnv(dataset=wfs, num_workflows=8, num_nodes=3)
    rng = np.random.default_rng(0)
    env.reset(seed=4)
    snap, done, steps, seen = env.snapshot(), False, 0, set()
    while not done:
        w, t = env._wf[env._w], env._task
        hosts = [w.can_host(t, s) for s in range(env.num_servers)]
        seen.add(tuple(hosts))
        mask = env.action_masks()
        assert mask.tolist() == hosts
        mask[:] = ~mask
        assert env.action_masks().tolist() == hosts
        _, _, done, _, _ = env.step(int(rng.choice(np.flatnonzero(hosts))))
        steps += 1
        if steps == 5:  # back to the start: the first task's hosts again
            env.restore(snap)
            w, t = env._wf[env._w], env._task
            assert env.action_masks().tolist() == [w.can_host(t, s) for s in range(env.num_servers)]
    assert steps > 10 and len(seen) == 2  # the cloud-only task's hosts and the others'


def test_single_workflow_equals_simulate() -> None:
    env = WorkflowOffloadingEnv(num_workflows=1, cache_size=None)
    for seed in range(4):
        _play(env, seed)
        inst = env.current_instance()
        log = env.schedule_log()
        server = [0] * len(inst.tasks)
        for r in log:
            server[r["task"]] = r["server"]
        s = simulate(inst, server, order=[r["task"] for r in log])
        check_schedule(inst, s)
        for r in log:
            assert r["start"] == pytest.approx(s.start[r["task"]])
            assert r["finish"] == pytest.approx(s.finish[r["task"]])
            assert r["pulled"] == s.pulled[r["task"]]


def test_estimate_is_pure_and_deepcopy_independent() -> None:
    env = WorkflowOffloadingEnv(num_workflows=2)
    env.reset(seed=1)
    before = [env.estimate(a) for a in range(env.num_servers)]
    sim = copy.deepcopy(env)
    sim.step(int(np.argmax(sim.action_masks())))
    assert [env.estimate(a) for a in range(env.num_servers)] == before
    _, r, *_, info = env.step(0 if env.action_masks()[0] else int(np.argmax(env.action_masks())))
    assert r == pytest.approx(-(info["t_trans"] + info["t_exec"]) / env.time_unit)


def test_one_task_workflow_and_cloud_only_task() -> None:
    wfs = [
        Workflow("one", [Task("t", "x", 3.0)]),
        Workflow("big", [Task("a", "x", 2.0), Task("b", "y", 5.0, (0,), cores=64.0)]),
    ]
    env = WorkflowOffloadingEnv(dataset=wfs, num_workflows=4, num_nodes=3)
    env.reset(seed=0)
    seen_cloud_only = False
    done = False
    while not done:
        mask = env.action_masks()
        task = env.current_instance().tasks[env.current_task]
        if task.cpu == 64.0:
            assert list(mask) == [False, False, False, True]
            seen_cloud_only = True
        _, _, done, _, info = env.step(int(np.flatnonzero(mask)[-1]))
    assert seen_cloud_only
    assert info["metrics"]["workflows"] == 4


def test_makespan_reward_sums_to_completion() -> None:
    env = WorkflowOffloadingEnv(num_workflows=1, reward="makespan", task_order="rank")
    env.reset(seed=2)
    total, done = 0.0, False
    while not done:
        _, r, done, _, info = env.step(int(np.argmax(env.action_masks())))
        total += r
    assert total * env.time_unit == pytest.approx(-info["metrics"]["mean_completion"])


def test_patent_scenario_shape() -> None:
    env = gym.make("rlsched/WorkflowOffloading-v0", scenario="patent-example").unwrapped
    obs, _ = env.reset(seed=0)
    assert env.num_servers == 3 and env.current_task == 0
    assert obs["node_image"].tolist() == [1.0, 0.0, 1.0]
    env.step(0)
    assert env.current_task == 2  # b8.1: es1 holds image a, so task 3 goes next


@pytest.mark.parametrize("cloud_rtt", [0.0, 0.25])
def test_completion_includes_origin_transfers_and_equals_simulate(cloud_rtt: float) -> None:
    env = WorkflowOffloadingEnv(num_workflows=1, cache_size=None, cloud_rtt=cloud_rtt)
    cloud = env.num_servers - 1
    for seed in range(4):
        info, _ = _play(env, seed)
        inst = env.current_instance()
        assert inst.origin == env._origin[0] and not env.servers[inst.origin].is_cloud
        log = env.schedule_log()
        server = [0] * len(inst.tasks)
        for r in log:
            server[r["task"]] = r["server"]
        s = simulate(inst, server, order=[r["task"] for r in log])
        assert info["metrics"]["mean_completion"] == pytest.approx(s.makespan)
        for r in log:  # sources wait for their input from the origin
            if not inst.tasks[r["task"]].parents:
                assert r["start"] >= inst.arrival + inst.input_time(r["server"]) - 1e-9
                assert r["t_in"] == pytest.approx(inst.input_time(r["server"]))
        # the WAN's round trip is part of every transfer to or from the cloud, and only those
        assert inst.trans_time(0, 0, cloud) - inst.trans_time(0, 0, 0) == pytest.approx(
            inst.tasks[0].data * inst.adj[0][cloud] / inst.bandwidth + cloud_rtt
        )
        if env.num_nodes > 1:
            edge = inst.tasks[0].data * inst.adj[0][1] / inst.bandwidth
            assert inst.trans_time(0, 0, 1) == pytest.approx(edge)
    with pytest.raises(ValueError, match="cloud_rtt"):
        WorkflowOffloadingEnv(cloud_rtt=-1.0)


def test_optimality_gap_against_isolated_optimum() -> None:
    pytest.importorskip("ortools")
    wfs = [
        Workflow(
            "small",
            [Task("a", "x", 2.0, write_bytes=3e6, read_bytes=5e6), Task("b", "y", 3.0, (0,))],
        )
    ]
    env = WorkflowOffloadingEnv(dataset=wfs, num_workflows=3, optimality_reference=True)
    assert env._pool_input == [pytest.approx(5.0)]
    info, _ = _play(env, 0, pick=lambda e, m: int(np.flatnonzero(m)[0]))
    gap = info["metrics"]["optimality_gap"]
    assert np.isfinite(gap)
    comps = env._completion
    opts = [env.isolated_optimum(w) for w in range(3)]
    assert gap == pytest.approx(np.mean([c / o - 1 for c, o in zip(comps, opts, strict=True)]))
    assert len(env._opt_cache) == len({(0, o) for o in env._origin})
    # a second env of the same workflows shares the process's solves (one per instance)
    from rlsched.envs import workflow_offloading as wo

    solved = len(wo._OPTIMA)
    again = WorkflowOffloadingEnv(dataset=wfs, num_workflows=3, optimality_reference=True)
    _play(again, 0, pick=lambda e, m: int(np.flatnonzero(m)[0]))
    assert [again.isolated_optimum(w) for w in range(3)] == opts
    assert len(wo._OPTIMA) == solved
    # off by default; workflows above optimal_max_tasks are skipped
    info, _ = _play(WorkflowOffloadingEnv(dataset=wfs), 0)
    assert np.isnan(info["metrics"]["optimality_gap"])
    env2 = WorkflowOffloadingEnv(dataset=wfs, optimality_reference=True, optimal_max_tasks=1)
    info, _ = _play(env2, 0)
    assert np.isnan(info["metrics"]["optimality_gap"])


def test_load_sets_arrivals_at_a_share_of_the_edge_capacity() -> None:
    from rlsched.envs.workflow_offloading import WorkflowOffloadingEnv

    env = WorkflowOffloadingEnv(dataset="wfinstances:blast-43,helloworld-10", load=0.8)
    cap = sum(s.cpu * s.speed for s in env.servers if not s.is_cloud)
    work = np.mean([sum(t.cpu * t.work for t in tasks) for tasks in env._pool])
    assert env.arrival_rate == pytest.approx(0.8 * cap / work)
    # load replaces the arrival rate (the default preset's 0.2 included)
    assert env.preset == "congested" and env.arrival_rate != 0.2
    with pytest.raises(ValueError, match="load must be positive"):
        WorkflowOffloadingEnv(dataset="wfinstances:blast-43", load=0.0)


def test_lookahead_feature_is_where_the_critical_child_can_finish() -> None:
    """``node_child_done[s]``: placing the task on ``s``, then the best server for its most
    critical child gives that finish, as the env itself computes once the child is next."""
    kw = {"dataset": "synthetic:placement?workflows=20&tasks=10&seed=5", "num_workflows": 1,
          "reward": "makespan", "task_order": "rank", "num_nodes": 3}  # fmt: skip
    plain = WorkflowOffloadingEnv(**kw)
    env = WorkflowOffloadingEnv(**kw, lookahead=True)
    assert "node_child_done" not in plain.observation_space.spaces  # models trained before
    checked = sinks = 0
    for ep in range(6):
        obs, _ = env.reset(seed=ep)
        plain.reset(seed=ep)
        done = False
        while not done:
            w, t, u, now = env._wf[env._w], env._task, env.time_unit, env._now
            kids = env._children[env._w][t]
            if not kids:  # a sink: its own done time
                np.testing.assert_allclose(obs["node_child_done"], obs["node_done"], rtol=1e-5)
                sinks += 1
            else:
                c = max(kids, key=lambda k: env._ranks[env._w][k])
                for s in np.flatnonzero(env.action_masks()):
                    sim = copy.deepcopy(env)
                    sim.step(int(s))
                    same_image = w.tasks[c].image == w.tasks[t].image
                    if sim._done or sim._task != c or same_image:  # the cache would differ
                        continue
                    best = min(sim.estimate(j)["done"] for j in np.flatnonzero(sim.action_masks()))
                    assert obs["node_child_done"][s] == pytest.approx(
                        max(best - now, 0.0) / u, rel=1e-5, abs=1e-6
                    )
                    checked += 1
            a = int(np.argmin(np.where(env.action_masks(), obs["node_done"], np.inf)))
            obs, _, done, _, _ = env.step(a)
            plain.step(a)
            if not done:  # the feature only adds a key: everything else is the plain env's
                for k, v in plain._observation().items():
                    np.testing.assert_array_equal(obs[k], v)
    assert checked >= 20 and sinks >= 6, (checked, sinks)


def test_candidates_keep_the_servers_of_earliest_finish() -> None:
    """``candidates: k``: the mask keeps the k valid servers of earliest estimated finish
    (ties: less transfer, lower index), HEFT's choice first; k=1 leaves HEFT's choice alone,
    so any policy plays HEFT's episode."""
    from rlsched.policies.offloading import HeftPolicy

    for k in (1, 2, 3):
        env = WorkflowOffloadingEnv(num_workflows=2, candidates=k)
        full = WorkflowOffloadingEnv(num_workflows=2)
        for seed in range(2):
            env.reset(seed=seed)
            full.reset(seed=seed)
            rng = np.random.default_rng(seed)
            done = False
            while not done:
                base = full.action_masks()
                keys = {int(s): (round(e["done"], 9), e["t_trans"], int(s))
                        for s in np.flatnonzero(base) for e in [env.estimate(int(s))]}
                want = sorted(sorted(keys, key=keys.__getitem__)[:k])
                assert np.flatnonzero(env.action_masks()).tolist() == want
                a = int(rng.choice(want))
                _, _, done, _, _ = env.step(a)
                full.step(a)
    heft_env = WorkflowOffloadingEnv(num_workflows=3)
    heft = HeftPolicy(heft_env)
    want_info, _ = _play(heft_env, 5, pick=lambda e, m: heft.act(None, m))
    got_info, _ = _play(WorkflowOffloadingEnv(num_workflows=3, candidates=1), 5)  # random picks
    got, want = got_info["metrics"], want_info["metrics"]
    assert got.keys() == want.keys()
    assert all(got[m] == want[m] or (np.isnan(got[m]) and np.isnan(want[m])) for m in got)
    with pytest.raises(ValueError, match="candidates"):
        WorkflowOffloadingEnv(candidates=0)


def test_finish_gap_is_the_lag_behind_the_earliest_finish() -> None:
    """``finish_gap``: per server, how much later than the earliest-finishing valid server the
    task would be done (0 for that server and where the task cannot go); HEFT's server is the
    one at 0."""
    from rlsched.core.offloading import eft_order

    env = WorkflowOffloadingEnv(num_workflows=2, finish_gap=True)
    assert "node_done_gap" not in WorkflowOffloadingEnv(num_workflows=2).observation_space.spaces
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=0)
    done, states = False, 0
    while not done:
        mask = env.action_masks()
        est = np.array([env.estimate(s)["done"] for s in range(env.num_servers)])
        want = np.where(mask, est - est[mask].min(), 0.0) / env.time_unit
        assert np.allclose(obs["node_done_gap"], want, rtol=1e-5, atol=1e-6)
        heft = int(eft_order(*env.eft_keys(mask), mask)[0])
        assert obs["node_done_gap"][heft] == 0.0
        obs, _, done, _, _ = env.step(int(rng.choice(np.flatnonzero(mask))))
        states += 1
    assert states > 10


def test_contention_keys_are_the_subtree_load_on_each_server() -> None:
    """``contention``: ``subtree`` is the current task's row of the workflow's descendant
    load (cpu-work in time units, count, widest level); ``node_subtree`` that work over each
    edge server's cores x speed (0 on the cloud); ``node_width`` its cores over the task's cpu
    x the widest level, capped at 1 (1 on the cloud). Off by default."""
    env = WorkflowOffloadingEnv(num_workflows=2, contention=True)
    plain = WorkflowOffloadingEnv(num_workflows=2).observation_space.spaces
    assert not {"node_subtree", "node_width", "subtree"} & set(plain)
    cloud = np.array([s.is_cloud for s in env.servers])
    cores = np.array([s.cpu for s in env.servers])
    speed = np.array([s.speed for s in env.servers])
    assert cloud.any() and not cloud.all()
    rng = np.random.default_rng(2)
    obs, _ = env.reset(seed=2)
    done, states, wide = False, 0, 0
    while not done:
        inst, t = env.current_instance(), env.current_task
        work, count, width = inst.descendant_load()[t]
        assert obs["subtree"] == pytest.approx([work / env.time_unit, count, width], rel=1e-5)
        edge = ~cloud
        want = work / (cores[edge] * speed[edge]) / env.time_unit
        assert obs["node_subtree"][edge] == pytest.approx(want, rel=1e-5, abs=1e-6)
        assert np.all(obs["node_subtree"][cloud] == 0.0) and np.all(obs["node_width"][cloud] == 1)
        fit = np.minimum(cores[edge] / (inst.tasks[t].cpu * max(width, 1.0)), 1.0)
        assert obs["node_width"][edge] == pytest.approx(fit, rel=1e-5)
        wide += int(width >= 2)
        obs, _, done, _, _ = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        states += 1
    assert states > 10 and wide > 0  # some subtree had two tasks at one depth


def test_optimistic_cost_keys_are_the_table_row_and_peft_lag() -> None:
    """``optimistic_cost``: ``node_oct`` is the current task's row of the workflow's table and
    ``node_peft_gap`` how far each server's ``done + oct`` is above the least among the
    servers that can host the task (0 there and where it cannot); ``peft`` picks a server at
    0."""
    from rlsched.policies.registry import make_policy

    env = WorkflowOffloadingEnv(num_workflows=2, optimistic_cost=True)
    plain = WorkflowOffloadingEnv(num_workflows=2).observation_space.spaces
    assert "node_oct" not in plain and "node_peft_gap" not in plain
    peft = make_policy("peft", env, seed=0)
    rng = np.random.default_rng(1)
    obs, _ = env.reset(seed=1)
    done, states = False, 0
    while not done:
        mask = env.action_masks()
        row = env.current_instance().optimistic_cost()[env.current_task]
        assert np.allclose(obs["node_oct"], row / env.time_unit, rtol=1e-5, atol=1e-6)
        key = np.array([env.estimate(s)["done"] for s in range(env.num_servers)]) + row
        want = np.where(mask, key - key[mask].min(), 0.0) / env.time_unit
        assert np.allclose(obs["node_peft_gap"], want, rtol=1e-5, atol=1e-6)
        assert obs["node_peft_gap"][peft.act(obs, mask)] == pytest.approx(0.0, abs=1e-6)
        obs, _, done, _, _ = env.step(int(rng.choice(np.flatnonzero(mask))))
        states += 1
    assert states > 10


def test_dag_keys_hold_the_whole_workflow() -> None:
    """``dag``: per task its template row, decided / current flags, the server of each decided
    task and its finish relative to now; the links' data; PEFT's cost table; padding zero."""
    env = WorkflowOffloadingEnv(scenario="patent-example", optimistic_cost=True, dag=True,
                                dag_max_tasks=9)  # fmt: skip
    obs, _ = env.reset(seed=0)
    w = env.current_instance()
    n, u = len(w.tasks), env.time_unit
    assert obs["dag_tasks"].shape == (9, 12) and obs["dag_links"].shape == (9, 9)
    assert obs["dag_oct"].shape == (9, env.num_servers)
    for c, t in enumerate(w.tasks):
        for p in range(n):
            want = w.tasks[p].data if p in t.parents else 0.0
            assert obs["dag_links"][c, p] == pytest.approx(want)
    assert np.allclose(obs["dag_tasks"][:n, 0], [t.work / u for t in w.tasks])
    assert np.array_equal(obs["dag_tasks"][:n, 9], [not t.parents for t in w.tasks])
    assert np.allclose(obs["dag_oct"][:n], w.optimistic_cost() / u, rtol=1e-6)
    assert not obs["dag_tasks"][n:].any() and not obs["dag_links"][n:].any()
    assert (obs["dag_placed"] == -1).all()
    placed = {}
    for _ in range(3):
        t = env.current_task
        assert obs["dag_tasks"][t, 7] == 1 and obs["dag_tasks"][:, 7].sum() == 1
        a = int(np.flatnonzero(env.action_masks())[-1])
        placed[t] = a
        obs, _, done, _, _ = env.step(a)
        assert not done
    for t, a in placed.items():
        assert obs["dag_placed"][t] == a and obs["dag_tasks"][t, 6] == 1
        finish = env.schedule_log()[list(placed).index(t)]["finish"]
        assert obs["dag_tasks"][t, 10] == pytest.approx((finish - env._now) / u, rel=1e-5)
    undecided = [t for t in range(n) if t not in placed]
    assert (obs["dag_placed"][undecided] == -1).all() and not obs["dag_tasks"][undecided, 6].any()
    assert env.observation_space.contains(obs)


def test_dag_refuses_workflows_larger_than_its_padding() -> None:
    with pytest.raises(ValueError, match="dag_max_tasks=3 tasks"):
        WorkflowOffloadingEnv(scenario="patent-example", dag=True, dag_max_tasks=3)


@pytest.mark.parametrize("candidates", [None, 2])
def test_advance_is_step_without_the_observation(candidates: int | None) -> None:
    import pickle

    env = gym.make(
        "rlsched/WorkflowOffloading-v0", dataset="wfinstances:blast-43,helloworld-10",
        scenario="congested", num_workflows=2, candidates=candidates, disable_env_checker=True,
    )  # fmt: skip
    u = env.unwrapped
    rng = np.random.default_rng(0)
    env.reset(seed=1)
    done, steps = False, 0
    while not done:
        a = int(rng.choice(np.flatnonzero(u.action_masks())))
        snap = u.snapshot()
        advanced = pickle.dumps(u.advance(a)), u.action_masks(), u._done
        u.restore(snap)
        _, r, term, trunc, info = u.step(a)
        # the same transition, and the next mask (the anchored one too) as after a step
        assert advanced[0] == pickle.dumps((r, term, trunc, info))
        assert np.array_equal(advanced[1], u.action_masks()) and advanced[2] == u._done
        done, steps = term or trunc, steps + 1
    assert steps > 20
