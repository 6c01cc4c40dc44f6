"""Replay buffers that also store the next state's action mask."""

from __future__ import annotations

from typing import Any, NamedTuple, cast

import numpy as np
import torch as th
from gymnasium import spaces
from stable_baselines3.common.buffers import DictReplayBuffer, ReplayBuffer
from stable_baselines3.common.vec_env import VecNormalize


class MaskedReplayBufferSamples(NamedTuple):
    observations: Any
    actions: th.Tensor
    next_observations: Any
    dones: th.Tensor
    rewards: th.Tensor
    next_action_masks: th.Tensor
    discounts: th.Tensor | None = None


class NextMaskStore:
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

    def add(self, *args: Any, **kwargs: Any) -> None:
        """The staged masks at this position, then the buffer's own ``add`` (which moves it)."""
        self._store_masks()
        super().add(*args, **kwargs)  # type: ignore[misc]

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_staged"] = None
        return state


class MaskedReplayBuffer(NextMaskStore, ReplayBuffer):
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

    def _get_samples(  # type: ignore[override]
        self, batch_inds: np.ndarray, env: VecNormalize | None = None
    ) -> MaskedReplayBufferSamples:
        # as ReplayBuffer._get_samples, drawing the env indices here so the masks match
        env_inds = np.random.randint(0, high=self.n_envs, size=(len(batch_inds),))
        dones = self.dones[batch_inds, env_inds] * (1 - self.timeouts[batch_inds, env_inds])
        return MaskedReplayBufferSamples(
            observations=self.to_torch(
                cast(
                    np.ndarray, self._normalize_obs(self.observations[batch_inds, env_inds, :], env)
                )
            ),
            actions=self.to_torch(self.actions[batch_inds, env_inds, :]),
            next_observations=self.to_torch(
                cast(
                    np.ndarray,
                    self._normalize_obs(self.next_observations[batch_inds, env_inds, :], env),
                )
            ),
            dones=self.to_torch(dones.reshape(-1, 1)),
            rewards=self.to_torch(
                self._normalize_reward(self.rewards[batch_inds, env_inds].reshape(-1, 1), env)
            ),
            next_action_masks=th.as_tensor(
                self.next_action_masks[batch_inds, env_inds], device=self.device
            ),
        )


class MaskedDictReplayBuffer(NextMaskStore, DictReplayBuffer):
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
