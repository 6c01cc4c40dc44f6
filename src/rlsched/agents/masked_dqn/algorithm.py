"""The algorithm: :class:`MaskedDQN`, SB3's DQN with action masks (see the package docstring)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, TypeVar

import numpy as np
import torch as th
from gymnasium import spaces
from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported
from stable_baselines3 import DQN
from stable_baselines3.common.buffers import ReplayBuffer
from stable_baselines3.common.policies import BasePolicy
from stable_baselines3.common.type_aliases import MaybeCallback
from stable_baselines3.dqn.policies import DQNPolicy
from torch.nn import functional as F

#: VMAgent's breakpoints (fractions of training) and epsilon values.
from rlsched.agents.masked_dqn.buffers import (
    MaskedDictReplayBuffer,
    MaskedReplayBuffer,
    NextMaskStore,
)
from rlsched.agents.masked_dqn.policies import (
    DuelingDQNPolicy,
    DuelingQNetwork,
    MultiInputDuelingDQNPolicy,
    _as_masks,
    masked_argmax,
    masked_double_dqn_target,
    random_valid_actions,
)
from rlsched.agents.masked_dqn.schedule import (
    DEFAULT_EPSILON_POINTS,
    DEFAULT_EPSILON_VALUES,
    EpsilonSchedule,
)

SelfMaskedDQN = TypeVar("SelfMaskedDQN", bound="MaskedDQN")


# ----------------------------------------------------------------------------- schedule


class MaskedDQN(DQN):
    """Dueling double DQN with action masks and a piecewise-linear epsilon schedule.

    Takes SB3 DQN's arguments (``exploration_fraction`` / ``exploration_initial_eps`` /
    ``exploration_final_eps`` are ignored: ``epsilon_points`` and ``epsilon_values`` define
    epsilon over training progress), plus ``"MlpPolicy"`` / ``"MultiInputPolicy"`` naming the
    dueling policies. Envs without ``action_masks()`` work too (every action valid).
    """

    policy_aliases: ClassVar[dict[str, type[BasePolicy]]] = {
        "MlpPolicy": DuelingDQNPolicy,
        "MultiInputPolicy": MultiInputDuelingDQNPolicy,
    }
    q_net: DuelingQNetwork
    q_net_target: DuelingQNetwork

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
        super().__init__(policy, env, *args, **{**kwargs, "_init_setup_model": False})
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
        assert isinstance(self.action_space, spaces.Discrete)
        n = int(self.action_space.n)
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
        if isinstance(replay_buffer, NextMaskStore):
            replay_buffer.set_next_action_masks(next_masks)
        super()._store_transition(replay_buffer, buffer_action, new_obs, reward, dones, infos)
        self._mask_cache = (self._last_obs, masks)

    # -- learning -----------------------------------------------------------------------
    def train(self, gradient_steps: int, batch_size: int = 100) -> None:
        self.policy.set_training_mode(True)
        self._update_learning_rate(self.policy.optimizer)
        losses = []
        for _ in range(gradient_steps):
            assert self.replay_buffer is not None  # set up by _setup_model
            data = self.replay_buffer.sample(batch_size, env=self._vec_normalize_env)
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

    def predict(
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
            explore = np.less(np.random.random(q.shape[0]), self.exploration_rate)
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
