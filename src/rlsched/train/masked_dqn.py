"""Masked dueling double DQN: the value-based agent of VMAgent's design note, on SB3's DQN.

What differs from :class:`stable_baselines3.DQN` (everything else, including the training
loop, the hard target-network update every ``target_update_interval`` steps, the Huber loss,
gradient clipping and ``.save()`` / ``.load()``, is SB3's):

- **Action masks.** Masks come from the env's ``action_masks()``
  (:func:`sb3_contrib.common.maskable.utils.get_action_masks` on the VecEnv). An invalid action
  is never chosen: not greedily, not by the epsilon-random branch (uniform over the *valid*
  actions, like VMAgent's ``EpsilonGreedyActionSelector``), not during the warm-up before
  ``learning_starts``. :meth:`MaskedDQN.predict` takes ``action_masks=`` as MaskablePPO's does,
  so :class:`~sb3_contrib.common.maskable.callbacks.MaskableEvalCallback` and
  :class:`~rlsched.policies.learned.LearnedPolicy` pass them.
- **Masked double DQN target.** The replay buffer also stores the mask of the next state;
  :func:`masked_double_dqn_target` takes the argmax over valid next actions with the online
  network and evaluates it with the target network.
- **Dueling Q-network.** ``Q(s, a) = V(s) + A(s, a) - mean_a A(s, a)`` (:class:`DuelingQNetwork`).
  The mean runs over *all* actions, not the valid ones: a constant shift per state does not
  change which valid action is best, and keeping Q a function of the observation alone means
  the current mask is needed only at the argmax, not inside the network (nor stored for the
  current state). With ``node_scoring`` the advantage of each node comes from one shared
  per-node head over :class:`~rlsched.train.networks.NodeSetExtractor` embeddings (VMAgent's
  QmixAgent scores every (server, NUMA) option with shared weights in the same spirit).
- **Epsilon schedule.** Piecewise linear over training progress (:func:`piecewise_linear`),
  by default VMAgent's ``linear_decay(x, [0, .25, .9, 1] * MAX, [0.9, 0.5, 0.2, 0.2])``.

Terminal transitions store an all-True next mask: their target is ``r`` (``done`` zeroes the
bootstrap), so the mask only has to keep the argmax well defined. The rlsched envs end episodes
with ``terminated``; SB3 bootstraps time-limit truncations from the terminal observation, whose
mask a VecEnv has already replaced by the reset state's, so there too the max runs over all
actions (a slight over-estimate on truncated steps only).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from typing import Any, ClassVar, NamedTuple, TypeVar

import numpy as np
import torch as th
from gymnasium import spaces
from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported
from stable_baselines3 import DQN
from stable_baselines3.common.buffers import DictReplayBuffer, ReplayBuffer
from stable_baselines3.common.policies import BasePolicy
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor, CombinedExtractor
from stable_baselines3.common.type_aliases import MaybeCallback, PyTorchObs
from stable_baselines3.common.vec_env import VecNormalize
from stable_baselines3.dqn.policies import DQNPolicy, QNetwork
from torch import nn
from torch.nn import functional as F

#: VMAgent's breakpoints (fractions of training) and epsilon values.
DEFAULT_EPSILON_POINTS = (0.0, 0.25, 0.9, 1.0)
DEFAULT_EPSILON_VALUES = (0.9, 0.5, 0.2, 0.2)

SelfMaskedDQN = TypeVar("SelfMaskedDQN", bound="MaskedDQN")


# ----------------------------------------------------------------------------- schedule
def piecewise_linear(progress: float, points: Sequence[float], values: Sequence[float]) -> float:
    """The value at ``progress`` of the polyline through ``(points[i], values[i])``.

    ``points`` are non-decreasing; before the first point the first value holds, after the last
    the last. VMAgent's ``linear_decay(x, [0, .25 M, .9 M, M], [.9, .5, .2, .2])`` is
    ``piecewise_linear(x / M, (0, .25, .9, 1), (.9, .5, .2, .2))``.
    """
    if len(points) != len(values) or not points:
        raise ValueError("piecewise_linear needs as many points as values, at least one")
    if any(b < a for a, b in pairwise(points)):
        raise ValueError(f"piecewise_linear points must be non-decreasing: {list(points)}")
    return float(np.interp(progress, np.asarray(points, float), np.asarray(values, float)))


class EpsilonSchedule:
    """SB3 schedule (``progress_remaining`` from 1 to 0) of :func:`piecewise_linear` over
    training progress ``1 - progress_remaining``. A class, so models pickle by reference."""

    def __init__(self, points: Sequence[float], values: Sequence[float]) -> None:
        piecewise_linear(0.0, points, values)  # validate
        self.points, self.values = tuple(map(float, points)), tuple(map(float, values))

    def __call__(self, progress_remaining: float) -> float:
        return piecewise_linear(1.0 - progress_remaining, self.points, self.values)

    def __repr__(self) -> str:
        return f"EpsilonSchedule(points={self.points}, values={self.values})"


# ----------------------------------------------------------------------------- masked choice
def _as_masks(action_masks: Any, batch: int, n_actions: int) -> np.ndarray:
    """``(batch, n_actions)`` bool masks; None = all valid; an all-False row = all valid."""
    if action_masks is None:
        return np.ones((batch, n_actions), dtype=bool)
    m = np.asarray(action_masks, dtype=bool).reshape(batch, n_actions)
    empty = ~m.any(axis=1)
    if empty.any():
        m = m.copy()
        m[empty] = True
    return m


def masked_argmax(q_values: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """Per row, the valid action with the highest Q-value (first one on ties)."""
    return np.where(masks, q_values, -np.inf).argmax(axis=1)


def random_valid_actions(masks: np.ndarray, rng: Any = np.random) -> np.ndarray:
    """Per row, an action drawn uniformly among the valid ones (``rng``: numpy's global RNG,
    which SB3 seeds, or a Generator)."""
    u = rng.random(masks.shape)
    return np.where(masks, u, -1.0).argmax(axis=1)


def masked_double_dqn_target(
    q_next_online: th.Tensor,
    q_next_target: th.Tensor,
    next_masks: th.Tensor,
    rewards: th.Tensor,
    dones: th.Tensor,
    gamma: float | th.Tensor,
) -> th.Tensor:
    """``r + gamma * (1 - done) * Q_target(s', argmax_{a' valid} Q_online(s', a'))``.

    ``q_next_*``: ``(B, n)``; ``next_masks``: ``(B, n)`` bool (a row without any valid action
    counts as all valid); ``rewards``, ``dones``: ``(B, 1)`` (or ``(B,)``); ``gamma``: a float
    or a ``(B, 1)`` tensor of per-sample discounts. Returns ``(B, 1)``.
    """
    masks = next_masks.bool()
    masks = masks | ~masks.any(dim=1, keepdim=True)
    best = q_next_online.masked_fill(~masks, -th.inf).argmax(dim=1, keepdim=True)
    q_next = q_next_target.gather(1, best)
    rewards = rewards.reshape(-1, 1)
    dones = dones.reshape(-1, 1)
    return rewards + (1.0 - dones) * gamma * q_next


# ----------------------------------------------------------------------------- network
def _mlp(sizes: Sequence[int], activation: type[nn.Module]) -> nn.Sequential:
    layers: list[nn.Module] = []
    for a, b in pairwise(sizes):
        layers += [nn.Linear(a, b), activation()]
    return nn.Sequential(*layers)


class DuelingQNetwork(QNetwork):
    """``Q = V + A - mean(A)`` over all actions.

    Flat (default): features -> shared MLP ``net_arch[:-1]`` -> a value stream and an
    advantage stream, each one hidden layer of ``net_arch[-1]`` units and a linear output
    (Wang et al. 2016). ``node_scoring``: the features come from
    :class:`~rlsched.train.networks.NodeSetExtractor`; the advantage of node ``i`` is one small
    MLP shared by every node applied to node ``i``'s embedding, and the value an MLP
    (``net_arch``) over the pooled and global embeddings; it runs on any cluster size.
    """

    def __init__(
        self,
        observation_space: spaces.Space,
        action_space: spaces.Discrete,
        features_extractor: BaseFeaturesExtractor,
        features_dim: int,
        net_arch: list[int] | None = None,
        activation_fn: type[nn.Module] = nn.ReLU,
        normalize_images: bool = True,
        node_scoring: bool = False,
    ) -> None:
        super().__init__(
            observation_space,
            action_space,
            features_extractor,
            features_dim,
            net_arch,
            activation_fn,
            normalize_images,
        )
        del self.q_net  # replaced by the two streams
        self.node_scoring = node_scoring
        n_actions = int(self.action_space.n)
        arch = list(self.net_arch)
        if node_scoring:
            n_nodes = getattr(features_extractor, "n_nodes", None)
            hidden = getattr(features_extractor, "hidden", None)
            if n_nodes is None or hidden is None:
                raise ValueError("node_scoring needs the NodeSetExtractor features extractor")
            if n_nodes != n_actions:
                raise ValueError(
                    f"node_scoring needs one action per node: {n_actions} actions, {n_nodes} nodes"
                )
            self.n_nodes, self.hidden = int(n_nodes), int(hidden)
            value_sizes = [3 * self.hidden, *arch]  # pooled (mean, max) and global embeddings
            self.trunk = nn.Identity()
            self.value_stream = nn.Sequential(
                _mlp(value_sizes, activation_fn), nn.Linear(value_sizes[-1], 1)
            )
            self.advantage_stream = nn.Sequential(  # one score per node, shared weights
                nn.Linear(self.hidden, self.hidden), activation_fn(), nn.Linear(self.hidden, 1)
            )
        else:
            trunk_sizes = [features_dim, *arch[:-1]]
            self.trunk = _mlp(trunk_sizes, activation_fn)
            d, h = trunk_sizes[-1], arch[-1] if arch else None
            if h is None:
                self.value_stream = nn.Linear(d, 1)
                self.advantage_stream = nn.Linear(d, n_actions)
            else:
                self.value_stream = nn.Sequential(nn.Linear(d, h), activation_fn(), nn.Linear(h, 1))
                self.advantage_stream = nn.Sequential(
                    nn.Linear(d, h), activation_fn(), nn.Linear(h, n_actions)
                )

    def value_and_advantage(self, obs: PyTorchObs) -> tuple[th.Tensor, th.Tensor]:
        """``V(s)`` as ``(B, 1)`` and ``A(s, .)`` as ``(B, n)``, before aggregation."""
        features = self.extract_features(obs, self.features_extractor)
        if self.node_scoring:
            n, hid = self.n_nodes, self.hidden
            nodes = features[:, : n * hid].reshape(-1, n, hid)
            pooled = features[:, n * hid :]
            return self.value_stream(pooled), self.advantage_stream(nodes).squeeze(-1)
        h = self.trunk(features)
        return self.value_stream(h), self.advantage_stream(h)

    def forward(self, obs: PyTorchObs) -> th.Tensor:
        value, adv = self.value_and_advantage(obs)
        return value + adv - adv.mean(dim=1, keepdim=True)

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()
        data["node_scoring"] = self.node_scoring
        return data


class DuelingDQNPolicy(DQNPolicy):
    """SB3's DQNPolicy with :class:`DuelingQNetwork` as online and target network."""

    def __init__(self, *args: Any, node_scoring: bool = False, **kwargs: Any) -> None:
        self.node_scoring = node_scoring
        super().__init__(*args, **kwargs)

    def make_q_net(self) -> DuelingQNetwork:
        net_args = self._update_features_extractor(self.net_args, features_extractor=None)
        return DuelingQNetwork(**net_args, node_scoring=self.node_scoring).to(self.device)

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()
        data["node_scoring"] = self.node_scoring
        return data


