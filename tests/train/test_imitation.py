"""Imitation warm start: exact teacher data, a clone that copies it, the trainer uses it."""

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from rlsched.errors import ConfigError
from rlsched.evaluate import make_env
from rlsched.policies import make_policy
from rlsched.train import TrainConfig, train
from rlsched.train.imitation import collect, pretrain

ENV = "rlsched/WorkflowOffloading-v0"
DATA = "synthetic:placement?workflows=20&tasks=8&seed=5"
KW = {"num_workflows": 1, "reward": "makespan", "num_nodes": 3}


def _make():
    return make_env(ENV, DATA, **KW)


def test_collect_records_teacher_actions_masks_and_discounted_returns() -> None:
    demos = collect(_make, "greedy_eft", episodes=3, gamma=0.5, seed=7, progress=False)
    assert len(demos) == 3 * 8  # one decision per task
    assert demos.masks[np.arange(len(demos)), demos.actions].all()
    # replay the teacher: same actions, and returns are the discounted reward-to-go
    env = _make()
    pol = make_policy("greedy_eft", env, seed=7)
    i = 0
    for ep in range(3):
        obs, _ = env.reset(seed=7 + ep)
        rewards, done = [], False
        while not done:
            a = pol.act(obs, env.unwrapped.action_masks())
            assert a == demos.actions[i + len(rewards)]
            obs, r, done, _, _ = env.step(a)
            rewards.append(r)
        g = [0.0] * len(rewards)
        acc = 0.0
        for k in range(len(rewards) - 1, -1, -1):
            acc = rewards[k] + 0.5 * acc
            g[k] = acc
        np.testing.assert_allclose(demos.returns[i : i + len(rewards)], g, rtol=1e-5)
        i += len(rewards)


def test_dagger_collection_follows_the_learner_and_records_the_teacher() -> None:
    always_first = lambda obs, mask: int(np.flatnonzero(mask)[0])  # noqa: E731
    demos = collect(
        _make, "greedy_eft", episodes=2, gamma=1.0, seed=3, progress=False, behaviour=always_first
    )
    env = _make()
    teacher = make_policy("greedy_eft", env, seed=3)
    i = 0
    for ep in range(2):
        obs, _ = env.reset(seed=3 + ep)
        done, total = False, 0.0
        start = i
        while not done:
            mask = env.unwrapped.action_masks()
            assert demos.actions[i] == teacher.act(obs, mask)  # the label is the teacher's
            obs, r, done, _, _ = env.step(always_first(obs, mask))  # the learner acts
            total += r
            i += 1
        assert demos.returns[start] == pytest.approx(total, rel=1e-5)
    assert i == len(demos)


def test_pretrain_makes_the_network_copy_the_teacher() -> None:
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    from rlsched.agents import networks

    torch.manual_seed(0)
    model = MaskablePPO(
        networks.MaskableNodePolicy,
        DummyVecEnv([_make]),
        policy_kwargs=networks.node_policy_kwargs(32, [32]),
        device="cpu",
        seed=0,
    )
    demos = collect(_make, "greedy_eft", episodes=30, gamma=0.99, seed=0, progress=False)

    def agreement() -> tuple[float, float]:
        """(argmax agreement, mean probability of the teacher's action)"""
        obs = {k: torch.as_tensor(v) for k, v in demos.obs.items()}
        with torch.no_grad():
            probs = model.policy.get_distribution(obs, action_masks=demos.masks).distribution.probs
        p_teacher = probs[torch.arange(len(demos)), torch.as_tensor(demos.actions)]
        return float((probs.argmax(1).numpy() == demos.actions).mean()), float(p_teacher.mean())

    _, p_before = agreement()
    stats = pretrain(model.policy, demos, epochs=30, batch_size=64, seed=0, progress=False)
    after, p_after = agreement()
    assert stats["samples"] == len(demos)
    assert after >= 0.85, after
    # a near-uniform start gives the teacher's action ~1/valid; the clone gives most of the mass
    assert p_before < 0.5 < p_after, (p_before, p_after)
    assert stats["accuracy"] >= 0.8


def test_dqn_cannot_warm_start() -> None:
    with pytest.raises(ConfigError, match="imitation_policy"):
        TrainConfig(algo="dqn", imitation_policy="heft").validate()


def test_trainer_warm_starts_and_records_it(tmp_path: Path) -> None:
    cfg = TrainConfig(
        env_id=ENV,
        dataset=DATA,
        eval_dataset=DATA,
        env_kwargs=KW,
        total_steps=128,
        n_envs=1,
        n_steps=64,
        batch_size=32,
        n_epochs=1,
        eval_freq=64,
        eval_episodes=1,
        imitation_policy="heft",
        imitation_episodes=4,
        imitation_epochs=2,
        imitation_dagger_rounds=1,
        tensorboard=False,
    )
    train(cfg, tmp_path, progress=False)
    run = json.loads((tmp_path / "run.json").read_text())
    im = run["imitation"]
    # the DAgger round adds the learner's 4 episodes, labelled by the teacher
    assert im["policy"] == "heft" and im["dagger_rounds"] == 1
    assert im["first_fit"]["samples"] == 4 * 8 and im["samples"] == 2 * 4 * 8
    assert np.isfinite(im["eval_mean_reward"])
    assert (tmp_path / "model" / "model.zip").is_file()
