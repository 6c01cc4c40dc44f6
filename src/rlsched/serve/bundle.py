"""A servable actor-critic policy: MLP weights in numpy, no torch on the request path.

Layout (the same as Stable-Baselines3's ``MlpPolicy`` with ``Tanh`` activations)::

    x      = clip((s - obs_mean) / sqrt(obs_var + obs_eps), -clip, clip)   (if normalised)
    actor  : x -> [Linear -> tanh] * len(hidden)        -> Linear -> action_dim logits
    critic : x -> [Linear -> tanh] * len(critic_hidden) -> Linear -> 1 value

Weights are kept as float32 ``W`` of shape ``(in, out)`` (so a layer is ``x @ W + b``) and
stored as ``weights.npz`` beside ``bundle.json`` (format ``rlsched-bundle/1``). Torch is only
imported by :meth:`PolicyBundle.to_torch`, :meth:`PolicyBundle.from_torch` and
:meth:`PolicyBundle.from_sb3` (the learner and the converter), never by ``logits``/``act``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from rlsched.errors import PolicyError
from rlsched.runtime import versions

BUNDLE_FORMAT = "rlsched-bundle/1"

Layers = list[tuple[np.ndarray, np.ndarray]]


def _orthogonal(rows: int, cols: int, gain: float, rng: np.random.Generator) -> np.ndarray:
    """``torch.nn.init.orthogonal_`` for a ``(rows, cols)`` = ``(out, in)`` weight, in numpy."""
    flat = rng.standard_normal((rows, cols))
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q *= np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    return gain * q


def _f32(a: Any) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(a, dtype=np.float32))


class PolicyBundle:
    """Actor-critic MLP weights with optional input normalisation; see the module docstring."""

    __slots__ = (
        "_clip",
        "_inv_std",
        "_mean",
        "action_dim",
        "actor_layers",
        "critic_hidden",
        "critic_layers",
        "hidden",
        "meta",
        "obs_clip",
        "obs_eps",
        "obs_mean",
        "obs_var",
        "state_dim",
    )

    def __init__(
        self,
        actor_layers: Layers,
        critic_layers: Layers,
        *,
        obs_mean: np.ndarray | None = None,
        obs_var: np.ndarray | None = None,
        obs_clip: float = 10.0,
        obs_eps: float = 1e-8,
        meta: dict[str, Any] | None = None,
    ) -> None:
        if not actor_layers or not critic_layers:
            raise ValueError("a bundle needs at least the output layer of actor and critic")
        self.actor_layers: Layers = [(_f32(w), _f32(b)) for w, b in actor_layers]
        self.critic_layers: Layers = [(_f32(w), _f32(b)) for w, b in critic_layers]
        self.state_dim = int(self.actor_layers[0][0].shape[0])
        self.action_dim = int(self.actor_layers[-1][0].shape[1])
        self.hidden: tuple[int, ...] = tuple(int(w.shape[1]) for w, _ in self.actor_layers[:-1])
        self.critic_hidden: tuple[int, ...] = tuple(
            int(w.shape[1]) for w, _ in self.critic_layers[:-1]
        )
        for name, layers in (("actor", self.actor_layers), ("critic", self.critic_layers)):
            width = self.state_dim
            for i, (w, b) in enumerate(layers):
                if w.ndim != 2 or w.shape[0] != width or b.shape != (w.shape[1],):
                    raise ValueError(
                        f"{name} layer {i}: weight {w.shape} / bias {b.shape} do not follow "
                        f"an input of width {width}"
                    )
                width = w.shape[1]
        if self.critic_layers[-1][0].shape[1] != 1:
            raise ValueError("the critic must end in one output")
        if (obs_mean is None) != (obs_var is None):
            raise ValueError("give both obs_mean and obs_var, or neither")
        self.obs_mean = None if obs_mean is None else _f32(obs_mean).reshape(-1)
        self.obs_var = None if obs_var is None else _f32(obs_var).reshape(-1)
        for name, arr in (("obs_mean", self.obs_mean), ("obs_var", self.obs_var)):
            if arr is not None and arr.shape != (self.state_dim,):
                raise ValueError(f"{name} has shape {arr.shape}, expected ({self.state_dim},)")
        self.obs_clip = float(obs_clip)
        self.obs_eps = float(obs_eps)
        self.meta: dict[str, Any] = dict(meta or {})
        # precomputed for the request path
        self._mean = self.obs_mean
        self._inv_std = (
            None
            if self.obs_var is None
            else (1.0 / np.sqrt(self.obs_var.astype(np.float64) + self.obs_eps)).astype(np.float32)
        )
        self._clip = np.float32(self.obs_clip)

    # ------------------------------------------------------------------ inference (numpy)
    @property
    def normalized(self) -> bool:
        return self._mean is not None

    def _input(self, states: Any) -> np.ndarray:
        x = np.asarray(states, dtype=np.float32)
        if x.shape[-1:] != (self.state_dim,) or x.ndim > 2:
            raise ValueError(f"states of shape {x.shape}; expected ({self.state_dim},) or (B, S)")
        if self._mean is not None:
            x = (x - self._mean) * self._inv_std
            np.clip(x, -self._clip, self._clip, out=x)
        return x

    @staticmethod
    def _mlp(x: np.ndarray, layers: Layers) -> np.ndarray:
        for w, b in layers[:-1]:
            x = x @ w
            x += b
            np.tanh(x, out=x)
        w, b = layers[-1]
        x = x @ w
        x += b
        return x

    def logits(self, states: np.ndarray) -> np.ndarray:
        """Action logits: ``(S,) -> (A,)``, ``(B, S) -> (B, A)``, float32."""
        return self._mlp(self._input(states), self.actor_layers)

    def value(self, states: np.ndarray) -> np.ndarray:
        """State values: ``(S,) -> 0-d``, ``(B, S) -> (B,)``."""
        return self._mlp(self._input(states), self.critic_layers)[..., 0]

    def probs(self, states: np.ndarray, masks: np.ndarray | None = None) -> np.ndarray:
        """Softmax over the (masked) logits."""
        z = self._masked(self.logits(states), masks)
        z = z - z.max(axis=-1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=-1, keepdims=True)

    def _masked(self, z: np.ndarray, masks: np.ndarray | None) -> np.ndarray:
        if masks is None:
            return z
        m = np.asarray(masks, dtype=bool)
        if m.shape[-1:] != (self.action_dim,):
            raise ValueError(f"masks of shape {m.shape}; expected (..., {self.action_dim})")
        if not m.any(axis=-1).all():
            raise ValueError("a mask allows no action")
        return np.where(m, z, -np.inf).astype(np.float32, copy=False)

    def act(self, states: np.ndarray, masks: np.ndarray | None = None) -> np.ndarray:
        """Greedy action, never a masked one: ``(B, S) -> int64 (B,)``, ``(S,) -> 0-d int64``.

        A mask row that allows no action raises ``ValueError``.
        """
        z = self._masked(self.logits(states), masks)
        return np.asarray(np.argmax(z, axis=-1), dtype=np.int64)

    # ------------------------------------------------------------------ construction
    @classmethod
    def fresh(
        cls,
        state_dim: int,
        action_dim: int,
        hidden: Sequence[int] = (64, 64),
        seed: int = 0,
        meta: dict[str, Any] | None = None,
    ) -> PolicyBundle:
        """A new policy, initialised as SB3 does: orthogonal weights (gain sqrt(2) for hidden
        layers, 0.01 for the policy head, 1 for the value head), zero biases."""
        if state_dim < 1 or action_dim < 1:
            raise ValueError("state_dim and action_dim must be positive")
        rng = np.random.default_rng(seed)

        def net(out_dim: int, head_gain: float) -> Layers:
            layers, width = [], state_dim
            for h in hidden:
                layers.append((_orthogonal(h, width, math.sqrt(2), rng).T, np.zeros(h)))
                width = h
            layers.append((_orthogonal(out_dim, width, head_gain, rng).T, np.zeros(out_dim)))
            return layers

        actor = net(action_dim, 0.01)
        critic = net(1, 1.0)
        m = {"source": "fresh", "seed": seed, **(meta or {})}
        return cls(actor, critic, meta=m)

    def with_weights(
        self, actor_layers: Layers, critic_layers: Layers, **meta: Any
    ) -> PolicyBundle:
        """The same normalisation and metadata (updated with ``meta``), new weights."""
        return PolicyBundle(
            actor_layers,
            critic_layers,
            obs_mean=self.obs_mean,
            obs_var=self.obs_var,
            obs_clip=self.obs_clip,
            obs_eps=self.obs_eps,
            meta={**self.meta, **meta},
        )

    @classmethod
    def from_sb3(cls, model_dir: str | Path) -> PolicyBundle:
        """Convert an ``rlsched train`` model folder (PPO / MaskablePPO, ``MlpPolicy``, a flat
        Box observation, Tanh activations) into a bundle; VecNormalize statistics are folded
        in as ``obs_mean`` / ``obs_var`` / ``obs_clip``."""
        # torch and SB3 only here: serving a bundle runs on numpy alone
        import torch
        from gymnasium import spaces
        from stable_baselines3.common.torch_layers import FlattenExtractor

        from rlsched.agents.models import load_model, load_normalizer, read_meta, resolve_model_dir

        d = resolve_model_dir(model_dir)
        meta = read_meta(d)
        algo = meta.get("algo")
        if algo not in ("ppo", "maskable_ppo"):
            raise PolicyError(
                f"{d}: algorithm {algo!r} is not an actor-critic; only ppo and maskable_ppo "
                "models can be served as a PolicyBundle"
            )
        model = load_model(algo, d / "model.zip")
        policy = model.policy
        obs_space, act_space = model.observation_space, model.action_space
        if not isinstance(obs_space, spaces.Box) or len(obs_space.shape) != 1:
            raise PolicyError(
                f"{d}: observation space {obs_space} is not a flat Box; a bundle needs the "
                "flat Box(2N+2) observation (train with policy_net='mlp' on such an env)"
            )
        if not isinstance(act_space, spaces.Discrete):
            raise PolicyError(f"{d}: action space {act_space} is not Discrete")
        extractors = [policy.features_extractor]
        if not getattr(policy, "share_features_extractor", True):
            extractors += [policy.pi_features_extractor, policy.vf_features_extractor]
        for fe in extractors:
            if type(fe) is not FlattenExtractor:
                raise PolicyError(
                    f"{d}: features extractor {type(fe).__name__} is not supported (only the "
                    "MlpPolicy FlattenExtractor); was it trained with policy_net='node'?"
                )
        ext = getattr(policy, "mlp_extractor", None)
        if ext is None or not hasattr(ext, "policy_net") or not hasattr(ext, "value_net"):
            raise PolicyError(f"{d}: policy {type(policy).__name__} has no MlpExtractor")

        def layers_of(seq: torch.nn.Module, head: torch.nn.Module, what: str) -> Layers:
            out: Layers = []
            mods = list(seq.children())
            for i, m in enumerate(mods):
                if isinstance(m, torch.nn.Linear):
                    nxt = mods[i + 1] if i + 1 < len(mods) else None
                    if not isinstance(nxt, torch.nn.Tanh):
                        got = "nothing" if nxt is None else type(nxt).__name__
                        raise PolicyError(
                            f"{d}: {what} layer {len(out)} is followed by {got}, not Tanh; "
                            "a bundle only serves Tanh MLPs (the SB3 default activation_fn)"
                        )
                    out.append(_linear_np(m))
                elif not isinstance(m, torch.nn.Tanh):
                    raise PolicyError(f"{d}: unsupported {what} module {type(m).__name__}")
            if not isinstance(head, torch.nn.Linear):
                raise PolicyError(f"{d}: {what} head {type(head).__name__} is not Linear")
            out.append(_linear_np(head))
            return out

        actor = layers_of(ext.policy_net, policy.action_net, "policy")
        critic = layers_of(ext.value_net, policy.value_net, "value")

        obs_mean = obs_var = None
        clip, eps = 10.0, 1e-8
        vn = d / "vecnormalize.pkl"
        if vn.is_file():
            norm = load_normalizer(vn)
            if getattr(norm, "norm_obs", False):
                rms = norm.obs_rms
                if isinstance(rms, dict):
                    raise PolicyError(f"{d}: Dict observation statistics are not supported")
                obs_mean, obs_var = rms.mean, rms.var
                clip, eps = float(norm.clip_obs), float(norm.epsilon)
        bmeta = {
            "source": "sb3",
            "source_path": str(Path(d).resolve()),
            "algo": algo,
            "env_id": meta.get("env_id"),
            "env_kwargs": meta.get("env_kwargs", {}),
            "dataset": meta.get("dataset"),
            "model_meta": meta,
        }
        return cls(
            actor, critic, obs_mean=obs_mean, obs_var=obs_var, obs_clip=clip, obs_eps=eps,
            meta=bmeta,
        )  # fmt: skip

    # ------------------------------------------------------------------ persistence
    def arrays(self) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        for prefix, layers in (("actor", self.actor_layers), ("critic", self.critic_layers)):
            for i, (w, b) in enumerate(layers):
                out[f"{prefix}.{i}.W"] = w
                out[f"{prefix}.{i}.b"] = b
        if self.obs_mean is not None and self.obs_var is not None:
            out["obs_mean"] = self.obs_mean
            out["obs_var"] = self.obs_var
        return out

    def describe(self) -> dict[str, Any]:
        return {
            "format": BUNDLE_FORMAT,
            "state_dim": self.state_dim,
            "action_dim": self.action_dim,
            "hidden": list(self.hidden),
            "critic_hidden": list(self.critic_hidden),
            "activation": "tanh",
            "layer": "x @ W + b, W of shape (in, out)",
            "normalize": (
                {"clip": self.obs_clip, "eps": self.obs_eps} if self.obs_mean is not None else None
            ),
            "meta": self.meta,
        }

    def save(self, directory: str | Path) -> None:
        """Write ``weights.npz`` and ``bundle.json`` into ``directory`` (created if needed)."""
        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        with (d / "weights.npz").open("wb") as fh:
            arrays: dict[str, Any] = self.arrays()
            np.savez(fh, **arrays)
        info = {**self.describe(), "versions": versions()}
        (d / "bundle.json").write_text(json.dumps(info, indent=2, default=_json_default))

    @classmethod
    def load(cls, directory: str | Path) -> PolicyBundle:
        d = Path(directory)
        try:
            info = json.loads((d / "bundle.json").read_text())
        except FileNotFoundError:
            raise FileNotFoundError(f"{d}: no bundle.json (not a policy bundle)") from None
        if info.get("format") != BUNDLE_FORMAT:
            raise ValueError(f"{d}/bundle.json: format {info.get('format')!r}, not {BUNDLE_FORMAT}")
        with np.load(d / "weights.npz") as z:
            arrs = {k: z[k] for k in z.files}

        def layers(prefix: str, n: int) -> Layers:
            return [(arrs[f"{prefix}.{i}.W"], arrs[f"{prefix}.{i}.b"]) for i in range(n + 1)]

        norm = info.get("normalize")
        b = cls(
            layers("actor", len(info["hidden"])),
            layers("critic", len(info.get("critic_hidden", info["hidden"]))),
            obs_mean=arrs.get("obs_mean") if norm else None,
            obs_var=arrs.get("obs_var") if norm else None,
            obs_clip=norm["clip"] if norm else 10.0,
            obs_eps=norm["eps"] if norm else 1e-8,
            meta=info.get("meta", {}),
        )
        if (b.state_dim, b.action_dim) != (info["state_dim"], info["action_dim"]):
            raise ValueError(f"{d}: weights do not match the dimensions in bundle.json")
        return b

    # ------------------------------------------------------------------ torch bridge
    def to_torch(self) -> Any:
        """An ``ActorCritic`` torch module with the same weights and numerics:
        ``.actor(x) -> logits``, ``.critic(x) -> value (B,)``, normalisation inside."""
        cls = _actor_critic_class()
        return cls(self)

    @classmethod
    def from_torch(cls, module: Any, like: PolicyBundle, **meta: Any) -> PolicyBundle:
        """Weights from a module made by :meth:`to_torch`; normalisation and metadata from
        ``like`` (updated with ``meta``)."""
        import torch

        def collect(seq: torch.nn.Sequential) -> Layers:
            return [_linear_np(m) for m in seq if isinstance(m, torch.nn.Linear)]

        return like.with_weights(collect(module.pi), collect(module.vf), **meta)

    def __repr__(self) -> str:
        return (
            f"PolicyBundle(state_dim={self.state_dim}, action_dim={self.action_dim}, "
            f"hidden={self.hidden}, normalized={self.normalized})"
        )


def _linear_np(m: Any) -> tuple[np.ndarray, np.ndarray]:
    w = m.weight.detach().cpu().numpy().T
    b = m.bias.detach().cpu().numpy() if m.bias is not None else np.zeros(w.shape[1])
    return _f32(w), _f32(b)


def _json_default(o: Any) -> Any:
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, Path):
        return str(o)
    return repr(o)


@cache
def _actor_critic_class() -> type:
    import torch
    from torch import nn

    def seq(layers: Layers) -> nn.Sequential:
        mods: list[nn.Module] = []
        for i, (w, b) in enumerate(layers):
            lin = nn.Linear(w.shape[0], w.shape[1])
            with torch.no_grad():
                lin.weight.copy_(torch.from_numpy(np.ascontiguousarray(w.T)))
                lin.bias.copy_(torch.from_numpy(b))
            mods.append(lin)
            if i < len(layers) - 1:
                mods.append(nn.Tanh())
        return nn.Sequential(*mods)

    class ActorCritic(nn.Module):
        """Torch twin of a :class:`PolicyBundle` (for the learner)."""

        obs_mean: torch.Tensor  # buffers, registered when the bundle normalises
        obs_inv_std: torch.Tensor

        def __init__(self, bundle: PolicyBundle) -> None:
            super().__init__()
            self.state_dim = bundle.state_dim
            self.action_dim = bundle.action_dim
            self.pi = seq(bundle.actor_layers)
            self.vf = seq(bundle.critic_layers)
            self.normalized = bundle.normalized
            if bundle.normalized:
                assert bundle._mean is not None and bundle._inv_std is not None
                self.register_buffer("obs_mean", torch.from_numpy(bundle._mean.copy()))
                self.register_buffer("obs_inv_std", torch.from_numpy(bundle._inv_std.copy()))
            self.obs_clip = float(bundle._clip)

        def normalize(self, x: torch.Tensor) -> torch.Tensor:
            x = x.to(torch.float32)
            if not self.normalized:
                return x
            return torch.clamp(
                (x - self.obs_mean) * self.obs_inv_std, -self.obs_clip, self.obs_clip
            )

        def actor(self, x: torch.Tensor) -> torch.Tensor:
            return self.pi(self.normalize(x))

        def critic(self, x: torch.Tensor) -> torch.Tensor:
            return self.vf(self.normalize(x)).squeeze(-1)

        def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            z = self.normalize(x)
            return self.pi(z), self.vf(z).squeeze(-1)

    return ActorCritic