class MultiInputDuelingDQNPolicy(DuelingDQNPolicy):
    """:class:`DuelingDQNPolicy` for Dict observations (SB3's CombinedExtractor by default)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("features_extractor_class", CombinedExtractor)
        super().__init__(*args, **kwargs)


# ----------------------------------------------------------------------------- replay buffers
class MaskedReplayBufferSamples(NamedTuple):
    observations: Any
    actions: th.Tensor
    next_observations: Any
    dones: th.Tensor
    rewards: th.Tensor
    next_action_masks: th.Tensor
    discounts: th.Tensor | None = None


class _NextMaskStore:
    """Adds a ``next_action_masks`` array (``(buffer_size, n_envs, n_actions)`` bool) to a
    replay buffer. The algorithm hands the masks of the next states to
    :meth:`set_next_action_masks` just before SB3's ``_store_transition`` calls ``add``."""

    buffer_size: int
    n_envs: int
    pos: int

    def _init_masks(self, action_space: spaces.Space) -> None:
        if not isinstance(action_space, spaces.Discrete):
            raise ValueError("masked replay buffers need a Discrete action space")
        self.n_actions = int(action_space.n)
        self.next_action_masks = np.ones((self.buffer_size, self.n_envs, self.n_actions), bool)
        self._staged: np.ndarray | None = None

    def set_next_action_masks(self, masks: np.ndarray) -> None:
        self._staged = np.asarray(masks, dtype=bool).reshape(self.n_envs, self.n_actions)

    def _store_masks(self) -> None:
        self.next_action_masks[self.pos] = True if self._staged is None else self._staged
        self._staged = None

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_staged"] = None
        return state


