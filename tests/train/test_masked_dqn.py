"""Masked dueling double DQN: the epsilon schedule, masks in acting and in the target, the
dueling head, save/load, and ``rlsched train --algo masked_dqn`` end to end."""

import json
from itertools import pairwise
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
import torch
import yaml
from gymnasium import spaces
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.logger import Logger
from stable_baselines3.common.vec_env import DummyVecEnv
from typer.testing import CliRunner

from rlsched.agents.masked_dqn import (
    DuelingQNetwork,
    EpsilonSchedule,
    MaskedDictReplayBuffer,
    MaskedDQN,
    MaskedReplayBuffer,
    masked_double_dqn_target,
    piecewise_linear,
)
from rlsched.cli import app
from rlsched.evaluate import make_env
from rlsched.policies import make_policy

CONFIGS = Path(__file__).resolve().parents[2] / "configs"
POINTS, VALUES = (0.0, 0.25, 0.9, 1.0), (0.9, 0.5, 0.2, 0.2)


class PickTheBest(gym.Env):
    """Toy masked bandit-like env: pick the largest valid entry of the observation.

    The mask is a function of the observation (``obs > 0.3``, the largest always valid), so a
    test can check the masks the replay buffer stored for each next observation.
    """

    def __init__(self, n: int = 6, length: int = 16) -> None:
        self.n, self.length = n, length
        self.observation_space = spaces.Box(0.0, 1.0, (n,), np.float32)
        self.action_space = spaces.Discrete(n)
        self.invalid = 0

    @staticmethod
    def mask_of(obs: np.ndarray) -> np.ndarray:
        m = obs > 0.3
        m[int(np.argmax(obs))] = True
        return m

    def _draw(self) -> np.ndarray:
        self._obs = self.np_random.random(self.n).astype(np.float32)
        return self._obs.copy()

    def reset(self, *, seed: int | None = None, options: Any = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self._t = 0
        return self._draw(), {}

    def action_masks(self) -> np.ndarray:
        return self.mask_of(self._obs)

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        a = int(action)
        if not self.action_masks()[a]:
            self.invalid += 1
        reward = float(self._obs[a])
        self._t += 1
        return self._draw(), reward, self._t >= self.length, False, {}


def _toy_model(n_envs: int = 1, **kwargs: Any) -> MaskedDQN:
    venv = DummyVecEnv([PickTheBest for _ in range(n_envs)])
    venv.seed(0)
    defaults: dict[str, Any] = dict(
        learning_starts=50,
        batch_size=32,
        buffer_size=2_000,
        target_update_interval=100,
        policy_kwargs={"net_arch": [32, 32]},
        seed=0,
        device="cpu",
    )
    defaults.update(kwargs)
    model = MaskedDQN("MlpPolicy", venv, **defaults)
    model.set_logger(Logger(folder=None, output_formats=[]))  # no tempdir/SB3-<time> folder
    return model


# ----------------------------------------------------------------------------- schedule
def test_piecewise_linear_at_the_breakpoints_and_in_between() -> None:
    for x, v in zip(POINTS, VALUES, strict=True):
        assert piecewise_linear(x, POINTS, VALUES) == pytest.approx(v)
    assert piecewise_linear(0.125, POINTS, VALUES) == pytest.approx(0.7)
    assert piecewise_linear(0.575, POINTS, VALUES) == pytest.approx(0.35)
    assert piecewise_linear(0.95, POINTS, VALUES) == pytest.approx(0.2)
    xs = np.linspace(0.25, 0.9, 11)
    ys = [piecewise_linear(x, POINTS, VALUES) for x in xs]
    assert np.allclose(np.diff(ys), np.diff(ys)[0])  # linear within a segment
    assert piecewise_linear(-1.0, POINTS, VALUES) == 0.9
    assert piecewise_linear(2.0, POINTS, VALUES) == 0.2
    # SB3 passes progress *remaining* (1 -> 0)
    sched = EpsilonSchedule(POINTS, VALUES)
    assert sched(1.0) == pytest.approx(0.9) and sched(0.75) == pytest.approx(0.5)
    assert sched(0.1) == pytest.approx(0.2) and sched(0.0) == pytest.approx(0.2)
    with pytest.raises(ValueError):
        piecewise_linear(0.5, (0.0, 1.0, 0.5), (1.0, 0.5, 0.2))


def test_exploration_rate_follows_the_schedule_during_learning() -> None:
    total = 400
    model = _toy_model(learning_starts=10_000)  # no gradient steps: only the schedule matters
    assert model.exploration_rate == pytest.approx(0.9)
    seen: list[tuple[int, float]] = []

    class Record(BaseCallback):
        def _on_step(self) -> bool:
            seen.append((self.num_timesteps, self.model.exploration_rate))
            return True

    model.learn(total, callback=Record())
    # the callback runs before the step's schedule update: its rate is the previous step's
    for (t, _), (_, eps) in pairwise(seen):
        assert eps == pytest.approx(piecewise_linear(t / total, POINTS, VALUES))
    assert model.exploration_rate == pytest.approx(0.2)


# ----------------------------------------------------------------------------- masks in acting
def _force_q(model: MaskedDQN, best: int) -> None:
    """Make ``best`` the action with by far the highest Q-value in every state."""
    with torch.no_grad():
        bias = model.q_net.advantage_stream[-1].bias
        bias.zero_()
        bias[best] = 1e3


def test_greedy_acting_never_chooses_a_masked_action() -> None:
    model = _toy_model()
    _force_q(model, best=2)
    rng = np.random.default_rng(0)
    obs = rng.random((64, 6)).astype(np.float32)
    masks = rng.random((64, 6)) < 0.5
    masks[:, 2] = False
    masks[np.arange(64), rng.integers(0, 6, 64)] = True
    masks[:, 2] = False
    masks[~masks.any(axis=1), 0] = True
    unmasked, _ = model.predict(obs, deterministic=True)
    assert (unmasked == 2).all()  # the forced best is what an unmasked DQN would pick
    actions, _ = model.predict(obs, deterministic=True, action_masks=masks)
    assert masks[np.arange(64), actions].all()
    q = model.q_values(obs)
    assert (actions == np.where(masks, q, -np.inf).argmax(axis=1)).all()
    # one observation, one mask (as LearnedPolicy calls it)
    a, _ = model.predict(obs[0], deterministic=True, action_masks=masks[0])
    assert np.ndim(a) == 0 and masks[0, int(a)]


def test_epsilon_random_acting_samples_only_valid_actions_uniformly() -> None:
    model = _toy_model()
    _force_q(model, best=0)
    model.exploration_rate = 1.0
    mask = np.array([False, True, False, True, True, False])
    obs = np.full(6, 0.5, np.float32)
    counts = np.zeros(6, int)
    for _ in range(1500):
        a, _ = model.predict(obs, deterministic=False, action_masks=mask)
        counts[int(a)] += 1
    assert counts[~mask].sum() == 0
    assert (counts[mask] > 400).all()  # ~500 each: uniform over the valid ones
    # batched: each row its own mask
    masks = np.eye(6, dtype=bool)
    for _ in range(50):
        actions, _ = model.predict(np.tile(obs, (6, 1)), deterministic=False, action_masks=masks)
        assert (actions == np.arange(6)).all()


def test_training_never_takes_a_masked_action_and_stores_next_masks() -> None:
    model = _toy_model(n_envs=2, learning_starts=60)
    model.learn(600)  # warm-up (uniform valid), then epsilon-greedy with gradient steps
    assert model.env is not None
    assert model.env.get_attr("invalid") == [0, 0]
    buf = model.replay_buffer
    assert isinstance(buf, MaskedReplayBuffer)
    n = buf.pos
    done = buf.dones[:n].astype(bool)
    for i in range(n):
        for e in range(2):
            expected = (
                np.ones(6, bool) if done[i, e] else PickTheBest.mask_of(buf.next_observations[i, e])
            )
            assert (buf.next_action_masks[i, e] == expected).all(), (i, e)
    assert not buf.next_action_masks[:n].all()  # masks really vary
    sample = buf.sample(16)
    assert sample.next_action_masks.shape == (16, 6) and sample.next_action_masks.dtype == (
        torch.bool
    )


# ----------------------------------------------------------------------------- target
def test_double_dqn_target_uses_only_valid_next_actions() -> None:
    q_online = torch.tensor([[10.0, 5.0, 1.0, 0.0], [0.0, 1.0, 2.0, 3.0], [1.0, 2.0, 3.0, 4.0]])
    q_target = torch.tensor([[100.0, 7.0, 3.0, -1.0], [9.0, 8.0, 6.0, 50.0], [1.0, 1.0, 1.0, 9.0]])
    masks = torch.tensor(
        [[False, True, True, True], [True, True, True, False], [False, False, False, False]]
    )
    rewards = torch.tensor([[1.0], [2.0], [0.5]])
    dones = torch.tensor([[0.0], [0.0], [1.0]])
    y = masked_double_dqn_target(q_online, q_target, masks, rewards, dones, 0.5)
    # row 0: the best action (0) is invalid -> online argmax over {1, 2, 3} is 1 -> target 7
    # row 1: online argmax over {0, 1, 2} is 2 (3 is invalid) -> target 6, not 50 nor 9
    # row 2: terminal -> just the reward (an all-False mask must not break the argmax)
    assert y.shape == (3, 1)
    assert torch.allclose(y, torch.tensor([[1.0 + 0.5 * 7.0], [2.0 + 0.5 * 6.0], [0.5]]))
    # the online network chooses, the target network evaluates (double DQN, not max of target)
    y2 = masked_double_dqn_target(
        q_online,
        q_target,
        torch.ones(3, 4, dtype=torch.bool),
        rewards,
        torch.zeros(3, 1),
        torch.full((3, 1), 0.5),
    )
    assert torch.allclose(y2[:, 0], torch.tensor([1.0 + 50.0, 2.0 + 25.0, 0.5 + 4.5]))


# ----------------------------------------------------------------------------- dueling head
def test_dueling_head_shape_and_aggregation() -> None:
    model = _toy_model()
    net = model.q_net
    assert isinstance(net, DuelingQNetwork) and isinstance(model.q_net_target, DuelingQNetwork)
    obs = torch.rand(5, 6)
    v, a = net.value_and_advantage(obs)
    assert v.shape == (5, 1) and a.shape == (5, 6)
    q = net(obs)
    assert q.shape == (5, 6)
    assert torch.allclose(q, v + a - a.mean(dim=1, keepdim=True), atol=1e-6)
    assert torch.allclose(q.mean(dim=1, keepdim=True), v, atol=1e-5)  # mean over all actions


def test_node_scoring_dueling_head_on_dict_observations() -> None:
    from rlsched.agents.networks import NodeSetExtractor

    env = make_env("rlsched/ServerlessPlacement-v0", "wfinstances:blast-43", episode_length=20)
    model = MaskedDQN(
        "MultiInputPolicy",
        DummyVecEnv([lambda: env]),
        learning_starts=20,
        batch_size=16,
        policy_kwargs={
            "net_arch": [32],
            "features_extractor_class": NodeSetExtractor,
            "features_extractor_kwargs": {"hidden": 16},
            "node_scoring": True,
        },
        seed=0,
        device="cpu",
    )
    assert isinstance(model.replay_buffer, MaskedDictReplayBuffer)
    n = env.action_space.n
    obs, _ = env.reset(seed=0)
    obs_t, _ = model.policy.obs_to_tensor(obs)
    v, a = model.q_net.value_and_advantage(obs_t)
    assert v.shape == (1, 1) and a.shape == (1, n)
    # one score head shared by every node: node i's advantage is the head on node i's embedding
    feats = model.q_net.extract_features(obs_t, model.q_net.features_extractor)
    emb = feats[:, : n * 16].reshape(1, n, 16)
    head = model.q_net.advantage_stream
    assert torch.allclose(a[0, 3], head(emb[0, 3])[0], atol=1e-6)
    model.set_logger(Logger(folder=None, output_formats=[]))
    model.learn(60)
    assert model.env is not None


# ----------------------------------------------------------------------------- save / load
def test_save_load_round_trip_gives_identical_greedy_actions(tmp_path: Path) -> None:
    model = _toy_model(learning_starts=30, epsilon_points=(0.0, 1.0), epsilon_values=(0.5, 0.1))
    model.learn(300)
    model.save(tmp_path / "m.zip")
    loaded = MaskedDQN.load(tmp_path / "m.zip", device="cpu")
    assert isinstance(loaded.q_net, DuelingQNetwork)
    assert loaded.epsilon_points == (0.0, 1.0) and loaded.epsilon_values == (0.5, 0.1)
    rng = np.random.default_rng(1)
    obs = rng.random((200, 6)).astype(np.float32)
    masks = np.stack([PickTheBest.mask_of(o) for o in obs])
    a1, _ = model.predict(obs, deterministic=True, action_masks=masks)
    a2, _ = loaded.predict(obs, deterministic=True, action_masks=masks)
    assert (a1 == a2).all()
    assert np.allclose(model.q_values(obs), loaded.q_values(obs))


# ----------------------------------------------------------------------------- end to end
def test_cli_train_masked_dqn_then_compare_without_invalid_actions(tmp_path: Path) -> None:
    cfg = yaml.safe_load((CONFIGS / "smoke.yaml").read_text())
    cfg.update(learning_starts=100, buffer_size=2_000, target_update_interval=100)
    config = tmp_path / "smoke_dqn.yaml"
    config.write_text(yaml.safe_dump(cfg))
    run = tmp_path / "run"
    runner = CliRunner()
    res = runner.invoke(
        app,
        [
            "train",
            "--config",
            str(config),
            "--algo",
            "masked_dqn",
            "--steps",
            "400",
            "--seed",
            "2",
            "--out",
            str(run),
            "--no-progress",
        ],
    )
    assert res.exit_code == 0, res.output
    meta = json.loads((run / "model" / "meta.json").read_text())
    assert meta["algo"] == "masked_dqn" and meta["normalized_obs"] is True
    assert (run / "model" / "vecnormalize.pkl").is_file()
    assert (run / "eval" / "evaluations.npz").is_file()  # MaskableEvalCallback ran
    assert yaml.safe_load((run / "config.yaml").read_text())["epsilon_values"] == list(VALUES)

    out = tmp_path / "cmp.json"
    res = runner.invoke(
        app,
        [
            "compare",
            "--dataset",
            "wfinstances:blast-43",
            "--episodes",
            "2",
            "--policies",
            f"random,learned:{run}",
            "--json",
            str(out),
            "--env-arg",
            "episode_length=40",
        ],
    )
    assert res.exit_code == 0, res.output
    results = json.loads(out.read_text())["results"]
    learned = next(r for r in results if r["policy"].startswith("learned:"))
    assert learned["episodes"] == 2
    assert learned["metrics"]["invalid_actions"] == 0

    env = make_env("rlsched/ServerlessPlacement-v0", "wfinstances:blast-43", episode_length=40)
    pol = make_policy(f"learned:{run}", env)
    obs, _ = env.reset(seed=7)
    done = False
    while not done:
        mask = env.unwrapped.action_masks()
        a = pol.act(obs, mask)
        assert mask[a]
        obs, _, done, _, info = env.step(a)
    assert info["metrics"]["invalid_actions"] == 0
