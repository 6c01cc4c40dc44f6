"""Masks over Q-values, and the dueling Q-networks and policies of
:class:`~rlsched.agents.masked_dqn.MaskedDQN`."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from typing import Any

import numpy as np
import torch as th
from gymnasium import spaces
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor, CombinedExtractor
from stable_baselines3.common.type_aliases import PyTorchObs
from stable_baselines3.dqn.policies import DQNPolicy, QNetwork
from torch import nn

#: VMAgent's breakpoints (fractions of training) and epsilon values.


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
    :class:`~rlsched.agents.networks.NodeSetExtractor`; the advantage of node ``i`` is one small
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
            self.trunk: nn.Module = nn.Identity()
            self.value_stream: nn.Module = nn.Sequential(
                _mlp(value_sizes, activation_fn), nn.Linear(value_sizes[-1], 1)
            )
            self.advantage_stream: nn.Module = nn.Sequential(  # one score per node, shared weights
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
