"""Every registered env keeps the env contract of :mod:`rlsched.envs.base`.

Parametrised over ``rlsched.envs.ENV_IDS``: the base class and exports, the ``METRICS`` spec
and what is derived from it, ``time`` in every info, the one invalid-action rule, the one rule
for masks after the episode's end, the render-mode check.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from gymnasium import spaces

import rlsched.envs
from rlsched.envs import ENV_IDS
from rlsched.envs.args import env_class
from rlsched.envs.base import Metric, RlschedEnv, main_metric_of

ENVS = sorted(ENV_IDS)

#: Small episodes, so that each env reaches its natural end in a few steps.
SHORT: dict[str, dict[str, Any]] = {
    "rlsched/ServerlessPlacement-v0": {"episode_length": 6},
    "rlsched/KubeScheduling-v0": {"episode_length": 5},
    "rlsched/WorkflowOffloading-v0": {"num_workflows": 1, "scenario": "patent"},
    "rlsched/VMPlacement-v0": {"episode_length": 4},
    "rlsched/PodRebalancing-v0": {"episode_length": 3},
    "rlsched/LLMAutoscaling-v0": {"episode_duration": 6.0},
}


def _env(env_id: str, **kw: Any) -> RlschedEnv:
    return env_class(env_id)(**{**SHORT[env_id], **kw})  # type: ignore[no-any-return]


@pytest.mark.parametrize("env_id", ENVS)
def test_every_env_is_an_rlsched_env_and_exported(env_id: str) -> None:
    cls = env_class(env_id)
    assert issubclass(cls, RlschedEnv)
    assert getattr(rlsched.envs, cls.__name__) is cls and cls.__name__ in rlsched.envs.__all__


@pytest.mark.parametrize("env_id", ENVS)
def test_metrics_spec_covers_the_metrics(env_id: str) -> None:
    cls = env_class(env_id)
    assert all(isinstance(m, Metric) for m in cls.METRICS.values())
    # main metric and direction are derived from METRICS, on the class and on instances
    main = cls.main_metric
    assert main == "reward" or cls.METRICS[main].main
    assert sum(m.main for m in cls.METRICS.values()) <= 1
    assert cls.main_metric_direction == cls.metric_spec(main).direction
    assert main_metric_of(cls) == (main, cls.main_metric_direction)
    lb = cls.leaderboard_metrics
    assert set(lb) <= set(cls.METRICS) and (main == "reward" or lb[0] == main)
    env = _env(env_id)
    env.reset(seed=0)
    # an instance may name another main metric for its scenario (KubeScheduling's gangs: job
    # completion time), always one of METRICS, its direction from the spec
    m, d = main_metric_of(env)
    assert (m == "reward" or m in cls.METRICS) and d == cls.metric_spec(m).direction
    if env_id != "rlsched/KubeScheduling-v0":
        assert (m, d) == (main, cls.main_metric_direction)
    assert env.dataset_name
    _, info = _run_to_end(env)
    assert set(info["metrics"]) <= set(cls.METRICS), set(info["metrics"]) - set(cls.METRICS)


def _first_valid(env: RlschedEnv) -> Any:
    if isinstance(env.action_space, spaces.Discrete):
        return int(np.flatnonzero(env.action_masks())[0])
    return np.zeros(env.action_space.shape, dtype=env.action_space.dtype)


def _run_to_end(env: RlschedEnv) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    infos = []
    for _ in range(500):
        _, _, term, trunc, info = env.step(_first_valid(env))
        infos.append(info)
        if term or trunc:
            return infos, info
    raise AssertionError("no end in 500 steps")


@pytest.mark.parametrize("env_id", ENVS)
def test_time_in_every_info_and_masks_all_true_after_the_end(env_id: str) -> None:
    env = _env(env_id)
    _, info = env.reset(seed=1)
    assert isinstance(info["time"], float)
    infos, last = _run_to_end(env)
    times = [i["time"] for i in infos]
    assert all(isinstance(t, float) for t in times)
    assert times == sorted(times)
    assert "metrics" in last
    mask = env.action_masks()
    assert mask.dtype == bool and mask.all()
    with pytest.raises(RuntimeError):
        env.step(_first_valid(env))


def _invalid_action(env: RlschedEnv) -> int | None:
    """A masked-out action now, else one past the action space; None for envs whose actions
    are never invalid (all-True masks over a Box space)."""
    mask = env.action_masks()
    if not isinstance(env.action_space, spaces.Discrete):
        assert mask.all()
        return None
    bad = np.flatnonzero(~mask)
    return int(bad[0]) if len(bad) else int(env.action_space.n)


@pytest.mark.parametrize("env_id", ENVS)
def test_one_invalid_action_rule(env_id: str) -> None:
    for penalty in (None, 3.0):
        kw = {} if penalty is None else {"invalid_action_penalty": penalty}
        if env_id == "rlsched/LLMAutoscaling-v0" and penalty is not None:
            continue  # never invalid: it takes no penalty argument
        env = _env(env_id, **kw)
        env.reset(seed=0)
        bad = _invalid_action(env)
        if bad is None:
            return
        _, reward, term, trunc, info = env.step(bad)
        assert term and not trunc
        assert info["invalid_action"] is True and isinstance(info["time"], float)
        assert info["metrics"]["invalid_actions"] == 1.0
        if penalty is not None:
            assert reward == -penalty
        else:
            assert reward <= 0.0
        assert env.action_masks().all()
        with pytest.raises(RuntimeError):
            env.step(bad)


@pytest.mark.parametrize("env_id", ENVS)
def test_render_mode_is_checked(env_id: str) -> None:
    with pytest.raises(ValueError, match="render_mode"):
        _env(env_id, render_mode="human-eyes")
    env = _env(env_id, render_mode="ansi")
    env.reset(seed=0)
    assert isinstance(env.render(), str)


#: Old argument name -> (new name, a value) per env with renamed arguments.
RENAMED = {
    "rlsched/VMPlacement-v0": {"num_servers": ("num_nodes", 3), "max_steps": ("episode_length", 7)},
    "rlsched/PodRebalancing-v0": {"episode_windows": ("episode_length", 5)},
    "rlsched/WorkflowOffloading-v0": {"num_edge": ("num_nodes", 2)},
}


@pytest.mark.parametrize("env_id", ENVS)
def test_old_argument_names_warn_for_one_version(env_id: str) -> None:
    import gymnasium as gym

    from rlsched.envs.args import check_env_kwargs

    cls = env_class(env_id)
    assert cls.renamed_arguments == {k: v[0] for k, v in RENAMED.get(env_id, {}).items()}
    kw = {} if env_id != "rlsched/WorkflowOffloading-v0" else {"num_workflows": 1}
    for old, (new, value) in RENAMED.get(env_id, {}).items():
        with pytest.warns(DeprecationWarning, match=f"{old}.*deprecated.*{new}"):
            env = cls(**{old: value}, **kw)
        assert getattr(env, new) == value
        with pytest.warns(DeprecationWarning, match=old):
            made = gym.make(env_id, disable_env_checker=True, **{old: value}, **kw)
        assert getattr(made.unwrapped, new) == value
        with pytest.warns(DeprecationWarning, match=old):
            assert check_env_kwargs(env_id, {old: value}) == {new: value}
        with pytest.raises(TypeError, match="not both"):
            cls(**{old: value, new: value})
        if hasattr(type(env), old):  # the old attribute name: a deprecated alias
            with pytest.warns(DeprecationWarning, match=old):
                assert getattr(env, old) == value


def _toggled(env_id: str) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(argument, env arguments with its default, the same with another value) for every
    ``observation_args`` entry of ``env_id`` (PodRebalancing's history needs action features,
    WorkflowOffloading's schedule and task padding the workflow's keys); a flag is flipped, a
    size (``dag_max_tasks``) grown."""
    import inspect

    cls = env_class(env_id)
    params = inspect.signature(cls.__init__).parameters
    needs = {"history_features": {"action_features": True}, "dag_max_tasks": {"dag": True},
             # PEFT's schedule is played by the compiled rollouts, which the patent's worked
             # example has none of
             "dag_plan": {"dag": True, "scenario": "congested",
                          "dataset": "wfinstances:helloworld-10"}}  # fmt: skip
    out = []
    for arg in cls.observation_args:
        default = params[arg].default
        assert isinstance(default, (bool, int)), (arg, default)
        other = (not default) if isinstance(default, bool) else default + 4
        base = needs.get(arg, {})
        out.append((arg, {**base, arg: default}, {**base, arg: other}))
    return out