class MaskedReplayBuffer(_NextMaskStore, ReplayBuffer):
    """SB3's ReplayBuffer plus the next state's action mask (no ``optimize_memory_usage``)."""

    def __init__(
        self,
        buffer_size: int,
        observation_space: spaces.Space,
        action_space: spaces.Space,
        device: th.device | str = "auto",
        n_envs: int = 1,
        optimize_memory_usage: bool = False,
        handle_timeout_termination: bool = True,
    ) -> None:
        if optimize_memory_usage:
            raise ValueError("MaskedReplayBuffer does not support optimize_memory_usage")
        super().__init__(
            buffer_size,
            observation_space,
            action_space,
            device,
            n_envs=n_envs,
            handle_timeout_termination=handle_timeout_termination,
        )
        self._init_masks(action_space)

    def add(self, *args: Any, **kwargs: Any) -> None:
        self._store_masks()
        super().add(*args, **kwargs)

    def _get_samples(  # type: ignore[override]
        self, batch_inds: np.ndarray, env: VecNormalize | None = None
    ) -> MaskedReplayBufferSamples:
        # as ReplayBuffer._get_samples, drawing the env indices here so the masks match
        env_inds = np.random.randint(0, high=self.n_envs, size=(len(batch_inds),))
        dones = self.dones[batch_inds, env_inds] * (1 - self.timeouts[batch_inds, env_inds])
        return MaskedReplayBufferSamples(
            observations=self.to_torch(
                self._normalize_obs(self.observations[batch_inds, env_inds, :], env)
            ),
            actions=self.to_torch(self.actions[batch_inds, env_inds, :]),
            next_observations=self.to_torch(
                self._normalize_obs(self.next_observations[batch_inds, env_inds, :], env)
            ),
            dones=self.to_torch(dones.reshape(-1, 1)),
            rewards=self.to_torch(
                self._normalize_reward(self.rewards[batch_inds, env_inds].reshape(-1, 1), env)
            ),
            next_action_masks=th.as_tensor(
                self.next_action_masks[batch_inds, env_inds], device=self.device
            ),
        )


