"""A trained model behind the :class:`~rlsched.policies.base.Policy` interface.

A model folder describes itself (as SB3 save files do): ``model.zip`` (the SB3 model),
``vecnormalize.pkl`` (observation normalisation statistics, if used) and ``meta.json`` (format,
algorithm, env id and arguments, library versions). ``learned:PATH`` accepts the model folder
or a training run folder holding ``model/``.
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import numpy as np

from rlsched.errors import PolicyError
from rlsched.policies.base import Observation, Policy

MODEL_FORMAT = "rlsched-model/1"

ALGOS = ("maskable_ppo", "ppo", "dqn", "masked_dqn")
#: Algorithms whose ``predict`` takes ``action_masks=`` and never returns a masked action.
MASKED_ALGOS = ("maskable_ppo", "masked_dqn")


def algo_class(algo: str) -> Any:
    if algo == "maskable_ppo":
        from sb3_contrib import MaskablePPO

        return MaskablePPO
    if algo == "ppo":
        from stable_baselines3 import PPO

        return PPO
    if algo == "dqn":
        from stable_baselines3 import DQN

        return DQN
    if algo == "masked_dqn":
        from rlsched.train.masked_dqn import MaskedDQN

        return MaskedDQN
    raise PolicyError(f"unknown algorithm {algo!r}; choose one of {', '.join(ALGOS)}")


def resolve_model_dir(path: str | Path) -> Path:
    """A model folder, a run folder (its ``model/``), or ``zoo/NAME`` (a shipped policy)."""
    from rlsched.zoo import resolve

    p = resolve(path)
    if (p / "meta.json").is_file():
        return p
    if (p / "model" / "meta.json").is_file():
        return p / "model"
    raise PolicyError(f"{p}: no trained model here (expected meta.json in it or in {p}/model)")


def read_meta(path: str | Path) -> dict[str, Any]:
    d = resolve_model_dir(path)
    meta = json.loads((d / "meta.json").read_text())
    if meta.get("format") != MODEL_FORMAT:
        raise PolicyError(f"{d}/meta.json: format {meta.get('format')!r}, expected {MODEL_FORMAT}")
    return meta


class LearnedPolicy(Policy):
    """Acts greedily with a trained SB3 model, always within the action mask.

    MaskablePPO and masked DQN apply the mask themselves (``predict(..., action_masks=)``);
    for PPO and DQN the mask is applied to the action logits / Q-values, so every policy in a
    comparison plays by the same rules. For a Box action space (PPO) the mask is ignored and
    the action is the distribution's mean, clipped to the space (``predict(deterministic=True)``).
    """

    category = "learned"

    def __init__(self, path: str | Path) -> None:
        from rlsched.runtime import set_torch_threads

        set_torch_threads()
        self.dir = resolve_model_dir(path)
        self.meta = read_meta(self.dir)
        self.algo = self.meta["algo"]
        self.model = algo_class(self.algo).load(self.dir / "model.zip", device="cpu")
        self.normalizer = None
        vn = self.dir / "vecnormalize.pkl"
        if vn.is_file():
            with vn.open("rb") as fh:
                self.normalizer = pickle.load(fh)
        self.name = f"learned:{path}"
        self.resized = False  # set by check_env: acting on another node count than trained

    @property
    def env_id(self) -> str:
        return str(self.meta["env_id"])

    @property
    def env_kwargs(self) -> dict[str, Any]:
        return dict(self.meta.get("env_kwargs", {}))

    def check_env(self, env: Any) -> None:
        """Refuse an env whose spaces differ from the ones the model was trained on, except
        the node count for a node-scoring network (it scores each node with shared weights,
        so it acts on any cluster size: :mod:`rlsched.train.networks`)."""
        model_space = self.model.observation_space
        self.resized = False
        if env.observation_space == model_space and env.action_space == self.model.action_space:
            return
        from gymnasium import spaces

        from rlsched.train.networks import is_node_policy, resized_space_error

        if not is_node_policy(self.model.policy):
            raise PolicyError(
                f"{self.dir}: this {self.algo} model is not a node-scoring network, so it acts "
                f"only on the spaces it was trained on: action space {self.model.action_space} "
                f"and its observation layout; this env has action space {env.action_space} "
                f"(train ppo or maskable_ppo with policy_net node to run on any cluster size)"
            )
        why = resized_space_error(model_space, env.observation_space)
        if why is None and not isinstance(env.action_space, spaces.Discrete):
            why = f"action space {env.action_space} is not Discrete"
        if why is None:
            first = self.model.policy.features_extractor.node_keys[0]
            n = int(env.observation_space.spaces[first].shape[0])
            if int(env.action_space.n) != n:
                why = f"{env.action_space.n} actions for {n} nodes (the head scores one per node)"
        if why is None and self.normalizer is not None:
            why = "its observation normalisation statistics are per node slot"
        if why is not None:
            raise PolicyError(f"{self.dir}: this node-scoring model cannot act here: {why}")
        self.resized = True

    def _normalize(self, observation: Observation) -> Any:
        if self.normalizer is None:
            return observation
        if isinstance(observation, dict):
            obs = {k: np.asarray(v)[None] for k, v in observation.items()}
            out = self.normalizer.normalize_obs(obs)
            return {k: v[0] for k, v in out.items()}
        return self.normalizer.normalize_obs(np.asarray(observation)[None])[0]

    def act(self, observation: Observation, mask: np.ndarray) -> int:
        import torch
        from gymnasium import spaces

        obs = self._normalize(observation)
        if isinstance(self.model.action_space, spaces.Box):  # continuous: no mask applies
            action, _ = self.model.predict(obs, deterministic=True)
            return np.asarray(action, dtype=np.float32)  # type: ignore[return-value]
        mask = np.asarray(mask, dtype=bool)
        if getattr(self, "resized", False):  # another node count: the network, not predict()
            from rlsched.train.networks import node_logits

            scores = node_logits(self.model.policy, observation)
            return int(np.argmax(np.where(mask, scores, -np.inf) if mask.any() else scores))
        if self.algo in MASKED_ALGOS:
            action, _ = self.model.predict(obs, action_masks=mask, deterministic=True)
            return int(action)
        obs_t, _ = self.model.policy.obs_to_tensor(obs)
        with torch.no_grad():
            if self.algo == "dqn":
                scores = self.model.policy.q_net(obs_t)[0].numpy()
            else:
                scores = self.model.policy.get_distribution(obs_t).distribution.logits[0].numpy()
        if mask.any():
            scores = np.where(mask, scores, -np.inf)
        return int(np.argmax(scores))

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "kind": "learned", "algo": self.algo, "path": str(self.dir)}
