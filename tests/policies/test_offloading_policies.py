"""Policies of WorkflowOffloading-v0: full valid episodes, the patent's first decisions."""

import gymnasium as gym
import numpy as np
import pytest

import rlsched  # noqa: F401
from rlsched.evaluate import compare, make_env
from rlsched.policies.offloading import POLICY_FACTORIES, MdpLookaheadPolicy, anchored_servers
from rlsched.policies.registry import applicable_heuristics, make_policy


def _episode(env, pol, seed=0):
    obs, _ = env.reset(seed=seed)
    pol.reset(seed)
    done, decisions, info = False, [], {}
    while not done:
        u = env.unwrapped
        t, mask = u.current_task, u.action_masks()
        a = pol.act(obs, mask)
        assert mask[a]
        decisions.append((t + 1, u.servers[a].name))
        obs, _, done, _, info = env.step(a)
        assert not info.get("invalid_action", False)
    return decisions, info


@pytest.mark.parametrize("name", [n for n in POLICY_FACTORIES if n != "optimal"])
def test_policies_play_full_episodes(name: str) -> None:
    env = gym.make("rlsched/WorkflowOffloading-v0", num_workflows=2, disable_env_checker=True)
    _, info = _episode(env, make_policy(name, env, seed=0))
    assert info["metrics"]["workflows"] == 2


def test_mdp_lookahead_patent_first_decisions() -> None:
    env = gym.make("rlsched/WorkflowOffloading-v0", scenario="patent-example")
    pol = make_policy("mdp_lookahead", env, seed=0)
    assert isinstance(pol, MdpLookaheadPolicy) and pol.gamma == 0.5
    decisions, info = _episode(env, pol)
    assert decisions[:2] == [(1, "es1"), (3, "es1")]
    # with our numbers the look-ahead reproduces the patent's whole decision set
    assert decisions == [(1, "es1"), (3, "es1"), (2, "es2"), (4, "es2"), (5, "es3"), (6, "es2")]
    # last finish 2.02 s, then task 6's 0.1 MB back to the origin es1: 0.1 s
    assert info["metrics"]["makespan"] == pytest.approx(2.12)
    assert info["metrics"]["mean_completion"] == pytest.approx(2.12)


def test_optimal_policy_on_patent_example() -> None:
    pytest.importorskip("ortools")
    env = gym.make("rlsched/WorkflowOffloading-v0", scenario="patent-example")
    _, info = _episode(env, make_policy("optimal", env, seed=0))
    assert info["metrics"]["makespan"] == pytest.approx(2.06)  # the brute-force optimum


def test_heft_with_rank_order_is_exact_heft() -> None:
    """With ``task_order="rank"`` the env's order is HEFT's and ``heft`` picks the EFT server:
    the schedule equals the reference HEFT (:func:`greedy_assignment`) of the static instance."""
    pytest.importorskip("ortools")
    from rlsched.core.offloading import simulate
    from rlsched.core.optimal import greedy_assignment

    env = gym.make(
        "rlsched/WorkflowOffloading-v0",
        num_workflows=1,
        task_order="rank",
        cache_size=None,
        disable_env_checker=True,
    )
    for seed in range(4):
        decisions, info = _episode(env, make_policy("heft", env, seed=seed), seed=seed)
        u = env.unwrapped
        inst = u.current_instance()
        server, order = greedy_assignment(inst)
        assert [t - 1 for t, _ in decisions] == order
        assert [u.servers.index(next(s for s in u.servers if s.name == n)) for _, n in
                sorted(decisions)] == server  # fmt: skip
        ref = simulate(inst, server, order)
        assert info["metrics"]["mean_completion"] == pytest.approx(ref.makespan)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_default_env_is_not_all_cloud() -> None:
    """Moving data to and from the far cloud costs: earliest finish mixes edge and cloud and
    beats sending everything to the cloud."""
    rep = compare(
        "rlsched/WorkflowOffloading-v0",
        None,
        "greedy_eft,all_cloud",
        episodes=5,
        env_kwargs={},
    )
    res = {r["policy"]: r["metrics"] for r in rep["results"]}
    assert 0.1 < res["greedy_eft"]["cloud_share"] < 0.9
    assert res["all_cloud"]["cloud_share"] == 1.0
    assert res["all_cloud"]["mean_completion"] > 1.2 * res["greedy_eft"]["mean_completion"]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_registry_lists_env_policies_and_compare() -> None:
    env = gym.make("rlsched/WorkflowOffloading-v0", disable_env_checker=True)
    names = applicable_heuristics(env)
    assert {"heft", "greedy_eft", "mdp_lookahead", "all_cloud"} <= set(names)
    rep = compare(
        "rlsched/WorkflowOffloading-v0",
        None,
        "heft,greedy_eft,mdp_lookahead,random",
        episodes=1,
        env_kwargs={"num_workflows": 2},
    )
    res = {r["policy"]: r["metrics"] for r in rep["results"]}
    assert set(res) == {"heft", "greedy_eft", "mdp_lookahead", "random"}
    assert all(np.isfinite(m["mean_completion"]) for m in res.values())


