"""The shipped zoo: listed with its verdicts, small, and usable as learned:zoo/NAME."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rlsched.errors import ConfigError, PolicyError
from rlsched.evaluate import check_not_trained_on, compare
from rlsched.splits import SPLITS, check_validation, overlap, split_of
from rlsched.zoo import card, entries, model_dir, names, resolve
from tests.conftest import small_dag_entry

ROOT = Path(__file__).resolve().parents[2]

NAME = "serverless-edge-maskable-ppo"


@pytest.mark.parametrize(
    "name",
    [
        NAME, "llm-autoscaling-slo-ppo", "llm-autoscaling-hpa-threshold-residual-ppo",
        "llm-autoscaling-conv-code-ppo", "pod-rebalancing-anchored-ppo",
    ],
)
def test_entries_carry_their_env_size_and_verdicts(name: str) -> None:
    assert name in names()
    (e,) = [x for x in entries() if x["name"] == name]
    assert e["path"] == f"learned:zoo/{name}" and e["env"] == card(name)["env"]
    assert 0 < e["size_bytes"] < 1_000_000  # weights only, no optimizer state
    for part in ("validation", "test"):
        p = e[part]["paired"]
        assert p["verdict"] in ("better", "worse", "no significant difference")
        lo, hi = p["ci95"]
        assert lo <= p["mean_diff"] <= hi
    c = card(name)
    assert c["preset"] and (ROOT / c["config"]).is_file()
    # never selected on its test data: the test set is its split's, the validation set is not
    split = split_of(c["env"], e["split"])
    assert c["test"]["dataset"].startswith(split.test.split("?")[0])
    assert not overlap(c["validation"]["dataset"], c["test"]["dataset"])


def test_the_llm_entry_trained_across_both_traces_is_judged_on_its_time_split_only() -> None:
    """Issue 13 item 4: trained on conv and the code trace's first half (split ``code-time``),
    so its card's test is the second half, and nothing judges it on the default split, whose
    test set is the whole code trace."""
    name = "llm-autoscaling-conv-code-ppo"
    c, spec = card(name), f"learned:zoo/{name}"
    split = split_of(c["env"], c["split"])
    assert c["split"] == "code-time" and c["test"]["dataset"] == split.test
    meta = json.loads((model_dir(name) / "meta.json").read_text())
    assert meta["split"] == c["split"]
    assert meta["train_datasets"] == c["training"]["train_datasets"] == ["azure-llm:code?end=1200"]
    # selected on the seconds after those (round T2), which the split lets it see, not the test
    assert c["training"]["validation_dataset"] == "azure-llm:code?start=1200&end=1800"
    check_validation(c["env"], c["training"]["validation_dataset"], "card", c["split"])
    with pytest.raises(ConfigError, match="shares azure-llm:code:seconds 1200-1800"):
        check_validation(c["env"], c["training"]["validation_dataset"], "card")  # the default
    check_not_trained_on([spec], split.test, c["split"])
    with pytest.raises(ConfigError, match="trained under the split 'code-time'"):
        check_not_trained_on([spec], SPLITS[c["env"]].test)
    # the demo's zoo stage refuses it too where a card would name data it trained on
    from rlsched.demo import zoo_plan

    (e,) = [x for x in entries() if x["name"] == name]
    assert zoo_plan(e, 1)["tasks"][-1].dataset == split.test
    whole = {**e, "test": {**e["test"], "dataset": SPLITS[c["env"]].test}}
    with pytest.raises(ConfigError, match="shares azure-llm:code:seconds 0-1200 with the test"):
        zoo_plan(whole, 1)
    rep = compare(c["env"], split.test, f"threshold,{spec}", episodes=2, seed=0,
                  env_kwargs={"scenario": "code-2x", "episode_duration": 60.0})  # fmt: skip
    row = next(r for r in rep["results"] if r["kind"] == "learned")
    assert 0.0 <= row["metrics"]["slo_attainment"] <= 1.0 and row["metrics"]["cost"] > 0


def test_zoo_policy_runs_through_compare() -> None:
    rep = compare(
        "rlsched/ServerlessPlacement-v0",
        "wfinstances:blast-43",
        f"first_fit,learned:zoo/{NAME}",
        episodes=2,
        seed=0,
        env_kwargs={"episode_length": 30},
    )
    row = next(r for r in rep["results"] if r["kind"] == "learned")
    assert row["metrics"]["invalid_actions"] == 0 and "paired" in row


def test_unknown_zoo_name_is_one_clear_error() -> None:
    with pytest.raises(PolicyError, match="did you mean"):
        resolve("zoo/serverless-edge-maskable-pp")


def test_cli_lists_the_zoo_as_json() -> None:
    out = subprocess.run(
        [sys.executable, "-c", "from rlsched.cli import main; main()", "zoo", "list", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    rows = json.loads(out.stdout)
    assert {"name", "env", "path", "size_bytes", "validation", "test", "split"} <= set(rows[0])
    # the split each entry is judged on: its card's, the default unless it names another
    assert {r["name"]: r["split"] for r in rows} == {
        r["name"]: card(r["name"]).get("split", "default") for r in rows}
    # each row's gate is its card's (no entry ships one since round L5; a kept model does:
    # tests/policies/test_learned.py)
    assert {r["name"]: r["gate"] for r in rows} == {r["name"]: card(r["name"]).get("gate")
                                                    for r in rows}  # fmt: skip


def test_the_table_shows_the_preset_settings_a_card_changes() -> None:
    from rlsched.cli import _preset_cell

    cells = {r["name"]: _preset_cell(r) for r in entries()}
    # one workflow per episode, not the preset's 8
    assert cells[small_dag_entry()] == "congested (num_workflows=1)"
    assert cells["serverless-edge-maskable-ppo"] == "edge"  # the preset's own settings


def test_llm_zoo_scaler_runs_through_compare() -> None:
    rep = compare(
        "rlsched/LLMAutoscaling-v0",
        None,
        "threshold,learned:zoo/llm-autoscaling-slo-ppo",
        episodes=2,
        seed=0,
        env_kwargs={"scenario": "code-1x", "episode_duration": 60.0},
    )
    row = next(r for r in rep["results"] if r["kind"] == "learned")
    assert 0.0 <= row["metrics"]["slo_attainment"] <= 1.0 and "paired" in row


def test_the_residual_llm_entry_acts_over_hpa_threshold_through_compare() -> None:
    from rlsched.envs.make import make_env
    from rlsched.policies.registry import make_policy
    from rlsched.policies.residual import ResidualPolicy

    name = "learned:zoo/llm-autoscaling-hpa-threshold-residual-ppo"
    kw = {"scenario": "conv-3x", "episode_duration": 60.0}
    # the model as it trained (it ships under a trial guard over HPA: test_trial.py)
    pol = make_policy(f"{name}?trial=off", make_env("rlsched/LLMAutoscaling-v0", None, **kw),
                      seed=0)  # fmt: skip
    # the base as it was trained: the switch read the last decision's demand alone
    base = "hpa_threshold?switch_window=1"
    assert isinstance(pol, ResidualPolicy) and pol.base.name == base
    assert pol.base.switch_window == 1
    rep = compare("rlsched/LLMAutoscaling-v0", None, f"{base},{name}", episodes=2, seed=0,
                  env_kwargs=kw)  # fmt: skip
    row = next(r for r in rep["results"] if r["kind"] == "learned")
    assert 0.0 <= row["metrics"]["slo_attainment"] <= 1.0 and row["paired"]["reference"]


def test_the_residual_llm_entry_is_hpa_threshold_with_a_learned_correction() -> None:
    """Over a code-2x episode the entry plays hpa_threshold's action plus at most 0.4 of the
    network's output per pool (2 instances); the correction is never zero, and where it
    crosses half an instance it adds a token instance to what hpa_threshold asked for (the
    entry is chosen on validation, and in effect it is hpa_threshold with a token instance
    more now and then: docs/llm_autoscaling.md)."""
    import numpy as np

    from rlsched.envs.make import make_env
    from rlsched.policies.registry import make_policy

    name = "llm-autoscaling-hpa-threshold-residual-ppo"
    assert card(name)["residual"]["policy"] == "hpa_threshold?switch_window=1"
    env = make_env("rlsched/LLMAutoscaling-v0", None, scenario="code-2x")
    pol = make_policy(f"learned:zoo/{name}?trial=off", env, seed=0)  # without its guard
    base, played = [], []
    base_act = pol.base.act

    def recorded(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:  # the base's own action
        base.append(np.asarray(base_act(obs, mask), float))
        return base[-1]

    pol.base.act = recorded
    obs, _ = env.reset(seed=0)
    pol.reset(0)
    done = False
    while not done:
        played.append(np.asarray(pol.act(obs, env.unwrapped.action_masks()), float))
        obs, _, term, trunc, _ = env.step(played[-1])
        done = term or trunc
    correction = np.array(played) - np.array(base)
    assert len(correction) >= 250
    assert (np.abs(correction) <= 0.4 + 1e-6).all() and (np.abs(correction) > 1e-9).all()
    deltas = env.unwrapped.executor.deltas  # the instances an action asks for, as the env rounds
    more = np.array([deltas(p) for p in played]) - np.array([deltas(b) for b in base])
    assert (more[:, 0] == 0).all() and (more[:, 1] >= 0).all() and (more[:, 1] > 0).any()


def test_pods_zoo_policy_runs_through_compare() -> None:
    rep = compare(
        "rlsched/PodRebalancing-v0",
        "synthetic:pods?seed=2",
        "greedy_migration,learned:zoo/pod-rebalancing-anchored-ppo",
        episodes=2,
        seed=0,
        env_kwargs={**card("pod-rebalancing-anchored-ppo")["env_kwargs"], "episode_length": 6},
    )
    row = next(r for r in rep["results"] if r["kind"] == "learned")
    assert row["metrics"]["invalid_actions"] == 0 and "paired" in row


def test_anchored_pods_entry_keeps_its_anchor_at_100_nodes() -> None:
    """The anchored entry picks among noop and greedy_migration's first 8 moves, in the env as
    every other policy sees it (all feasible moves valid), at a size it was not trained at."""
    from rlsched.evaluate import make_env
    from rlsched.policies import make_policy
    from rlsched.policies.pods import anchored_mask

    env_id = "rlsched/PodRebalancing-v0"
    kwargs = card("pod-rebalancing-anchored-ppo")["env_kwargs"]  # the features it reads
    env = make_env(env_id, SPLITS[env_id].test, **kwargs, num_nodes=100, episode_length=3)
    net = make_policy("learned:zoo/pod-rebalancing-anchored-ppo?trial=off", env)
    assert net.candidates == 8 and net.resized
    # as shipped, under its trial guard: the network or greedy_migration, both anchored
    guarded = make_policy("learned:zoo/pod-rebalancing-anchored-ppo?trial_futures=1", env)
    for pol in (net, guarded):
        obs, _ = env.reset(seed=1000)
        pol.reset(1000)
        for _ in range(3):
            mask = env.unwrapped.action_masks()
            assert mask.sum() > 1000  # every feasible move
            a = pol.act(obs, mask)
            assert anchored_mask(obs, mask, 8)[a]
            obs, *_ = env.step(a)


def test_small_dag_workflow_entry_has_its_own_split_and_the_exact_optimum() -> None:
    name = small_dag_entry()
    c = card(name)
    train, val, test = c["training"]["dataset"], c["validation"]["dataset"], c["test"]["dataset"]
    # three synthetic sets of different seeds: selection and test never see training data
    assert not overlap(val, test) and not overlap(train, test) and not overlap(train, val)
    oracle = c["test"]["oracle"]
    assert oracle["policy"] == "optimal" and len(oracle["episode_values"]) == c["test"]["episodes"]
    rep = compare(
        c["env"],
        test,
        f"heft,learned:zoo/{name}",
        episodes=2,
        seed=0,
        env_kwargs={**c["env_kwargs"], "scenario": c["preset"]},
    )
    row = next(r for r in rep["results"] if r["kind"] == "learned")
    assert row["metrics"]["invalid_actions"] == 0 and row["metrics"]["workflows"] == 1
    # it reads the look-ahead key and PEFT's schedule: without either the env's observations
    # do not fit the model
    for key in ("lookahead", "dag_plan"):
        with pytest.raises(PolicyError):
            compare(c["env"], test, f"learned:zoo/{name}", episodes=2, seed=0,
                    env_kwargs={k: v for k, v in c["env_kwargs"].items() if k != key})


def test_a_model_refuses_an_observation_shaped_by_other_env_arguments() -> None:
    """The anchored pods entry reads 25 columns per move (``history_features``); without them
    the env gives 20: one clear error, naming the env arguments the model was trained with."""
    from rlsched.envs.pod_rebalancing import PodRebalancingEnv
    from rlsched.policies.learned import LearnedPolicy

    name = "pod-rebalancing-anchored-ppo"
    assert card(name)["env_kwargs"]["history_features"] is True
    policy = LearnedPolicy(resolve(f"zoo/{name}"))
    env = PodRebalancingEnv(max_pods_per_node=30, action_features=True)
    with pytest.raises(PolicyError, match=r"\(481, 20\).*trained with env arguments .*history"):
        policy.check_env(env)