class MaskedDictReplayBuffer(_NextMaskStore, DictReplayBuffer):
    """SB3's DictReplayBuffer plus the next state's action mask."""

    def __init__(
        self,
        buffer_size: int,
        observation_space: spaces.Dict,
        action_space: spaces.Space,
        device: th.device | str = "auto",
        n_envs: int = 1,
        optimize_memory_usage: bool = False,
        handle_timeout_termination: bool = True,
    ) -> None:
        super().__init__(
            buffer_size,
            observation_space,
            action_space,
            device,
            n_envs=n_envs,
            optimize_memory_usage=optimize_memory_usage,
            handle_timeout_termination=handle_timeout_termination,
        )
        self._init_masks(action_space)

    def add(self, *args: Any, **kwargs: Any) -> None:  # type: ignore[override]
        self._store_masks()
        super().add(*args, **kwargs)

    def _get_samples(  # type: ignore[override]
        self, batch_inds: np.ndarray, env: VecNormalize | None = None
    ) -> MaskedReplayBufferSamples:
        # as DictReplayBuffer._get_samples, drawing the env indices here so the masks match
        env_inds = np.random.randint(0, high=self.n_envs, size=(len(batch_inds),))

        def obs_at(store: dict[str, np.ndarray]) -> dict[str, th.Tensor]:
            raw = {k: v[batch_inds, env_inds, :] for k, v in store.items()}
            normed = self._normalize_obs(raw, env)
            assert isinstance(normed, dict)
            return {k: self.to_torch(v) for k, v in normed.items()}

        dones = self.dones[batch_inds, env_inds] * (1 - self.timeouts[batch_inds, env_inds])
        return MaskedReplayBufferSamples(
            observations=obs_at(self.observations),
            actions=self.to_torch(self.actions[batch_inds, env_inds]),
            next_observations=obs_at(self.next_observations),
            dones=self.to_torch(dones.reshape(-1, 1)),
            rewards=self.to_torch(
                self._normalize_reward(self.rewards[batch_inds, env_inds].reshape(-1, 1), env)
            ),
            next_action_masks=th.as_tensor(
                self.next_action_masks[batch_inds, env_inds], device=self.device
            ),
        )