def test_mdp_rollout_never_worse_than_its_greedy_base_on_single_workflows() -> None:
    """A rollout algorithm on a deterministic model does no worse than its base policy."""
    from rlsched.evaluate import compare

    rep = compare(
        "rlsched/WorkflowOffloading-v0",
        "synthetic:placement?workflows=6&tasks=8&seed=4",
        "greedy_eft,mdp_rollout",
        episodes=4,
        seed=0,
        env_kwargs={"num_workflows": 1},
    )
    res = {r["policy"]: r["metrics"]["mean_completion"] for r in rep["results"]}
    assert res["mdp_rollout"] <= res["greedy_eft"] + 1e-9


def test_all_cloud_is_not_a_heuristic_of_a_cloudless_env() -> None:
    """Without a cloud ``all_cloud`` would be earliest finish by another name: ``--policies
    all`` (and so the spreads' simplest baseline) leaves it out; with a cloud it is in."""
    env_id = "rlsched/WorkflowOffloading-v0"
    assert "all_cloud" not in applicable_heuristics(make_env(env_id, None, scenario="patent"))
    bounded = make_env(env_id, "wfinstances:blast-43", scenario="edge-bounded")
    assert "all_cloud" not in applicable_heuristics(bounded)
    assert "all_local" in applicable_heuristics(bounded)
    assert "all_cloud" in applicable_heuristics(make_env(env_id, "wfinstances:blast-43"))


@pytest.mark.parametrize("k", [1, 2, 3])
def test_anchored_servers_from_the_observation_equal_the_env_mask(k: int) -> None:
    """What ``learned:`` narrows an env's mask to for a model trained with ``candidates: k``,
    from the observation alone, is the mask that env argument gives (random play, the
    congested preset's five edge servers and the cloud)."""
    anchored = make_env("rlsched/WorkflowOffloading-v0", scenario="congested", candidates=k)
    full = make_env("rlsched/WorkflowOffloading-v0", scenario="congested")
    rng = np.random.default_rng(k)
    states = 0
    for seed in range(2):
        obs, _ = full.reset(seed=seed)
        anchored.reset(seed=seed)
        done = False
        while not done:
            mask = full.unwrapped.action_masks()
            want = np.flatnonzero(anchored.unwrapped.action_masks())
            assert anchored_servers(obs, mask, k).tolist() == want.tolist()
            a = int(rng.choice(want))
            obs, _, done, _, _ = full.step(a)
            anchored.step(a)
            states += 1
    assert states > 50


@pytest.mark.parametrize("name", ["heft", "peft", "greedy_eft"])
def test_earliest_finish_policies_rank_servers_by_their_own_key(name: str) -> None:
    """A search over them with ``top_k`` tries their best servers, not a random sample."""
    env = make_env("rlsched/WorkflowOffloading-v0", None, optimistic_cost=True, task_order="rank")
    pol = make_policy(name, env, seed=0)
    obs, _ = env.reset(seed=3)
    u = env.unwrapped
    for _ in range(6):
        mask = u.action_masks()
        prefs = pol.preferences(obs, mask)
        assert np.all(np.isneginf(prefs[~mask]))
        ranked = np.flatnonzero(mask)[np.argsort(-prefs[mask], kind="stable")]
        assert ranked[0] == pol.act(obs, mask)
        done, transfer = u.eft_keys(mask)
        key = done + u.optimistic_costs()[u.current_task] if name == "peft" else done
        # the ranking is by the key (rounded as the policy rounds it), then transfer
        pairs = [(round(float(key[s]), 9), float(transfer[s])) for s in ranked]
        assert pairs == sorted(pairs)
        obs, _, done_, _, _ = env.step(int(ranked[0]))
        if done_:
            break


def test_choices_from_the_observation_are_eft_orders_first() -> None:
    """heft_choice / peft_choice pick eft_order's first server (least key, then less
    transfer, then lower index), NaN keys included, which go last."""
    from rlsched.core.offloading import eft_order
    from rlsched.policies.offloading import heft_choice, peft_choice

    rng = np.random.default_rng(3)
    for trial in range(3000):
        s = int(rng.integers(1, 9))
        done = rng.choice([0.0, -0.0, 1.0, 2.0, 2.5], size=s).astype(np.float32)
        gap = rng.choice([0.0, 0.5, 1.0], size=s).astype(np.float32)
        transfer = rng.choice([0.0, 0.1, 0.2], size=s).astype(np.float32)
        if trial % 7 == 0:
            (done if trial % 2 else transfer)[rng.integers(s)] = np.nan
        mask = rng.random(s) < 0.7
        obs = {"node_done": done, "node_peft_gap": gap, "node_transfer": transfer}
        for choice, key in ((heft_choice, done), (peft_choice, gap)):
            want = int(eft_order(key, transfer, mask)[0]) if mask.any() else 0
            assert choice(obs, mask) == want, (trial, choice.__name__)