OBSERVATION_ARGS = [(e, *t) for e in ENVS for t in _toggled(e)]


def test_observation_args_are_declared_where_the_zoo_needs_them() -> None:
    assert {a for _, a, _, _ in OBSERVATION_ARGS} >= {"history_features", "grid_obs", "finish_gap"}


@pytest.mark.parametrize(("env_id", "arg", "off", "on"), OBSERVATION_ARGS)
def test_observation_args_change_the_observation_only(
    env_id: str, arg: str, off: dict[str, Any], on: dict[str, Any]
) -> None:
    """``rlsched results`` sets a learned model's values of these in a row the heuristics play:
    the same random valid actions must meet the same masks, rewards and metrics either way."""
    runs = []
    for kw in (off, on):
        env = _env(env_id, **kw)
        obs, _ = env.reset(seed=3)
        rng = np.random.default_rng(0)
        trace: list[Any] = []
        keys = set(obs) if isinstance(obs, dict) else set()
        for _ in range(500):
            mask = env.action_masks()
            if isinstance(env.action_space, spaces.Discrete):
                action: Any = int(rng.choice(np.flatnonzero(mask)))
            else:
                action = _first_valid(env)
            obs, reward, term, trunc, info = env.step(action)
            trace.append((mask.tolist(), action if isinstance(action, int) else None, reward))
            if term or trunc:
                break
        runs.append((trace, info["metrics"], keys, obs))
    (t0, m0, k0, _), (t1, m1, k1, o1) = runs
    assert len(t0) > 1
    np.testing.assert_equal(t1, t0)
    np.testing.assert_equal(m1, m0)  # NaN where both are NaN (optimality_gap without a solver)
    # and it does change the observation: a key added or a key's shape
    shapes_differ = k0 != k1 or any(
        np.shape(runs[0][3][k]) != np.shape(o1[k]) for k in k0 & k1
    )
    assert shapes_differ, f"{arg} changed nothing in the observation"
