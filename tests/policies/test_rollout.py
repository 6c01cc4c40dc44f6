"""The search teacher (``rollout``): sampled futures keep the present and replace the future,
the policy never rolls out the true future, ties go to its base, and ``mdp_rollout`` is one of
its instances."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

from rlsched.envs import ENV_IDS
from rlsched.envs.args import env_class
from rlsched.envs.base import RlschedEnv
from rlsched.envs.vm_placement import VMPlacementEnv
from rlsched.errors import PolicyError
from rlsched.evaluate import compare, make_env
from rlsched.policies.offloading import GreedyEftPolicy, MdpRolloutPolicy
from rlsched.policies.registry import make_policy
from rlsched.policies.rollout import RolloutPolicy

#: Small fixed cases of the envs that sample their future: (dataset, env arguments).
CASES: dict[str, tuple[str | None, dict[str, Any]]] = {
    "rlsched/ServerlessPlacement-v0": (None, {"episode_length": 40}),
    "rlsched/KubeScheduling-v0": (None, {"episode_length": 40}),
    "rlsched/KubeScheduling-v0:gang": (None, {"episode_length": 60, "scenario": "gang"}),
    "rlsched/WorkflowOffloading-v0": (
        "wfinstances:blast-43,helloworld-10", {"num_workflows": 4, "scenario": "congested"}
    ),
    "rlsched/VMPlacement-v0": (None, {"num_nodes": 4}),
    "rlsched/PodRebalancing-v0": (None, {"episode_length": 8}),
    "rlsched/LLMAutoscaling-v0": (None, {"episode_duration": 60.0}),
}


def _run_base(env: Any, base: str, obs: Any) -> list[tuple[Any, float]]:
    """The base heuristic from observation ``obs`` (the env's current state) to the end:
    (action, reward) pairs."""
    pol = make_policy(base, env, seed=0)
    u = env.unwrapped
    out: list[tuple[Any, float]] = []
    done = False
    while not done:
        a = pol.act(obs, u.action_masks())
        obs, r, term, trunc, _ = u.step(a)
        out.append((np.asarray(a).tolist(), float(r)))
        done = term or trunc
    return out


@pytest.mark.parametrize("env_id", sorted(CASES))
def test_a_sampled_future_keeps_the_present_and_replaces_the_future(env_id: str) -> None:
    dataset, kwargs = CASES[env_id]
    env = make_env(env_id.split(":")[0], dataset, **kwargs)
    u = env.unwrapped
    base = u.oracle_base
    obs, _ = env.reset(seed=5)
    pol = make_policy(base, env, seed=0)
    for _ in range(3):
        obs, _, term, trunc, _ = env.step(pol.act(obs, u.action_masks()))
        assert not (term or trunc)
    mask = u.action_masks()
    snap = u.snapshot()
    true_future = _run_base(env, base, obs)
    futures = []
    for seed in (1, 2, 3):
        u.restore(snap)
        u.resample_future(np.random.default_rng(seed))
        # the present is what it was: same decision, same valid actions
        assert np.array_equal(u.action_masks(), mask)
        futures.append(_run_base(env, base, obs))
    u.restore(snap)
    again = u.snapshot()
    assert _run_base(env, base, obs) == true_future  # restoring undoes the sampling
    u.restore(again)
    assert any(f != true_future for f in futures), "the sampled futures are the true one"
    assert len({repr(f) for f in futures}) > 1, "every sample drew the same future"


def test_the_rollout_policy_never_rolls_out_the_true_future(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    env = make_env("rlsched/ServerlessPlacement-v0", episode_length=30)
    u = env.unwrapped
    obs, _ = env.reset(seed=11)
    true_arrivals = list(u._arrival_l)
    seen: list[list[float]] = []
    prepare = RolloutPolicy._prepare

    def spy(self: RolloutPolicy) -> None:
        prepare(self)
        seen.append(list(self.env._arrival_l[self.env._i + 1 :]))

    monkeypatch.setattr(RolloutPolicy, "_prepare", spy)
    pol = make_policy("rollout:k8s_balanced", env, seed=0)
    for _ in range(3):
        obs, *_ = env.step(pol.act(obs, u.action_masks()))
    assert seen and pol.rollouts == len(seen)
    assert all(s != true_arrivals[len(true_arrivals) - len(s):] for s in seen if s)
    assert u._arrival_l == true_arrivals  # the real episode is untouched


def test_ties_go_to_the_base_action() -> None:
    # one decision ahead with the count reward: every candidate places one VM, all tie
    env = make_env("rlsched/VMPlacement-v0", num_nodes=4, reward="count")
    u = env.unwrapped
    base = make_policy("best_fit", env, seed=0)
    teacher = RolloutPolicy(u, make_policy("best_fit", env, seed=0), "best_fit", 0, horizon=1)
    obs, _ = env.reset(seed=2)
    done, n = False, 0
    while not done and n < 60:
        mask = u.action_masks()
        a = teacher.act(obs, mask)
        assert a == base.act(obs, mask)
        obs, _, term, trunc, _ = env.step(a)
        done, n = term or trunc, n + 1
    assert teacher.rollouts > 0


def test_compare_runs_rollout_over_the_measured_best_heuristic() -> None:
    rep = compare(
        "rlsched/VMPlacement-v0", None, "first_fit,best_fit,rollout", episodes=2, seed=0,
        env_kwargs={"num_nodes": 4},
    )  # fmt: skip
    rows = {r["policy"]: r for r in rep["results"]}
    ro = rows["rollout"]
    assert ro["kind"] == "search"
    assert ro["describe"]["base"] == rep["reference"] != "rollout"
    assert ro["describe"]["futures"] >= 1
    assert "paired" in ro


class _NoFuture(VMPlacementEnv):
    """An env that cannot sample its future."""

    _resample_workload = RlschedEnv._resample_workload


def test_rollout_is_refused_where_it_cannot_sample_or_has_no_heuristic_base() -> None:
    assert all(env_class(e).can_resample_future() for e in ENV_IDS)
    env = _NoFuture(num_nodes=4)
    assert not _NoFuture.can_resample_future()
    with pytest.raises(PolicyError, match="cannot sample futures"):
        make_policy("rollout", env, seed=0)
    with pytest.raises(TypeError, match="cannot sample futures"):
        RolloutPolicy(env, make_policy("best_fit", env), "best_fit")
    with pytest.raises(NotImplementedError, match="cannot sample its future"):
        env.resample_future(np.random.default_rng(0))
    vm = make_env("rlsched/VMPlacement-v0", num_nodes=4)
    with pytest.raises(PolicyError, match="heuristic or learned:PATH as its base"):
        make_policy("rollout:clairvoyant", vm, seed=0)


def test_the_spec_sets_the_search_budget_and_leaves_other_keys_to_the_base() -> None:
    env = make_env("rlsched/LLMAutoscaling-v0", episode_duration=60.0)
    spec = (
        "rollout:hpa_threshold?switch_window=4&top_k=2&horizon=end&futures=1&min_gain=0.1"
        "&significance=2&ranked=false"
    )
    pol = make_policy(spec, env, seed=0)
    assert isinstance(pol, RolloutPolicy) and pol.name == spec
    assert (pol.top_k, pol.horizon, pol.futures, pol.min_gain) == (2, None, 1, 0.1)
    assert (pol.significance, pol.ranked) == (2.0, False)
    assert pol.base.name == "hpa_threshold?switch_window=4"  # the base kept its own key
    plain = make_policy("rollout:hpa_threshold", env, seed=0)  # the env's options, unchanged
    assert plain.name == "rollout" and plain.top_k == env.unwrapped.rollout_options.get("top_k", 8)
    own = make_policy("rollout?top_k=3", env, seed=0)  # the env's own base
    assert own.base_name == env.unwrapped.oracle_base and own.top_k == 3
    for bad, why in [
        ("rollout:hpa?top_k=0", "top_k must be at least 1"),
        ("rollout:hpa?top_k=2.5", "top_k must be int"),
        ("rollout:hpa?horizon=forever", "horizon is a number of decisions or 'end'"),
        ("rollout:hpa?score=best", "score is 'metric' or 'return'"),
        ("rollout:hpa?prefer_base=3", "prefer_base must be bool"),
        ("rollout:hpa?futures=-1", "futures, min_gain and significance must be at least 0"),
        ("rollout:hpa?significance=-1", "futures, min_gain and significance must be at least 0"),
        ("rollout:hpa?ranked=2", "ranked must be bool"),
        ("rollout:hpa?switch_window=4", "not ['switch_window']"),  # the base's own check
    ]:
        with pytest.raises(PolicyError, match=re.escape(why)):
            make_policy(bad, env, seed=0)


def test_fewer_candidates_search_less_and_ties_go_to_the_base() -> None:
    env = make_env(
        "rlsched/WorkflowOffloading-v0", "synthetic:placement?workflows=6&tasks=8&seed=3",
        num_workflows=1, task_order="rank", optimistic_cost=True, scenario="congested",
    )  # fmt: skip
    u = env.unwrapped
    spec = "rollout:peft?top_k={}&horizon=end&futures=0&score=return&reward=makespan"
    one, two, every = (make_policy(spec.format(k), env, seed=0) for k in (1, 2, u.num_servers))
    peft = make_policy("peft", env, seed=0)
    obs, _ = env.reset(seed=0)
    done = False
    while not done:
        mask = u.action_masks()
        a = two.act(obs, mask)
        assert one.act(obs, mask) == peft.act(obs, mask)  # one candidate: the base's own
        every.act(obs, mask)
        obs, _, term, trunc, _ = env.step(a)
        done = term or trunc
    assert 0 < two.rollouts < every.rollouts


def test_rollouts_skip_the_observation_when_the_base_reads_the_env() -> None:
    env = make_env(
        "rlsched/WorkflowOffloading-v0", "synthetic:placement?workflows=6&tasks=10&seed=3",
        num_workflows=1, task_order="rank", optimistic_cost=True, lookahead=True,
        scenario="congested",
    )  # fmt: skip
    u = env.unwrapped
    built = [0]
    observe = u._observation

    def counted() -> Any:
        built[0] += 1
        return observe()

    u._observation = counted
    # stepped, not compiled (tests/envs/test_offloading_fast.py has the compiled rollouts)
    spec = "rollout:peft?top_k=3&horizon=end&futures=0&score=return&reward=makespan&compiled=false"
    runs = {}
    for reads in (False, True):  # True: as a base that reads the observation would step
        pol = make_policy(spec, env, seed=0)
        assert pol.base.reads_observation is False
        pol.base.reads_observation = reads
        built[0], actions = 0, []
        obs, _ = env.reset(seed=2)
        done = False
        while not done:
            actions.append(pol.act(obs, u.action_masks()))
            obs, _, term, trunc, _ = env.step(actions[-1])
            done = term or trunc
        runs[reads] = actions, built[0], pol.rollouts
    assert runs[False][0] == runs[True][0]  # the same decisions
    assert runs[False][1] == len(runs[False][0]) + 1  # only the real steps and the reset
    assert runs[True][1] > runs[False][1] + runs[True][2]


def test_mdp_rollout_is_the_rollout_policy_with_the_workflow_as_its_horizon() -> None:
    env = make_env(
        "rlsched/WorkflowOffloading-v0", "wfinstances:blast-43", num_workflows=2,
        scenario="congested",
    )  # fmt: skip
    u = env.unwrapped
    pol = MdpRolloutPolicy(u, seed=0)
    assert isinstance(pol, RolloutPolicy) and pol.futures == 0 and pol.horizon is None
    obs, _ = env.reset(seed=0)
    done = False
    while not done:
        mask = u.action_masks()
        # the patent's Q by hand: each server, then earliest finish to the workflow's end
        snap, w = u.snapshot(), u.current_workflow
        q = np.full(len(mask), -np.inf)
        for s in np.flatnonzero(mask):
            u.restore(snap)
            u.reward_name = "makespan"
            _, r, d, _, _ = u.step(int(s))
            rest = 0.0
            eft = GreedyEftPolicy(u)
            while not d and u.current_workflow == w:
                _, rk, d, _, _ = u.step(eft.act(None, u.action_masks()))
                rest += rk
            q[s] = r + rest
        u.restore(snap)
        a = pol.act(obs, mask)
        assert a == int(np.argmax(q))
        obs, _, term, trunc, _ = env.step(a)
        done = term or trunc


def test_a_learned_model_can_be_the_base_and_is_shared_not_copied() -> None:
    env = make_env("rlsched/ServerlessPlacement-v0", episode_length=12)
    u = env.unwrapped
    pol = make_policy("rollout:learned:zoo/serverless-edge-maskable-ppo", env, seed=0)
    assert isinstance(pol, RolloutPolicy) and pol.base_name.startswith("learned:")
    assert pol._copy_base() is pol.base  # stateless: rollouts share one network
    obs, _ = env.reset(seed=1)
    done = False
    while not done:
        mask = u.action_masks()
        a = pol.act(obs, mask)
        assert mask[a]
        obs, _, term, trunc, _ = env.step(a)
        done = term or trunc
    assert pol.rollouts > 0


def test_candidates_are_the_bases_top_ranked_actions() -> None:
    env = make_env("rlsched/VMPlacement-v0", num_nodes=20)
    u = env.unwrapped
    obs, _ = env.reset(seed=3)
    base = make_policy("best_fit", env, seed=0)
    pol = RolloutPolicy(u, make_policy("best_fit", env, seed=0), "best_fit", 0, top_k=4)
    mask = u.action_masks()
    assert mask.sum() > 4
    prefs = base.preferences(obs, mask)
    assert prefs is not None and int(np.argmax(np.where(mask, prefs, -np.inf))) == base.act(
        obs, mask
    )  # the base takes its top-ranked valid action
    a0 = base.act(obs, mask)
    cands = pol._candidates(np.random.default_rng(0), mask, a0, prefs)
    valid = np.flatnonzero(mask)
    top = valid[np.argsort(-prefs[valid], kind="stable")][:4]
    assert cands[0] == a0 and set(cands) == set(int(a) for a in top)
    sampled = pol._candidates(np.random.default_rng(0), mask, a0)  # no ranking: a sample
    assert len(sampled) == 4 and a0 in sampled


def test_clear_gain_needs_the_mean_above_its_standard_errors() -> None:
    from rlsched.policies.rollout import _clear_gain

    assert _clear_gain(np.array([1.0, 1.0, 1.0, 1.0]), 2.0)  # every future agrees
    assert not _clear_gain(np.array([3.0, -1.0, 2.0, -2.0]), 1.0)  # mean 0.5, se 1.19
    assert _clear_gain(np.array([3.0, -1.0, 2.0, -2.0]), 0.4)
    assert not _clear_gain(np.array([0.0, 0.0]), 0.0) and _clear_gain(np.array([0.1]), 5.0)


def test_significance_keeps_the_base_unless_the_gain_is_clear() -> None:
    env = make_env("rlsched/ServerlessPlacement-v0", episode_length=25)
    u = env.unwrapped

    def actions(significance: float) -> tuple[list[int], list[int]]:
        pol = RolloutPolicy(u, make_policy("k8s_balanced", env, seed=0), "k8s_balanced", 0,
                            horizon=8, futures=3, significance=significance)  # fmt: skip
        base = make_policy("k8s_balanced", env, seed=0)
        obs, _ = env.reset(seed=4)
        got, want, done = [], [], False
        while not done:
            mask = u.action_masks()
            want.append(base.act(obs, mask))
            got.append(pol.act(obs, mask))
            obs, _, term, trunc, _ = env.step(got[-1])
            done = term or trunc
        return got, want

    got, want = actions(float("inf"))  # no gain is ever clear enough
    assert got == want
    got, want = actions(0.0)
    assert got != want  # the plain teacher leaves its base somewhere


def test_min_gain_keeps_the_base_unless_the_best_candidate_gains_that_share() -> None:
    """A departure at ``min_gain`` is one the plain teacher makes whose best value beats the
    base's by at least that share of the base's own; every other decision is the base's."""
    env = make_env("rlsched/ServerlessPlacement-v0", episode_length=25)
    u = env.unwrapped
    with pytest.raises(ValueError, match="min_gain"):
        RolloutPolicy(u, make_policy("k8s_balanced", env), "k8s_balanced", 0, min_gain=-0.1)
    plain = RolloutPolicy(u, make_policy("k8s_balanced", env, seed=0), "k8s_balanced", 0,
                          horizon=8, futures=2)  # fmt: skip
    base = make_policy("k8s_balanced", env, seed=0)
    obs, _ = env.reset(seed=4)
    gains, done = [], False
    while not done:  # the plain teacher's departures and their relative gains
        mask = u.action_masks()
        mine, a = base.act(obs, mask), plain.act(obs, mask)
        if a != mine:
            v = plain.action_values()
            assert v is not None
            gains.append((v[a] - v[mine]) / abs(v[mine]))
        obs, _, term, trunc, _ = env.step(a)
        done = term or trunc
    assert len(gains) >= 2
    cut = float(np.median(gains))
    gated = RolloutPolicy(u, make_policy("k8s_balanced", env, seed=0), "k8s_balanced", 0,
                          horizon=8, futures=2, min_gain=cut)  # fmt: skip
    base = make_policy("k8s_balanced", env, seed=0)
    obs, _ = env.reset(seed=4)
    done, kept, left = False, 0, 0
    while not done:  # play the gated teacher: each decision is the base's or a large gain
        mask = u.action_masks()
        mine, a = base.act(obs, mask), gated.act(obs, mask)
        v = gated.action_values()
        if v is not None and max(v.values()) > v[mine]:
            big = max(v.values()) - v[mine] >= cut * abs(v[mine])
            assert (a != mine) == big
            kept, left = kept + big, left + (not big)
        else:
            assert a == mine
        obs, _, term, trunc, _ = env.step(a)
        done = term or trunc
    assert kept >= 1 and left >= 1
    assert gated.describe()["min_gain"] == cut


def test_the_rollout_policy_values_each_candidate_by_its_mean_over_the_futures() -> None:
    """``action_values``: the mean main-metric score of each candidate's rollouts over the
    sampled futures; the action taken is a highest-valued one (no significance test here)."""
    env = make_env("rlsched/PodRebalancing-v0", episode_length=8)
    u = env.unwrapped
    teacher = make_policy("rollout:greedy_migration", env, seed=0)
    assert isinstance(teacher, RolloutPolicy) and teacher.significance == 0
    teacher.reset(0)
    obs, _ = env.reset(seed=0)
    searched = 0
    for _ in range(4):
        mask = u.action_masks()
        a = teacher.act(obs, mask)
        values = teacher.action_values()
        if values is not None:
            searched += 1
            assert set(values) <= set(np.flatnonzero(mask).tolist()) and len(values) > 1
            assert values[int(a)] == max(values.values())
        obs, _, term, trunc, _ = env.step(a)
        if term or trunc:
            break
    assert searched > 0
