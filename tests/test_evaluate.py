"""rlsched.evaluate: the on_episode_end hook, the Gantt hook and the observation-only env
arguments a learned model brings to the env every compared policy plays."""

import json
from pathlib import Path

import pytest

from rlsched import evaluate as evaluate_mod
from rlsched.evaluate import evaluate, make_env, safe_filename
from rlsched.policies import make_policy
from rlsched.report.gantt import gantt_hook


def test_safe_filename() -> None:
    assert safe_filename("heft") == "heft"
    assert safe_filename("learned:runs/x/model") == "learned_runs_x_model"
    assert safe_filename("learned:/abs/p") == "learned_abs_p"
    assert safe_filename("::") == "policy"


def test_on_episode_end_is_called_after_each_episode() -> None:
    env = make_env("rlsched/WorkflowOffloading-v0", "wfinstances:blast-43", num_workflows=1)
    pol = make_policy("greedy_eft", env)
    calls: list[tuple[str, int, int]] = []
    evaluate(pol, env, 2, seed=3, on_episode_end=lambda n, k, e: calls.append(
        (n, k, len(e.unwrapped.schedule_log()))
    ), policy_name="g")  # fmt: skip
    assert [(n, k) for n, k, _ in calls] == [("g", 0), ("g", 1)]
    assert all(rows > 0 for _, _, rows in calls)


def test_gantt_hook_draws_only_the_chosen_episode(tmp_path: Path) -> None:
    env = make_env("rlsched/WorkflowOffloading-v0", "wfinstances:blast-43", num_workflows=1)
    written: list[Path] = []
    hook = gantt_hook(tmp_path, written=written)
    evaluate(make_policy("heft", env), env, 2, on_episode_end=hook, policy_name="learned:a/b")
    assert written == [tmp_path / "learned_a_b.png"]
    assert written[0].read_bytes()[:4] == b"\x89PNG"


def test_gantt_hook_notifies_once_for_envs_without_a_log(tmp_path: Path) -> None:
    env = make_env("rlsched/ServerlessPlacement-v0", "wfinstances:blast-43", episode_length=5)
    msgs: list[str] = []
    hook = gantt_hook(tmp_path / "g", notify=msgs.append)
    for name in ("first_fit", "random"):
        evaluate(make_policy(name, env), env, 1, on_episode_end=hook, policy_name=name)
    assert len(msgs) == 1 and "not available" in msgs[0]
    assert not (tmp_path / "g").exists()

def _model(folder: Path, **env_kwargs: object) -> str:
    (folder / "model").mkdir(parents=True)
    meta = {"format": "rlsched-model/1", "algo": "ppo", "env_kwargs": env_kwargs}
    (folder / "model" / "meta.json").write_text(json.dumps(meta))
    return f"learned:{folder}"


def test_a_learned_models_observation_args_join_its_row(tmp_path: Path) -> None:
    env_id = "rlsched/PodRebalancing-v0"
    row = {"action_features": True, "scenario": "today"}
    hist = _model(tmp_path / "hist", action_features=True, history_features=True)
    plain = _model(tmp_path / "plain", action_features=True)
    assert evaluate_mod.learned_observation_args(env_id, [hist], row) == {"history_features": True}
    assert evaluate_mod.learned_observation_args(env_id, [plain], row) == {}
    # seeds of one policy by glob; a missing model is left to the run to report
    seeds = _model(tmp_path / "seed0", action_features=True, history_features=True)
    glob_spec = seeds.replace("seed0", "seed*")
    missing = f"learned:{tmp_path / 'nothing'}"
    assert evaluate_mod.learned_observation_args(env_id, [glob_spec, missing], row) == {
        "history_features": True
    }
    with pytest.raises(ValueError, match=r"history_features=True .* history_features=False"):
        evaluate_mod.learned_observation_args(env_id, [hist, plain], row)
    # an argument that changes the problem (candidates, migration_cost) is never copied
    other = _model(tmp_path / "other", action_features=True, migration_cost=9.0, candidates=2)
    assert evaluate_mod.learned_observation_args(env_id, [other], row) == {}



def test_a_departure_models_workflow_keys_join_its_row() -> None:
    """The zoo's `congested` departure model reads the workflow's graph padded to 64 tasks:
    ``dag`` and ``dag_max_tasks`` join the row, so ``rlsched results`` can play it."""
    from rlsched.zoo import ZOO_DIR, card, names

    env_id = "rlsched/WorkflowOffloading-v0"
    (name,) = [n for n in names() if card(n).get("algo") == "departures"
               and card(n)["env_kwargs"].get("num_workflows") != 1]  # not the small-DAG one
    model = ZOO_DIR / name / "model"
    added = evaluate_mod.learned_observation_args(env_id, [f"learned:{model}"],
                                                  {"scenario": "congested"})  # fmt: skip
    assert added["dag"] is True and added["dag_max_tasks"] == 64
    assert "dag_plan" not in added and "reward" not in added  # its default; not an observation