# ----------------------------------------------------------------------------- algorithm
class MaskedDQN(DQN):
    """Dueling double DQN with action masks and a piecewise-linear epsilon schedule.

    Takes SB3 DQN's arguments (``exploration_fraction`` / ``exploration_initial_eps`` /
    ``exploration_final_eps`` are ignored: ``epsilon_points`` and ``epsilon_values`` define
    epsilon over training progress), plus ``"MlpPolicy"`` / ``"MultiInputPolicy"`` naming the
    dueling policies. Envs without ``action_masks()`` work too (every action valid).
    """

    policy_aliases: ClassVar[dict[str, type[BasePolicy]]] = {  # type: ignore[assignment]
        "MlpPolicy": DuelingDQNPolicy,
        "MultiInputPolicy": MultiInputDuelingDQNPolicy,
    }
    q_net: DuelingQNetwork  # type: ignore[assignment]
    q_net_target: DuelingQNetwork  # type: ignore[assignment]

    def __init__(
        self,
        policy: str | type[DQNPolicy],
        env: Any,
        *args: Any,
        epsilon_points: Sequence[float] = DEFAULT_EPSILON_POINTS,
        epsilon_values: Sequence[float] = DEFAULT_EPSILON_VALUES,
        _init_setup_model: bool = True,
        **kwargs: Any,
    ) -> None:
        self.epsilon_points = tuple(float(p) for p in epsilon_points)
        self.epsilon_values = tuple(float(v) for v in epsilon_values)
        EpsilonSchedule(self.epsilon_points, self.epsilon_values)  # fail early on a bad schedule
        super().__init__(policy, env, *args, _init_setup_model=False, **kwargs)
        if _init_setup_model:
            self._setup_model()
            self.exploration_rate = self.exploration_schedule(1.0)

    def _setup_model(self) -> None:
        if self.n_steps > 1:
            raise ValueError("MaskedDQN uses 1-step targets (n_steps=1)")
        if self.replay_buffer_class is None:
            dict_obs = isinstance(self.observation_space, spaces.Dict)
            self.replay_buffer_class = MaskedDictReplayBuffer if dict_obs else MaskedReplayBuffer
        super()._setup_model()
        # .load() restores these from JSON as lists
        self.epsilon_points = tuple(float(p) for p in self.epsilon_points)
        self.epsilon_values = tuple(float(v) for v in self.epsilon_values)
        self.exploration_schedule = EpsilonSchedule(self.epsilon_points, self.epsilon_values)
        self._mask_cache: tuple[Any, np.ndarray] | None = None
        self._env_masks: bool | None = None

    # -- masks --------------------------------------------------------------------------
    def _env_action_masks(self) -> np.ndarray:
        """Masks of the training VecEnv's current states, ``(n_envs, n_actions)``."""
        assert self.env is not None
        if self._env_masks is None:
            self._env_masks = is_masking_supported(self.env)
        n = int(self.action_space.n)  # type: ignore[attr-defined]
        if not self._env_masks:
            return np.ones((self.env.num_envs, n), dtype=bool)
        return _as_masks(get_action_masks(self.env), self.env.num_envs, n)

    def _current_masks(self) -> np.ndarray:
        # the masks read after the last step belong to self._last_obs; re-read otherwise
        if self._mask_cache is not None and self._mask_cache[0] is self._last_obs:
            return self._mask_cache[1]
        return self._env_action_masks()

    def _sample_action(
        self, learning_starts: int, action_noise: Any = None, n_envs: int = 1
    ) -> tuple[np.ndarray, np.ndarray]:
        masks = self._current_masks()
        if self.num_timesteps < learning_starts:
            action = random_valid_actions(masks)
        else:
            assert self._last_obs is not None
            action, _ = self.predict(self._last_obs, deterministic=False, action_masks=masks)
        action = np.asarray(action).reshape(n_envs)
        return action, action

    def _store_transition(
        self,
        replay_buffer: ReplayBuffer,
        buffer_action: np.ndarray,
        new_obs: Any,
        reward: np.ndarray,
        dones: np.ndarray,
        infos: list[dict[str, Any]],
    ) -> None:
        masks = self._env_action_masks()  # of new_obs: the reset state where an env is done
        next_masks = masks.copy()
        next_masks[np.asarray(dones, dtype=bool)] = True
        if isinstance(replay_buffer, _NextMaskStore):
            replay_buffer.set_next_action_masks(next_masks)
        super()._store_transition(replay_buffer, buffer_action, new_obs, reward, dones, infos)
        self._mask_cache = (self._last_obs, masks)

    # -- learning -----------------------------------------------------------------------
    def train(self, gradient_steps: int, batch_size: int = 100) -> None:
        self.policy.set_training_mode(True)
        self._update_learning_rate(self.policy.optimizer)
        losses = []
        for _ in range(gradient_steps):
            data = self.replay_buffer.sample(batch_size, env=self._vec_normalize_env)  # type: ignore[union-attr]
            discounts = data.discounts if data.discounts is not None else self.gamma
            next_masks = getattr(data, "next_action_masks", None)
            with th.no_grad():
                q_next_online = self.q_net(data.next_observations)
                q_next_target = self.q_net_target(data.next_observations)
                if next_masks is None:
                    next_masks = th.ones_like(q_next_online, dtype=th.bool)
                target = masked_double_dqn_target(
                    q_next_online, q_next_target, next_masks, data.rewards, data.dones, discounts
                )
            current = th.gather(self.q_net(data.observations), dim=1, index=data.actions.long())
            loss = F.smooth_l1_loss(current, target)
            losses.append(loss.item())
            self.policy.optimizer.zero_grad()
            loss.backward()
            th.nn.utils.clip_grad_norm_(self.policy.parameters(), self.max_grad_norm)
            self.policy.optimizer.step()
        self._n_updates += gradient_steps
        self.logger.record("train/n_updates", self._n_updates, exclude="tensorboard")
        self.logger.record("train/loss", float(np.mean(losses)))

    # -- acting -------------------------------------------------------------------------
    def q_values(self, observation: Any) -> np.ndarray:
        """Online Q-values, ``(B, n_actions)`` (a single observation gives ``B = 1``)."""
        self.policy.set_training_mode(False)
        obs_t, _ = self.policy.obs_to_tensor(observation)
        with th.no_grad():
            return self.q_net(obs_t).cpu().numpy()

    def predict(  # type: ignore[override]
        self,
        observation: np.ndarray | dict[str, np.ndarray],
        state: tuple[np.ndarray, ...] | None = None,
        episode_start: np.ndarray | None = None,
        deterministic: bool = False,
        action_masks: np.ndarray | None = None,
    ) -> tuple[np.ndarray, tuple[np.ndarray, ...] | None]:
        """Greedy over valid actions; unless ``deterministic``, each row explores with
        probability ``exploration_rate`` by drawing uniformly among its valid actions."""
        vectorized = self.policy.is_vectorized_observation(observation)
        q = self.q_values(observation)
        masks = _as_masks(action_masks, q.shape[0], q.shape[1])
        actions = masked_argmax(q, masks)
        if not deterministic and self.exploration_rate > 0:
            explore = np.random.random(q.shape[0]) < self.exploration_rate
            if explore.any():
                actions[explore] = random_valid_actions(masks[explore])
        if not vectorized:
            return actions[0], state
        return actions, state

    def learn(
        self: SelfMaskedDQN,
        total_timesteps: int,
        callback: MaybeCallback = None,
        log_interval: int = 4,
        tb_log_name: str = "MaskedDQN",
        reset_num_timesteps: bool = True,
        progress_bar: bool = False,
    ) -> SelfMaskedDQN:
        return super().learn(
            total_timesteps=total_timesteps,
            callback=callback,
            log_interval=log_interval,
            tb_log_name=tb_log_name,
            reset_num_timesteps=reset_num_timesteps,
            progress_bar=progress_bar,
        )

    def _excluded_save_params(self) -> list[str]:
        return [*super()._excluded_save_params(), "_mask_cache", "_env_masks"]
