"""Building policies decides applicability without touching the env's state."""

from __future__ import annotations

import numpy as np
import pytest

import rlsched  # noqa: F401
from rlsched.envs import ENV_IDS
from rlsched.evaluate import compare, make_env
from rlsched.policies import applicable_heuristics, make_policy

#: small, fast instances of every env
SMALL = {
    "rlsched/ServerlessPlacement-v0": {"episode_length": 30},
    "rlsched/KubeScheduling-v0": {"episode_length": 30},
    "rlsched/WorkflowOffloading-v0": {"max_tasks": 40},
    "rlsched/VMPlacement-v0": {"episode_length": 30},
    "rlsched/PodRebalancing-v0": {},
    "rlsched/LLMAutoscaling-v0": {"episode_duration": 30.0},
}


def _flat(obs: object) -> np.ndarray:
    if isinstance(obs, dict):
        return np.concatenate([np.ravel(obs[k]).astype(float) for k in sorted(obs)])
    return np.ravel(np.asarray(obs, dtype=float))


def _steps(env, n: int = 3) -> list[tuple[np.ndarray, float]]:
    out = []
    for _ in range(n):
        mask = env.unwrapped.action_masks() if hasattr(env.unwrapped, "action_masks") else None
        if mask is not None and np.asarray(mask).ndim == 1 and mask.any():
            action = int(np.flatnonzero(mask)[-1])  # not first-fit: a different path than reset
        else:
            action = env.action_space.sample() * 0
        obs, reward, term, trunc, _ = env.step(action)
        out.append((_flat(obs), float(reward)))
        if term or trunc:
            break
    return out


@pytest.mark.parametrize("env_id", list(ENV_IDS))
def test_building_every_policy_leaves_the_env_where_it_was(env_id: str) -> None:
    used, fresh = make_env(env_id, **SMALL[env_id]), make_env(env_id, **SMALL[env_id])
    obs_used, _ = used.reset(seed=7)
    obs_fresh, _ = fresh.reset(seed=7)
    assert np.array_equal(_flat(obs_used), _flat(obs_fresh))
    names = applicable_heuristics(used)
    assert names
    for name in names:
        make_policy(name, used, seed=0)
    got, want = _steps(used), _steps(fresh)
    assert len(got) == len(want)
    for (o1, r1), (o2, r2) in zip(got, want, strict=True):
        assert np.array_equal(o1, o2) and r1 == r2


def test_an_env_policy_takes_arguments_in_its_spec() -> None:
    from rlsched.errors import PolicyError

    env = make_env("rlsched/LLMAutoscaling-v0", None, episode_duration=60.0)
    pol = make_policy("hpa_threshold?switch_window=16&switch_instances=3.0", env, seed=0)
    assert (pol.name, pol.switch_window) == (
        "hpa_threshold?switch_window=16&switch_instances=3.0",
        16,
    )
    assert pol.switch_instances == {"prompt": 3.0, "token": 3.0}
    assert make_policy("hpa_threshold?switch_window=1", env, seed=0).switch_window == 1
    for spec, match in (
        (
            "hpa_threshold?window=4",
            r"takes \['switch_instances', 'switch_window'\], not \['window'\]",
        ),
        (
            "hpa?switch_window=4",
            r"hpa takes \['targets', 'prompt_target', 'token_target', 'target', .*\], "
            r"not \['switch_window'\]",
        ),
        ("threshold?up_step=1.5", "up_step must be a whole number"),
        ("threshold?queue_up=true", "queue_up must be a finite number"),
        ("threshold?queue_up=.inf", "queue_up must be a finite number"),
        ("hpa_threshold?switch_window", "key=value"),
        ("hpa_threshold?switch_window=[1, 2]", "must be a number"),
        ("hpa_thresold?switch_window=4", "did you mean 'hpa_threshold'"),
        ("hpa_threshold?switch_window=0", "switch_window must be"),
    ):
        with pytest.raises(PolicyError, match=match):
            make_policy(spec, env, seed=0)
    vm = make_env("rlsched/ServerlessPlacement-v0", None)
    with pytest.raises(PolicyError, match="only an env's own policies take arguments"):
        make_policy("k8s_balanced?weight=2", vm, seed=0)


def test_a_scaler_takes_its_config_fields_as_settings_in_its_spec() -> None:
    """``threshold?up_step=1``: the fields of the policy's config dataclass, over the default
    it builds from the env (its ``min_instances`` kept); the default's own value plays the
    same episodes as the plain spec, another value other ones."""
    env = make_env("rlsched/LLMAutoscaling-v0", None, episode_duration=60.0)
    pol = make_policy("threshold?up_step=1&down_stable=30", env, seed=0)
    assert pol.name == "threshold?up_step=1&down_stable=30"
    assert pol.settings == {"up_step": 1, "down_stable": 30.0}
    env.reset(seed=3)
    pol.reset(3)
    pol.start_episode()
    cfg = next(iter(pol.scalers.values())).config
    sm = env.unwrapped.sim.scaling_manager
    assert (cfg.up_step, cfg.down_stable, cfg.up_cooldown) == (1, 30.0, 20.0)
    assert cfg.min_instances == max(1, sm.min_instances_per_pool)
    hpa = make_policy("hpa?target=0.5&scale_down_stabilization=60", env, seed=0)
    assert set(hpa.targets_util.values()) == {0.5}
    assert hpa.settings == {"target": 0.5, "scale_down_stabilization": 60.0}
    rep = compare("rlsched/LLMAutoscaling-v0", None, "threshold,threshold?up_step=2,"
                  "threshold?up_step=1&up_cooldown=5", episodes=3, seed=0,
                  env_kwargs={"scenario": "conv-3x", "episode_duration": 60.0})  # fmt: skip
    values = [r["episode_values"] for r in rep["results"]]
    assert values[0] == values[1] and values[2] != values[0]


def test_hpa_takes_one_pools_target_in_its_spec() -> None:
    """``hpa?prompt_target=0.5``: that pool's target, the other pool's kept (over ``target``
    where both are given); each controller scales to its pool's target; not a number above 0:
    an error naming it."""
    from rlsched.errors import PolicyError

    env = make_env("rlsched/LLMAutoscaling-v0", None, episode_duration=60.0)
    hpa = make_policy("hpa", env, seed=0)
    pol = make_policy("hpa?prompt_target=0.5&sync_period=5", env, seed=0)
    assert pol.targets_util == {**hpa.targets_util, "prompt": 0.5}
    assert pol.settings == {"sync_period": 5.0}
    both = make_policy("hpa?target=0.6&token_target=0.8", env, seed=0)
    assert both.targets_util == {"prompt": 0.6, "token": 0.8}
    env.reset(seed=3)
    pol.reset(3)
    pol.start_episode()
    assert {t: c.config.target for t, c in pol.controllers.items()} == pol.targets_util
    assert pol.sync_period == 5.0
    for bad in ("0", "-0.4", ".inf", "inf", "true"):
        with pytest.raises(PolicyError, match="prompt_target must be a number above 0"):
            make_policy(f"hpa?prompt_target={bad}", env, seed=0)
    rep = compare("rlsched/LLMAutoscaling-v0", None, "hpa,hpa?prompt_target=0.4,"
                  "hpa?prompt_target=0.2", episodes=3, seed=0,
                  env_kwargs={"scenario": "conv-3x", "episode_duration": 60.0})  # fmt: skip
    values = [r["episode_values"] for r in rep["results"]]
    assert values[0] == values[1] and values[2] != values[0]
