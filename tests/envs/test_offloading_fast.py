"""Compiled rollouts of WorkflowOffloading-v0 (rlsched.envs.offloading_fast): the same
returns and the same search decisions as stepping the env, and None where they do not apply."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from rlsched.evaluate import make_env
from rlsched.policies.offloading import POLICY_FACTORIES, PeftPolicy
from rlsched.policies.registry import make_policy

pytest.importorskip("numba")

ENV = "rlsched/WorkflowOffloading-v0"
SMALL = {
    "dataset": "synthetic:placement?workflows=30&tasks=15&seed=4",
    "scenario": "congested",
    "num_workflows": 1,
    "task_order": "rank",
    "reward": "makespan",
    "optimistic_cost": True,
}


def _env(dataset: str | None = None, **kwargs: Any) -> Any:
    return make_env(ENV, dataset, **kwargs)


def _stepped_return(env: Any, first: int, base: str, reward: str, steps: int | None) -> float:
    """Take ``first`` on a copy of ``env``, then ``base`` to the end of the workflow (or
    ``steps`` decisions): the rewards summed as the search sums them."""
    u = env.unwrapped
    snap = u.snapshot()
    u.reward_name = reward
    pol = POLICY_FACTORIES[base](u, 0)
    w = u.current_workflow
    rewards = [u.advance(first)[0]]
    while not u._done and u.current_workflow == w and (steps is None or len(rewards) < steps):
        rewards.append(u.advance(pol.act({}, u.action_masks()))[0])
    u.restore(snap)
    return rewards[0] + sum(rewards[1:])


@pytest.mark.parametrize(
    ("base", "reward", "steps", "kwargs"),
    [
        ("peft", "makespan", None, SMALL),
        ("heft", "patent", 4, SMALL),
        # several workflows, rolled out to the end of the current one
        ("greedy_eft", "makespan", None, {"num_workflows": 3, "task_order": "rank"}),
        # a one-image cache and slow pulls: evictions change what later tasks pay
        (
            "heft",
            "makespan",
            None,
            {
                "num_workflows": 3,
                "task_order": "rank",
                "cache_size": 1,
                "scenario": "edge-bounded",
                "pull_time": 50.0,
            },
        ),
    ],
)
def test_compiled_returns_equal_the_env_stepped(
    base: str, reward: str, steps: int | None, kwargs: dict[str, Any]
) -> None:
    env = _env(**kwargs)
    u = env.unwrapped
    checked = 0
    for seed in (0, 4):
        env.reset(seed=seed)
        policy = POLICY_FACTORIES[base](u, 0)
        while not u._done:
            fast = u.fast_rollouts(base, reward, steps, to_segment_end=True)
            assert fast is not None
            mask = u.action_masks()
            order = fast.order()
            # the base's ranking: its own action first, every valid server once
            assert int(order[0]) == policy.act({}, mask)
            assert sorted(order.tolist()) == np.flatnonzero(mask).tolist()
            cands = [int(a) for a in order]
            got = fast.returns(cands)
            want = [_stepped_return(env, a, base, reward, steps) for a in cands]
            assert got.tolist() == want  # exactly: the same arithmetic in the same order
            checked += len(cands)
            u.advance(int(order[-1]))  # not the base's action: states the base never visits
    assert checked > 50


def _searched(
    kwargs: dict[str, Any], spec: str, seeds: tuple[int, ...], compiled: bool
) -> tuple[list[int], list[Any], int]:
    """Episodes ``seeds`` played by the search ``spec``, compiled or stepping the env: its
    actions, its candidates' values at each decision, and how many decisions it compiled."""
    env = _env(**kwargs)
    if spec == "mdp_rollout":  # takes no arguments: its attribute
        pol = make_policy(spec, env, seed=seeds[0])
        pol.compiled = compiled
    else:
        pol = make_policy(spec + ("" if compiled else "&compiled=false"), env, seed=seeds[0])
    actions, values, used = [], [], 0
    for seed in seeds:
        obs, _ = env.reset(seed=seed)
        pol.reset(seed)
        done = False
        while not done:
            used += pol._fast() is not None
            a = pol.act(obs, env.unwrapped.action_masks())
            actions.append(int(a))
            values.append(pol.action_values())
            obs, _, term, trunc, _ = env.step(a)
            done = term or trunc
    return actions, values, used


