"""An SB3 ``MlpPolicy`` actor in numpy: decisions without torch's per-call overhead.

For a flat Box observation, SB3's default ``FlattenExtractor`` and a ``Tanh`` MLP (what
``policy_net: mlp`` trains, e.g. the LLM autoscaler), the greedy action is

    x = clip((s - mean) / sqrt(var + eps), -clip, clip)      (VecNormalize statistics, if any)
    h = tanh(... tanh(x @ W1 + b1) ...)
    a = clip(h @ Wa + ba, low, high)      (Box: the Gaussian's mean, as ``predict`` clips it)
        argmax over the valid actions     (Discrete: the logits)

:class:`MlpActor` computes it with float32 weights copied from the policy;
:class:`rlsched.policies.learned.LearnedPolicy` acts through it where the model has this
shape. This module imports no torch (the weights are read from the objects handed to
:meth:`MlpActor.from_policy`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rlsched.agents.node_numpy import float32_copy, masked_argmax


class MlpActor:
    """The greedy actor of a flat ``MlpPolicy`` (module docstring), in numpy."""

    __slots__ = ("_clip", "_high", "_inv_std", "_low", "_mean", "discrete", "layers")

    def __init__(
        self,
        layers: list[tuple[np.ndarray, np.ndarray]],
        discrete: bool,
        low: np.ndarray | None = None,
        high: np.ndarray | None = None,
        obs_mean: np.ndarray | None = None,
        obs_var: np.ndarray | None = None,
        obs_eps: float = 1e-8,
        obs_clip: float = 10.0,
    ) -> None:
        self.layers = [(np.asarray(w, np.float32), np.asarray(b, np.float32)) for w, b in layers]
        self.discrete = discrete
        self._low, self._high = low, high
        self._mean = None if obs_mean is None else np.asarray(obs_mean, np.float64)
        self._inv_std = None if obs_var is None else 1.0 / np.sqrt(np.asarray(obs_var) + obs_eps)
        self._clip = float(obs_clip)

    @classmethod
    def from_policy(cls, policy: Any, normalizer: Any = None) -> MlpActor | None:
        """The actor of an SB3 actor-critic policy, or None when it is not a flat Tanh MLP
        over a Box observation (a node-scoring or a Dict-observation model)."""
        from gymnasium import spaces

        if type(policy.features_extractor).__name__ != "FlattenExtractor":
            return None
        if not isinstance(policy.observation_space, spaces.Box):
            return None
        act_space = policy.action_space
        if not isinstance(act_space, spaces.Box | spaces.Discrete):
            return None
        if isinstance(act_space, spaces.Box) and getattr(policy, "squash_output", False):
            return None
        mods = list(policy.mlp_extractor.policy_net.children())
        layers: list[tuple[np.ndarray, np.ndarray]] = []
        for i, m in enumerate(mods):
            name = type(m).__name__
            if name == "Linear":
                if i + 1 >= len(mods) or type(mods[i + 1]).__name__ != "Tanh":
                    return None
                layers.append((float32_copy(m.weight).T, float32_copy(m.bias)))
            elif name != "Tanh":
                return None
        head = policy.action_net
        if type(head).__name__ != "Linear":
            return None
        layers.append((float32_copy(head.weight).T, float32_copy(head.bias)))
        kw: dict[str, Any] = {}
        if normalizer is not None and getattr(normalizer, "norm_obs", False):
            rms = normalizer.obs_rms
            if isinstance(rms, dict):
                return None
            kw = {"obs_mean": rms.mean, "obs_var": rms.var, "obs_eps": normalizer.epsilon,
                  "obs_clip": normalizer.clip_obs}  # fmt: skip
        if isinstance(act_space, spaces.Box):
            return cls(layers, False, act_space.low, act_space.high, **kw)
        return cls(layers, True, **kw)

    def output(self, observation: np.ndarray) -> np.ndarray:
        """The head's output for one observation: action means (Box) or logits (Discrete)."""
        x = np.asarray(observation, dtype=np.float64).reshape(-1)
        if self._mean is not None:
            assert self._inv_std is not None
            x = np.clip((x - self._mean) * self._inv_std, -self._clip, self._clip)
        h = x.astype(np.float32)
        for w, b in self.layers[:-1]:
            h = np.tanh(h @ w + b)
        w, b = self.layers[-1]
        return np.asarray(h @ w + b, dtype=np.float32)

    def act(self, observation: np.ndarray, mask: np.ndarray | None = None) -> Any:
        z = self.output(observation)
        if not self.discrete:
            return np.clip(z, self._low, self._high).astype(np.float32)
        return masked_argmax(z, mask)