def test_rows_measured_elsewhere_join_a_comparison_as_if_played_in_it() -> None:
    """``compare(measured=...)`` takes rows :func:`policy_row` gave in another env (the demo's
    worker processes) and pairs them exactly as the rows it plays itself."""
    from rlsched.evaluate import compare, policy_row

    kw = {"episode_length": 20}
    args = ("rlsched/ServerlessPlacement-v0", "wfinstances:blast-43")
    whole = compare(*args, "first_fit,least_loaded,k8s_balanced", episodes=3, env_kwargs=kw)
    other = make_env(*args, **kw)  # a fresh env, with other policies played in it before
    policy_row("random", other, 2, seed=5)
    rows = {p: policy_row(p, other, 3) for p in ("k8s_balanced", "first_fit")}
    joined = compare(*args, "first_fit,least_loaded,k8s_balanced", episodes=3, env_kwargs=kw,
                     measured=rows)  # fmt: skip
    assert joined == whole and joined["reference"] is not None
    assert next(r for r in joined["results"] if r["policy"] == "first_fit") is rows["first_fit"]
    assert all("paired" in r for r in joined["results"] if r["policy"] != joined["reference"])


@pytest.mark.parametrize(
    ("env_id", "dataset", "kwargs"),
    [
        ("rlsched/WorkflowOffloading-v0", None, {"scenario": "congested", "num_workflows": 3}),
        ("rlsched/LLMAutoscaling-v0", "azure-llm:code", {"episode_duration": 40.0}),
        ("rlsched/KubeScheduling-v0", None, {"scenario": "gang"}),
    ],
)
def test_policies_that_read_no_observation_are_advanced_to_the_same_episodes(
    env_id: str, dataset: str | None, kwargs: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A heuristic that reads the env, not the observation, is stepped with ``advance`` (no
    observation built) where the env has one: the same rewards, lengths and metrics as
    stepped with observations, and the env's ``step`` is not called."""
    from rlsched.policies.registry import expand_policies

    env = make_env(env_id, dataset, **kwargs)
    names = [n for n in expand_policies("plain", env)
             if make_policy(n, env, seed=0).reads_observation is False]  # fmt: skip
    assert len(names) >= 3  # Kube: random, round_robin, first_fit
    for name in names:
        seeing = make_policy(name, env, seed=0)
        seeing.reads_observation = True  # an instance's own flag: stepped with observations
        stepped = evaluate(seeing, env, 2, seed=11)
        blind = make_policy(name, env, seed=0)
        with monkeypatch.context() as m:
            m.setattr(type(env.unwrapped), "step", lambda *a: pytest.fail("stepped"))
            advanced = evaluate(blind, env, 2, seed=11)
        key = [(r.reward, r.length, repr(r.metrics)) for r in stepped]
        assert key == [(r.reward, r.length, repr(r.metrics)) for r in advanced], name


def _model_meta(tmp_path: Path, name: str, **meta: object) -> str:
    """A model folder with only a meta.json (enough for the checks that read it)."""
    from rlsched.agents.models import MODEL_FORMAT

    d = tmp_path / name
    d.mkdir()
    (d / "meta.json").write_text(json.dumps({"format": MODEL_FORMAT, **meta}))
    return f"learned:{d}"


def test_a_model_is_not_judged_on_data_it_was_trained_on(tmp_path: Path) -> None:
    from rlsched.errors import ConfigError
    from rlsched.evaluate import check_not_trained_on

    late = "azure-llm:code?start=1800"
    timed = _model_meta(tmp_path, "timed", dataset="azure-llm:conv",
                        train_datasets=["azure-llm:code?end=1800"], split="code-time")  # fmt: skip
    conv = _model_meta(tmp_path, "conv", dataset="azure-llm:conv")
    code = _model_meta(tmp_path, "code", dataset="azure-llm:code?rate_scale=2")
    check_not_trained_on([timed, conv, "hpa"], late, "code-time")  # its own split's test set
    check_not_trained_on([conv, "learned:/nonexistent/model"], "azure-llm:code")
    # trained under the time split, judged on the default split's test set (the whole trace)
    with pytest.raises(ConfigError, match="trained under the split 'code-time'"):
        check_not_trained_on([timed], "azure-llm:code")
    # a model of the default split trained on the code trace: not judged on a time split's test
    with pytest.raises(ConfigError, match="shares azure-llm:code:seconds 1800-inf"):
        check_not_trained_on([conv, code], late, "code-time")
    both = _model_meta(tmp_path, "both", dataset="azure-llm:conv",
                       train_datasets=["azure-llm:code?end=1900"])  # fmt: skip
    with pytest.raises(ConfigError, match="trained on 'azure-llm:code\\?end=1900'"):
        check_not_trained_on([f"{both}?anchor=hpa"], late, "code-time")
    # a glob: every seed's meta is read
    with pytest.raises(ConfigError, match="code-time"):
        check_not_trained_on([f"learned:{tmp_path}/t*"], "azure-llm:code")
