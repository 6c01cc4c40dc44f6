"""The numpy MlpPolicy actor acts as SB3's ``predict`` does (Box and Discrete actions)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rlsched.evaluate import make_env
from rlsched.policies.learned import LearnedPolicy
from rlsched.policies.registry import make_policy


def test_the_llm_scaler_acts_as_predict_with_its_normalisation() -> None:
    env = make_env("rlsched/LLMAutoscaling-v0", "azure-llm:code", episode_duration=60.0)
    pol = make_policy("learned:zoo/llm-autoscaling-slo-ppo?trial=off", env, seed=0)
    assert isinstance(pol, LearnedPolicy) and pol._mlp is not None
    other = make_policy("threshold", env, seed=0)  # visit the states another policy reaches
    obs, _ = env.reset(seed=3)
    done, n = False, 0
    while not done:
        mask = env.unwrapped.action_masks()
        a = pol.act(obs, mask)
        ref, _ = pol.model.predict(pol._normalize(obs), deterministic=True)
        assert a.dtype == np.float32 and a.shape == ref.shape
        np.testing.assert_allclose(a, ref, atol=1e-5)
        obs, _, term, trunc, _ = env.step(other.act(obs, mask))
        done, n = term or trunc, n + 1
    assert n == 30


@pytest.fixture(scope="module")
def kube_mlp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from rlsched.train import TrainConfig, train

    cfg = TrainConfig(
        env_id="rlsched/KubeScheduling-v0", dataset=None, eval_dataset=None,
        env_kwargs={"num_nodes": 3, "episode_length": 20, "scenario": "note"},
        algo="maskable_ppo", policy_net="mlp", net_arch=[32, 32], total_steps=128, n_envs=1,
        n_steps=64, batch_size=32, n_epochs=1, eval_freq=0, tensorboard=False,
        normalize_obs=True, checkpoint_freq=0,
    )  # fmt: skip
    run = tmp_path_factory.mktemp("kube-mlp")
    train(cfg, run, progress=False)
    return run / "model"


def test_a_discrete_mlp_model_takes_predicts_masked_action(kube_mlp: Path) -> None:
    env = make_env("rlsched/KubeScheduling-v0", num_nodes=3, episode_length=20, scenario="note")
    pol = make_policy(f"learned:{kube_mlp}", env, seed=0)
    assert isinstance(pol, LearnedPolicy) and pol._mlp is not None and pol._mlp.discrete
    obs, _ = env.reset(seed=1)
    done = False
    while not done:
        mask = env.unwrapped.action_masks()
        a = pol.act(obs, mask)
        ref, _ = pol.model.predict(pol._normalize(obs), action_masks=mask, deterministic=True)
        assert a == int(ref) and mask[a]
        obs, _, term, trunc, _ = env.step(a)
        done = term or trunc
