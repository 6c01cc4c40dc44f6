"""A node-scoring policy network: one small MLP shared by every node (Decima-style).

A flat MLP over all nodes must learn the same rule once per node slot and cannot be reused on a
cluster of another size. Here every node is scored by the same network from its own features
and the pending item's, so what is learned about one node applies to all and the model runs on
any ``num_nodes``.

Convention: Dict observation keys starting with ``node_`` have the node axis first (``(N,)`` or
``(N, k)``); every other key describes the pending item or the cluster as a whole. Inputs are
squashed with ``symlog(x) = sign(x) * log(1 + |x|)``, so capacities, prices and seconds of any
scale enter without running statistics (no VecNormalize needed, nothing to drift).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
import torch
import torch.nn.functional as F
from gymnasium import spaces
from sb3_contrib.common.maskable.policies import MaskableMultiInputActorCriticPolicy
from stable_baselines3.common.policies import MultiInputActorCriticPolicy
from stable_baselines3.common.preprocessing import preprocess_obs
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor, MlpExtractor
from torch import nn


def symlog(x: torch.Tensor) -> torch.Tensor:
    return torch.sign(x) * torch.log1p(torch.abs(x))


def _width(space: gym.Space, per_node: bool) -> int:
    shape = space.shape or (1,)
    return int(np.prod(shape[1:])) if per_node else int(np.prod(shape))


def read_global_keys(
    observation_space: spaces.Dict, global_keys: Sequence[str] | None = None
) -> list[str]:
    """The non-``node_`` keys a node network reads: ``global_keys`` (None: all of them); a
    ValueError names any that is not one."""
    glob = sorted(k for k in observation_space.spaces if not k.startswith("node_"))
    if global_keys is None:
        return glob
    unknown = sorted(set(global_keys) - set(glob))
    if unknown:
        raise ValueError(f"{unknown} are not among the non-node observation keys {glob}")
    return sorted(global_keys)


class NodeSetExtractor(BaseFeaturesExtractor):
    """Embeds each node with a shared MLP; output ``[node_0 ... node_{N-1}, pooled, global]``.

    The first ``N * hidden`` features are the per-node embeddings :class:`NodeScoreHead` scores;
    the rest (mean and max over nodes, and the global embedding) feed the value network.
    ``global_keys`` names the other (non-``node_``) keys the network reads (None: all of them);
    the rest of the observation is ignored, so keys whose size is the node count can be left out
    and the model then acts at any node count. ``prior_key`` (a ``node_`` key of one value per
    node, such as a heuristic's own score) is passed on, symlog-scaled, after the embeddings:
    ``[node embeddings, prior_0 ... prior_{N-1}, pooled, global]``, for :class:`NodeScoreHead`
    to add to its scores (a residual policy over that heuristic).
    """

    def __init__(
        self,
        observation_space: spaces.Dict,
        hidden: int = 64,
        pooled_value: bool = False,
        global_keys: Sequence[str] | None = None,
        prior_key: str | None = None,
        prior_scale: float = -1.0,
    ) -> None:
        node_keys = sorted(k for k in observation_space.spaces if k.startswith("node_"))
        if not node_keys:
            raise ValueError("NodeSetExtractor needs observation keys starting with 'node_'")
        glob_keys = read_global_keys(observation_space, global_keys)
        first_shape = observation_space.spaces[node_keys[0]].shape
        assert first_shape is not None  # a Box: Dict spaces of Boxes only
        n_nodes = int(first_shape[0])
        d_node = sum(_width(observation_space.spaces[k], True) for k in node_keys)
        d_glob = sum(_width(observation_space.spaces[k], False) for k in glob_keys)
        col = prior_column(observation_space, prior_key)
        n_prior = n_nodes if prior_key is not None else 0
        super().__init__(observation_space, features_dim=n_nodes * hidden + n_prior + 3 * hidden)
        self.node_keys, self.glob_keys = node_keys, glob_keys
        self.n_nodes, self.hidden = n_nodes, hidden
        # the prior's column among the concatenated node features (None: no prior); its scale
        # is read by the policies below to build NodeScoreHead
        self.prior_key, self.prior_col = prior_key, col
        self.prior_scale = None if prior_key is None else float(prior_scale)
        # read by the policies below: the value MLP sees only the pooled and global embeddings
        self.pooled_value = bool(pooled_value)
        self.glob_net = nn.Sequential(nn.Linear(max(d_glob, 1), hidden), nn.ReLU())
        self.node_net = nn.Sequential(
            nn.Linear(d_node + hidden, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU()
        )

    def forward(self, obs: dict[str, torch.Tensor]) -> torch.Tensor:
        b = next(iter(obs.values())).shape[0]
        # the node count comes from the input, so a model trained at one size acts at any
        n = obs[self.node_keys[0]].shape[1]
        # one concatenation and one symlog per group: small tensors make op count the cost
        nodes = symlog(torch.cat([obs[k].reshape(b, n, -1) for k in self.node_keys], dim=2))
        if self.glob_keys:
            g = symlog(torch.cat([obs[k].reshape(b, -1) for k in self.glob_keys], dim=1))
        else:
            g = torch.zeros(b, 1, device=nodes.device)
        g = self.glob_net(g)
        # node_net's first layer reads [node features, g]; its g part is the same for every
        # node, so it is computed once per sample, not once per node (the same function and
        # weights, a third of the first layer's work; most of a PPO update is this network)
        first, d = self.node_net[0], nodes.shape[2]
        assert isinstance(first, nn.Linear)
        h = F.linear(nodes, first.weight[:, :d])
        h = torch.relu(h + F.linear(g, first.weight[:, d:], first.bias).unsqueeze(1))
        h = self.node_net[3](self.node_net[2](h))
        pooled = torch.cat([h.mean(dim=1), h.amax(dim=1), g], dim=1)
        if self.prior_col is None:
            return torch.cat([h.reshape(b, -1), pooled], dim=1)
        return torch.cat([h.reshape(b, -1), nodes[:, :, self.prior_col], pooled], dim=1)


def prior_column(observation_space: spaces.Dict, key: str | None) -> int | None:
    """The column of ``key`` among the node features the node network concatenates (None when
    ``key`` is None); a ValueError when it is not a ``node_`` key of one value per node."""
    if key is None:
        return None
    node_keys = sorted(k for k in observation_space.spaces if k.startswith("node_"))
    widths = [_width(observation_space.spaces[k], True) for k in node_keys]
    if key not in node_keys:
        raise ValueError(f"prior key {key!r} is not among the node observation keys {node_keys}")
    i = list(node_keys).index(key)
    if widths[i] != 1:
        raise ValueError(f"prior key {key!r} has {widths[i]} values per node; it needs one")
    return int(sum(widths[:i]))


class NodeScoreHead(nn.Module):
    """Action logits: the same linear score for every node's embedding.

    With ``prior_scale`` (the extractor passes a prior, ``prior_key``) the logit of node i is
    ``prior_coef * prior_i + score(h_i)``: a residual policy. ``prior_coef`` is learned and starts
    at ``prior_scale``, and ``score`` starts at zero, so the untrained policy's greedy choice is
    the prior's argmax exactly (a heuristic whose key is the prior) and training learns only where
    to depart from it.
    """

    def __init__(self, n_nodes: int, hidden: int, prior_scale: float | None = None) -> None:
        super().__init__()
        self.n_nodes, self.hidden = n_nodes, hidden
        self.score = nn.Linear(hidden, 1)
        self.prior_coef: nn.Parameter | None = None
        if prior_scale is None:
            # near-uniform initial policy, as SB3 initialises its action head (gain 0.01)
            nn.init.orthogonal_(self.score.weight, gain=0.01)
        else:
            nn.init.zeros_(self.score.weight)
            self.prior_coef = nn.Parameter(torch.tensor(float(prior_scale)))
        nn.init.zeros_(self.score.bias)

    def forward(self, latent: torch.Tensor) -> torch.Tensor:
        # latent = N node embeddings, [N priors,] then 3 pooled/global ones (NodeSetExtractor):
        # N from the width
        per_node = self.hidden + (self.prior_coef is not None)
        n = (latent.shape[1] - 3 * self.hidden) // per_node
        h = latent[:, : n * self.hidden].reshape(-1, n, self.hidden)
        logits = self.score(h).squeeze(-1)
        if self.prior_coef is None:
            return logits
        return logits + self.prior_coef * latent[:, n * self.hidden : n * per_node]


class PooledValueMlp(MlpExtractor):
    """The policies' MLP extractor with ``pooled_value``: the actor gets every feature (the
    node embeddings :class:`NodeScoreHead` scores; ``pi`` has no layers), the value MLP only
    the last ``3 * hidden`` (mean and max over nodes, global). Its input no longer grows with
    the node count: at 10 nodes of 64 features it is 192 wide instead of 832, most of the cost
    of a PPO update (``docs/benchmarks.md``), and the critic too runs on any cluster size."""

    def __init__(
        self, features_dim: int, pooled_dim: int, net_arch: Any, activation_fn: Any, device: Any
    ) -> None:
        super().__init__(pooled_dim, net_arch, activation_fn, device)
        if len(self.policy_net) != 0:
            raise ValueError("pooled_value needs an actor without hidden layers (pi: [])")
        self.latent_dim_pi = features_dim  # the actor is the identity over all features
        self.pooled_dim = pooled_dim

    def forward(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return features, self.forward_critic(features)

    def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
        return features

    def forward_critic(self, features: torch.Tensor) -> torch.Tensor:
        return self.value_net(features[:, -self.pooled_dim :])


def _build_node_mlp_extractor(policy: Any) -> bool:
    """Install :class:`PooledValueMlp` when the extractor asks for it; False: it does not."""
    ext = policy.features_extractor
    if not getattr(ext, "pooled_value", False):
        return False
    policy.mlp_extractor = PooledValueMlp(
        policy.features_dim, 3 * ext.hidden, policy.net_arch, policy.activation_fn, policy.device
    )
    return True


def _swap_action_head(policy: Any, lr_schedule: Any) -> None:
    ext = policy.features_extractor
    if policy.action_space.n != ext.n_nodes:
        raise ValueError(
            f"node policy needs one action per node: {policy.action_space.n} actions, "
            f"{ext.n_nodes} nodes"
        )
    policy.action_net = NodeScoreHead(ext.n_nodes, ext.hidden, getattr(ext, "prior_scale", None))
    # the optimizer was built over the old head: rebuild it over the current parameters
    policy.optimizer = policy.optimizer_class(
        policy.parameters(), lr=lr_schedule(1), **policy.optimizer_kwargs
    )


def node_policy_kwargs(
    hidden: int = 64,
    value_arch: list[int] | None = None,
    pooled_value: bool = False,
    global_keys: Sequence[str] | None = None,
    prior_key: str | None = None,
    prior_scale: float = -1.0,
) -> dict[str, Any]:
    """``policy_kwargs`` for the node-scoring policies below (``pooled_value``: see
    :class:`PooledValueMlp`; ``global_keys``, ``prior_key``: see :class:`NodeSetExtractor` and
    :class:`NodeScoreHead`; saved with the model, so it loads as it was trained)."""
    ext_kwargs: dict[str, Any] = {"hidden": hidden}
    if pooled_value:  # absent otherwise: models saved before the option load unchanged
        ext_kwargs["pooled_value"] = True
    if global_keys is not None:
        ext_kwargs["global_keys"] = list(global_keys)
    if prior_key is not None:
        ext_kwargs.update(prior_key=prior_key, prior_scale=float(prior_scale))
    return {
        "features_extractor_class": NodeSetExtractor,
        "features_extractor_kwargs": ext_kwargs,
        "net_arch": {"pi": [], "vf": list(value_arch or [64, 64])},
        "share_features_extractor": True,
    }


class _NodeScoring:
    """The node-scoring build steps, shared by the PPO and MaskablePPO policies below."""

    def _build_mlp_extractor(self) -> None:
        if not _build_node_mlp_extractor(self):
            super()._build_mlp_extractor()  # type: ignore[misc]

    def _build(self, lr_schedule: Any) -> None:
        super()._build(lr_schedule)  # type: ignore[misc]
        _swap_action_head(self, lr_schedule)


class MaskableNodePolicy(_NodeScoring, MaskableMultiInputActorCriticPolicy):
    """MaskablePPO actor-critic whose action head scores each node with shared weights."""


class NodePolicy(_NodeScoring, MultiInputActorCriticPolicy):
    """PPO actor-critic whose action head scores each node with shared weights."""


def is_node_policy(policy: Any) -> bool:
    """An actor-critic whose actions are scored per node by shared weights (any node count)."""
    return isinstance(getattr(policy, "features_extractor", None), NodeSetExtractor) and (
        isinstance(getattr(policy, "action_net", None), NodeScoreHead)
    )


def resized_space_error(
    model_space: spaces.Dict, env_space: gym.Space, read: Sequence[str] | None = None
) -> str | None:
    """Why a node policy trained on ``model_space`` cannot act on ``env_space`` (None: it can):
    the env must hold every key the model was trained with (more are left unread: an env
    argument that only adds an observation, such as ``finish_gap``, does not shut a model
    out), ``node_*`` arrays may differ only in their first (node) axis, and every other entry
    the network reads (``read``: those keys; None: every key) must have the shape it had in
    training."""
    if not isinstance(env_space, spaces.Dict):
        return "the observation is not a Dict"
    missing = sorted(set(model_space.spaces) - set(env_space.spaces))
    if missing:
        return f"the observation lacks {missing}, which the model was trained with"
    for k, m in model_space.spaces.items():
        if read is not None and k not in read:
            continue
        a, b = m.shape or (), env_space.spaces[k].shape or ()
        same = a[1:] == b[1:] if k.startswith("node_") else a == b
        if not same or len(a) != len(b):
            return f"observation {k!r} has shape {b}, the model was trained with {a}"
    return None


def node_logits(policy: Any, observation: Mapping[str, np.ndarray]) -> np.ndarray:
    """The node policy's action logits for one observation of any node count (SB3's
    ``predict`` checks shapes against the training space; the network itself does not)."""
    # the keys the model was trained with (an env may add observations it does not read)
    keys = policy.observation_space.spaces
    obs = {k: torch.as_tensor(np.asarray(observation[k]))[None] for k in keys}
    with torch.no_grad():
        x = preprocess_obs(obs, policy.observation_space, policy.normalize_images)
        latent = policy.mlp_extractor.forward_actor(policy.pi_features_extractor(x))
        return policy.action_net(latent)[0].numpy()