@pytest.mark.parametrize(
    ("kwargs", "spec", "seeds"),
    [
        (SMALL, "rollout:peft?top_k=4&horizon=end&futures=0&score=return&reward=makespan",
         (10, 11, 12)),
        (SMALL,
         "rollout:heft?top_k=2&horizon=3&futures=0&score=return&reward=makespan&min_gain=0.01",
         (10, 11, 12)),
        ({"num_workflows": 2, "task_order": "rank"}, "mdp_rollout", (5,)),
        # the patent's task order: the next task drawn from the env's generator
        ({"num_workflows": 2, "cache_size": 1}, "mdp_rollout", (5, 6)),
        # to the episode's end over two sampled futures of the workflows not yet arrived,
        # scored by the mean completion (the online search) or by the return
        *(
            ({"dataset": "synthetic:placement?workflows=20&tasks=8&seed=4",
              "scenario": "congested", "num_workflows": 3, "task_order": "rank",
              "optimistic_cost": True},
             f"rollout:peft?horizon=end&futures=2&top_k=3&score={score}", (7,))
            for score in ("metric", "return")
        ),
        # the same in the patent's order: each future reseeds the env's generator
        ({"dataset": "synthetic:placement?workflows=20&tasks=8&seed=4",
          "scenario": "congested", "num_workflows": 3, "optimistic_cost": True},
         "rollout:peft?horizon=end&futures=2&top_k=3", (8,)),
    ],
)  # fmt: skip
def test_the_search_takes_the_same_decisions_compiled_and_stepped(
    kwargs: dict[str, Any], spec: str, seeds: tuple[int, ...]
) -> None:
    fast, stepped = (_searched(kwargs, spec, seeds, compiled) for compiled in (True, False))
    assert fast[:2] == stepped[:2]
    assert fast[2] == len(fast[0]) and stepped[2] == 0  # compiled at every decision, or none
    assert any(len(v or {}) > 1 for v in fast[1])  # decisions with candidates to compare


def test_they_do_not_apply_where_they_would_play_otherwise() -> None:
    env = _env(num_workflows=2, task_order="rank", optimistic_cost=True)
    env.reset(seed=0)
    u = env.unwrapped
    within = u.fast_rollouts("peft", "makespan", None, to_segment_end=True)
    assert within is not None and within.stops_with_workflow() and within.later(3)[0] == []
    # past the current workflow: the episode's later ones, the env's own or a sampled future's
    onward = u.fast_rollouts("peft", "makespan", None, to_segment_end=False)
    assert onward is not None and not onward.stops_with_workflow()
    assert len(onward.later(None)[0]) == len(onward.later(3)[0]) == 1
    assert u.fast_rollouts("image_locality", "makespan", None, to_segment_end=True) is None
    assert u.fast_rollouts("peft", "completion", None, to_segment_end=True) is None
    anchored = _env(num_workflows=1, task_order="rank", candidates=2)
    anchored.reset(seed=0)
    assert anchored.unwrapped.fast_rollouts("heft", "makespan", None, True) is None
    # a metric other than the mean completion or the return is the search's to step
    pol = make_policy("rollout:peft?score=metric&futures=0", _env(**SMALL), seed=0)
    pol.metric = "p95_completion"
    assert pol._fast() is None


def test_earliest_finish_bases_are_shared_not_copied_by_a_search() -> None:
    env = _env(**SMALL)
    assert PeftPolicy(env.unwrapped).stateless


def _random_search_cases(n: int) -> list[tuple[dict[str, Any], str]]:
    """``n`` env and search configurations drawn at random (seeded): presets, task orders,
    cache sizes, bases, rewards, horizons, futures and scores."""
    rng = np.random.default_rng(2026)
    cases = []
    for _ in range(n):
        kwargs = {
            "dataset": "synthetic:placement?workflows=12&tasks=10&seed=5",
            "scenario": str(rng.choice(["congested", "edge-cloud", "edge-bounded"])),
            "num_workflows": int(rng.integers(1, 4)),
            "task_order": str(rng.choice(["rank", "patent"])),
            "cache_size": int(rng.integers(1, 4)),
            "optimistic_cost": True,
        }
        base = str(rng.choice(["heft", "peft", "greedy_eft"]))
        horizon = str(rng.choice(["end", "4"]))
        futures = int(rng.integers(0, 3))
        score = str(rng.choice(["return", "metric"]))
        reward = str(rng.choice(["makespan", "patent"]))
        spec = (f"rollout:{base}?horizon={horizon}&futures={futures}&top_k={rng.integers(2, 5)}"
                f"&score={score}&reward={reward}")  # fmt: skip
        cases.append((kwargs, spec))
    return cases


@pytest.mark.parametrize(("kwargs", "spec"), _random_search_cases(24))
def test_random_configurations_decide_alike_compiled_and_stepped(
    kwargs: dict[str, Any], spec: str
) -> None:
    fast, stepped = (_searched(kwargs, spec, (3,), compiled) for compiled in (True, False))
    assert fast[:2] == stepped[:2]
    assert fast[2] == len(fast[0])


@pytest.mark.parametrize("order", ["rank", "patent"])
def test_the_plan_observed_is_pefts_schedule_and_changes_nothing(order: str) -> None:
    """``dag_plan``: each task's server and finish as PEFT, stepped on a copy of the env from
    the decision, gives them; building it leaves the episode as it was (the same rewards as
    without it)."""
    kw = dict(SMALL, dataset="synthetic:placement?workflows=30&tasks=12&seed=9",
              task_order=order, dag=True)  # fmt: skip
    env, bare = _env(**kw, dag_plan=True), _env(**kw)
    checked = 0
    for seed in range(4):
        obs, _ = env.reset(seed=seed)
        bare.reset(seed=seed)
        u, done = env.unwrapped, False
        while not done:
            n = len(u.current_instance().tasks)
            copy = u.snapshot()
            pol = PeftPolicy(u, 0)
            now, end = u._now, False
            while not end:
                _r, te, tr, _i = u.advance(pol.act(None, u.action_masks()))
                end = te or tr
            server, finish = u._server.copy(), u._finish.copy()
            u.restore(copy)
            assert np.array_equal(obs["dag_plan"][:n, 0], server)
            assert np.allclose(obs["dag_plan"][:n, 1], (finish - now) / u.time_unit, rtol=1e-5)
            assert (obs["dag_plan"][n:, 0] == -1).all()
            und = server[u._server < 0]
            assert np.array_equal(obs["dag_plan_servers"][:, 1],
                                  np.bincount(und, minlength=u.num_servers))  # fmt: skip
            a = PeftPolicy(u, 0).act(obs, u.action_masks())
            obs, r, te, tr, _ = env.step(a)
            r0 = bare.step(a)[1]
            assert r == r0
            done = te or tr
            checked += 1
    assert checked > 40


@pytest.mark.parametrize("order", ["rank", "patent"])
def test_a_kept_plan_is_the_plan_played_again(order: str) -> None:
    """The env keeps PEFT's schedule while the decisions follow it (``_plan``): at every
    decision of episodes of three workflows that follow PEFT, depart from it at random and go
    back to earlier decisions (snapshots), the observed plan is the one a fresh rollout
    plays, to the bit; and it was kept at some decisions and played at others."""
    kw = dict(SMALL, dataset="synthetic:placement?workflows=30&tasks=12&seed=9",
              task_order=order, dag=True, dag_plan=True, num_workflows=3)  # fmt: skip
    env = _env(**kw)
    u = env.unwrapped
    rng = np.random.default_rng(5)
    played = kept = 0
    for seed in range(3):
        obs, _ = env.reset(seed=seed)
        done, snaps = False, []
        while not done:
            server, finish = u.fast_rollouts("peft", "makespan", None, True).plan()
            n = len(server)
            assert np.array_equal(obs["dag_plan"][:n, 0], server)
            assert np.array_equal(obs["dag_plan"][:n, 1],
                                  ((finish - u._now) / u.time_unit).astype(np.float32))  # fmt: skip
            snaps.append(u.snapshot())
            mask = u.action_masks()
            if rng.random() < 0.2:
                a = int(rng.choice(np.flatnonzero(mask)))
            else:
                a = PeftPolicy(u, 0).act(obs, mask)
            before, w = u._kept_plan, u._w
            obs, _r, te, tr, _ = env.step(a)
            done = te or tr
            if not done and u._w == w:  # the same workflow: kept or played again
                kept += u._kept_plan is before
                played += u._kept_plan is not before
            if not done and rng.random() < 0.1:  # back to an earlier decision
                u.restore(snaps[int(rng.integers(len(snaps)))])
                obs = u._observation()
    assert kept > 20 and played > 20, (kept, played)


def test_the_plan_needs_the_whole_workflow_and_every_server() -> None:
    with pytest.raises(ValueError, match="needs dag=True"):
        _env(**SMALL, dag_plan=True)
    with pytest.raises(ValueError, match="candidates=None"):
        _env(**SMALL, dag=True, dag_plan=True, candidates=2)


def _observation_cases(n: int) -> list[dict[str, Any]]:
    """``n`` env configurations drawn at random (seeded) with every per-server feature on."""
    rng = np.random.default_rng(2027)
    return [
        {
            "dataset": str(rng.choice(["synthetic:placement?workflows=12&tasks=10&seed=5",
                                       "wfinstances:blast-43,helloworld-10"])),
            "scenario": str(rng.choice(["congested", "edge-cloud", "edge-bounded"])),
            "num_workflows": int(rng.integers(1, 4)),
            "task_order": str(rng.choice(["rank", "patent"])),
            "cache_size": int(rng.integers(1, 4)),
            "pull_time": float(rng.choice([0.5, 50.0])),
            "lookahead": True,
            "finish_gap": True,
            "optimistic_cost": True,
            "contention": True,
            "dag": bool(rng.integers(2)),
            "dag_max_tasks": 64,
        }
        for _ in range(n)
    ]  # fmt: skip


@pytest.mark.parametrize("kwargs", _observation_cases(6))
def test_the_compiled_observation_equals_the_python_one(kwargs: dict[str, Any]) -> None:
    """The per-server features from the kernels (``compiled_observation``) are the Python
    loop's, bit for bit, at every decision of random episodes."""
    dataset = kwargs["dataset"]
    rest = {k: v for k, v in kwargs.items() if k != "dataset"}
    fast, slow = _env(dataset, **rest), _env(dataset, **rest)
    slow.unwrapped.compiled_observation = False
    seen = 0
    for seed in range(2):
        obs = [fast.reset(seed=seed)[0], slow.reset(seed=seed)[0]]
        rng, done = np.random.default_rng(seed), False
        while not done:
            for key in obs[0]:
                assert np.array_equal(obs[0][key], obs[1][key]), (key, seen)
            a = int(rng.choice(np.flatnonzero(fast.unwrapped.action_masks())))
            stepped = [fast.step(a), slow.step(a)]
            obs = [stepped[0][0], stepped[1][0]]
            done = stepped[0][2] or stepped[0][3]
            seen += 1
    assert seen > 20


@pytest.mark.parametrize("commit", [None, 2])
def test_a_trial_guard_over_peft_scores_its_anchor_compiled_and_stepped_alike(
    commit: int | None,
) -> None:
    """The trial's anchor rollouts from the compiled kernels (and with ``commit``, the
    candidate's rollouts after its block of decisions): the same gains, so the same trials
    and decisions as stepping the env."""
    from rlsched.policies.offloading import AllLocalPolicy
    from rlsched.policies.trial import TrialGuard

    kw = {"dataset": "synthetic:placement?workflows=12&tasks=10&seed=5", "scenario": "congested",
          "num_workflows": 3}  # fmt: skip
    played: list[Any] = []
    steps: list[dict[str, int]] = []
    for compiled in (True, False):
        env = _env(kw["dataset"], **{k: v for k, v in kw.items() if k != "dataset"})
        u = env.unwrapped
        guard = TrialGuard(env, AllLocalPolicy(u), PeftPolicy(u), "peft", seed=0, futures=3,
                           horizon=None, every=3, commit=commit)  # fmt: skip
        guard.compiled = compiled
        stepped = {"steps": 0, "trials": 0}  # the env steps the trials take, the trials
        take = guard._take

        def counted(a: Any, observe: bool, take: Any = take, stepped: Any = stepped) -> Any:
            stepped["steps"] += 1
            return take(a, observe)

        guard._take = counted  # type: ignore[method-assign]
        acts, gains = [], []
        for seed in (0, 1):
            obs, _ = env.reset(seed=seed)
            guard.reset(seed)
            done = False
            while not done:
                if compiled and guard.decisions % guard.every == 0:
                    assert guard._anchor_scores([1]) is not None  # the compiled path applies
                acts.append(int(guard.act(obs, u.action_masks())))
                gains.append(None if guard.last_gain is None else tuple(guard.last_gain))
                obs, _r, te, tr, _ = env.step(acts[-1])
                done = te or tr
            stepped["trials"] += guard.trials
        played.append((acts, gains, guard.trials, guard.trusted))
        steps.append(stepped)
    assert played[0] == played[1]
    if commit is not None:  # compiled, the candidate steps only its block of decisions
        assert steps[0]["steps"] <= steps[0]["trials"] * 3 * commit < steps[1]["steps"]
    # all_local won some trials (a clear gain) and lost others
    assert 0 < played[0][3] < len(played[0][0])
    assert any(g is not None and any(g) for g in played[0][1])
