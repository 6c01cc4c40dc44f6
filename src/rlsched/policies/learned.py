"""A trained model behind the :class:`~rlsched.policies.base.Policy` interface.

A model folder describes itself (as SB3 save files do): ``model.zip`` (the SB3 model),
``vecnormalize.pkl`` (observation normalisation statistics, if used) and ``meta.json`` (format,
algorithm, env id and arguments, library versions). ``learned:PATH`` accepts the model folder
or a training run folder holding ``model/``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from stable_baselines3.common.vec_env import VecNormalize

from rlsched.agents.mlp_numpy import MlpActor
from rlsched.agents.models import (
    ALGOS,
    MASKED_ALGOS,
    MODEL_FORMAT,
    algo_class,
    load_model,
    load_normalizer,
    read_meta,
    resolve_model_dir,
)
from rlsched.agents.networks import is_node_policy, node_logits, resized_space_error
from rlsched.agents.node_numpy import NodeScorer
from rlsched.errors import PolicyError
from rlsched.policies.base import Action, Observation, SavedModelPolicy
from rlsched.policies.offloading import anchored_and_heft, heft_choice, peft_choice
from rlsched.policies.pods import GreedyMigrationPolicy, anchored_and_greedy
from rlsched.runtime import set_torch_threads

#: env id -> (the heuristic whose first choices a model trained with the env argument
#: ``candidates`` keeps; the valid actions it keeps, computed from an observation as that env
#: narrows its mask, and the heuristic's own action from the same ranking)
ANCHORS: dict[str, tuple[str, Callable[[Observation, np.ndarray, int], tuple[np.ndarray, int]]]]
ANCHORS = {
    "rlsched/PodRebalancing-v0": ("greedy_migration", anchored_and_greedy),
    "rlsched/WorkflowOffloading-v0": ("heft", anchored_and_heft),
}

#: env id -> heuristic -> its choice from an observation and the mask alone (no env state, so
#: at serving speed): the heuristics a margin-gated policy can defer to (``anchor``)
OBSERVED_HEURISTICS: dict[str, dict[str, Callable[[Observation, np.ndarray], int]]] = {
    "rlsched/PodRebalancing-v0": {"greedy_migration": GreedyMigrationPolicy().act},
    "rlsched/WorkflowOffloading-v0": {"heft": heft_choice, "peft": peft_choice},
}

# the model folder's names, defined in rlsched.agents.models, are also read from here
__all__ = [
    "ALGOS",
    "MASKED_ALGOS",
    "MODEL_FORMAT",
    "OBSERVED_HEURISTICS",
    "LearnedPolicy",
    "algo_class",
    "read_meta",
    "resolve_model_dir",
]


class LearnedPolicy(SavedModelPolicy):
    """Acts greedily with a trained SB3 model, always within the action mask.

    MaskablePPO and masked DQN apply the mask themselves (``predict(..., action_masks=)``);
    for PPO and DQN the mask is applied to the action logits / Q-values, so every policy in a
    comparison plays by the same rules. For a Box action space (PPO) the mask is ignored and
    the action is the distribution's mean, clipped to the space (``predict(deterministic=True)``).

    **Margin gate** (``anchor`` and ``margin``; ``learned:PATH?anchor=peft&margin=2``, or the
    model folder's ``meta.json`` ``"gate": {"anchor": ..., "margin": ...}``, which a zoo entry
    ships): a node-scoring model then plays its own choice only where its logit exceeds the
    logit of the anchor heuristic's choice by at least ``margin``, and the heuristic's choice
    otherwise. ``margin=0`` is the model, ``inf`` the heuristic; in between, the model departs
    from the heuristic only where it is confident. A trust region around the heuristic, for a
    student whose departures win on some data and lose on other (its margin is chosen on
    validation, as any model is). The anchor is computed from the observation alone
    (:data:`OBSERVED_HEURISTICS`).
    """

    category = "learned"
    #: greedy and memoryless: rollouts share the object (and its network) instead of copying
    stateless = True

    def __init__(
        self, path: str | Path, anchor: str | None = None, margin: float | None = None
    ) -> None:
        set_torch_threads()
        self.dir = resolve_model_dir(path)
        self.meta = read_meta(self.dir)
        self.algo = self.meta["algo"]
        self.model = load_model(self.algo, self.dir / "model.zip", acting=True)
        self.normalizer: VecNormalize | None = None
        vn = self.dir / "vecnormalize.pkl"
        if vn.is_file():
            self.normalizer = load_normalizer(vn)
        self.name = f"learned:{path}"
        self.resized = False  # set by check_env: acting on another node count than trained
        # a node-scoring actor acts in numpy (the same greedy choice, without torch's per-call
        # overhead: rollouts over a learned base take thousands of decisions per decision)
        self._scorer: NodeScorer | None = None
        if (
            is_node_policy(self.model.policy) and self.normalizer is None
            and isinstance(self.model.action_space, spaces.Discrete)
        ):  # fmt: skip
            self._scorer = NodeScorer.from_policy(self.model.policy)
        # a flat Tanh MLP actor (policy_net: mlp) acts in numpy too, normalisation folded in
        self._mlp: MlpActor | None = None
        if self._scorer is None and self.algo in ("ppo", "maskable_ppo"):
            self._mlp = MlpActor.from_policy(self.model.policy, self.normalizer)
        # trained on a heuristic's first choices only (``candidates``: greedy_migration's moves,
        # HEFT's servers): it acts among them in any env, not among ones it never learned to weigh
        k = self.env_kwargs.get("candidates")
        self._anchor = ANCHORS.get(self.env_id) if k else None
        self.candidates = int(k) if k and self._anchor is not None else None
        self.anchor: str | None = None
        self.margin: float | None = None
        self._gate: Callable[[Observation, np.ndarray], int] | None = None
        shipped = self.meta.get("gate") or {}
        anchor = anchor if anchor is not None else shipped.get("anchor")
        margin = margin if margin is not None else shipped.get("margin")
        if anchor is not None or margin is not None:
            self._set_gate(anchor, margin)

    def _set_gate(self, anchor: str | None, margin: Any) -> None:
        """Check and keep the margin gate (class docstring)."""
        where = f"{self.dir}: anchor={anchor}, margin={margin}"
        if anchor is None or margin is None:
            raise PolicyError(f"{where}: a margin gate needs both an anchor and a margin")
        known = OBSERVED_HEURISTICS.get(self.env_id, {})
        if anchor not in known:
            raise PolicyError(
                f"{where}: {self.env_id} has no heuristic {anchor!r} computed from the "
                f"observation; known: {', '.join(known) or 'none'}"
            )
        try:
            m = float(margin)
        except (TypeError, ValueError):
            m = float("nan")
        if not m >= 0:  # NaN too
            raise PolicyError(
                f"{where}: the margin is a logit difference, a number >= 0 (inf allowed)"
            )
        if self._scorer is None:
            raise PolicyError(
                f"{where}: a margin compares node-scoring logits; this {self.algo} model has none"
            )
        self.anchor, self.margin, self._gate = anchor, m, known[anchor]

    def check_env(self, env: Any) -> None:
        """Refuse an env whose spaces differ from the ones the model was trained on, except
        the node count for a node-scoring network (it scores each node with shared weights,
        so it acts on any cluster size: :mod:`rlsched.agents.networks`)."""
        model_space = self.model.observation_space
        self.resized = False
        if env.observation_space == model_space and env.action_space == self.model.action_space:
            return
        if not is_node_policy(self.model.policy):
            raise PolicyError(
                f"{self.dir}: this {self.algo} model is not a node-scoring network, so it acts "
                f"only on the spaces it was trained on: action space {self.model.action_space} "
                f"and its observation layout; this env has action space {env.action_space} "
                f"(train ppo or maskable_ppo with policy_net node to run on any cluster size)"
            )
        ext = self.model.policy.features_extractor
        why = resized_space_error(
            model_space, env.observation_space, [*ext.node_keys, *ext.glob_keys]
        )
        if why is None and not isinstance(env.action_space, spaces.Discrete):
            why = f"action space {env.action_space} is not Discrete"
        if why is None:
            first = ext.node_keys[0]
            n = int(env.observation_space.spaces[first].shape[0])
            if int(env.action_space.n) != n:
                why = f"{env.action_space.n} actions for {n} nodes (the head scores one per node)"
        if why is None and self.normalizer is not None:
            why = "its observation normalisation statistics are per node slot"
        if why is not None:
            # most often an env argument that shapes the observation (features added or not)
            raise PolicyError(
                f"{self.dir}: this node-scoring model cannot act here: {why}; it was trained "
                f"with env arguments {self.env_kwargs}"
            )
        self.resized = True

    def _normalize(self, observation: Observation) -> Any:
        if self.normalizer is None:
            return observation
        if isinstance(observation, dict):
            obs = {k: np.asarray(v)[None] for k, v in observation.items()}
            out = self.normalizer.normalize_obs(obs)
            assert isinstance(out, dict)
            return {k: v[0] for k, v in out.items()}
        return np.asarray(self.normalizer.normalize_obs(np.asarray(observation)[None]))[0]

    def preferences(self, observation: Observation, mask: np.ndarray) -> np.ndarray | None:
        """The node-scoring actor's logits (None for other models)."""
        if self._scorer is None:
            return None
        assert isinstance(observation, Mapping)
        return self._scorer.logits(observation).astype(np.float64)

    def act(self, observation: Observation, mask: np.ndarray) -> Action:
        if self._anchor is not None and self.candidates is not None:
            # first: this is PodRebalancing's path at 100 nodes
            assert isinstance(observation, dict)  # both anchored envs' observations
            heuristic, anchored = self._anchor
            valid, own = anchored(observation, mask, self.candidates)
            if self._scorer is not None and len(valid):  # 9 rows of 300,001 at 100 nodes
                logits = self._scorer.logits(observation, valid)
                best = int(valid[np.argmax(logits)])
                if self._gate is None:
                    return best
                # the anchor's own action comes with the ranking: no second one
                held = own if self.anchor == heuristic else self._gate(observation, mask)
                known = dict(zip(valid.tolist(), logits, strict=True))
                return self._gated(observation, best, held, known)
            if len(valid):
                mask = np.zeros(len(mask), dtype=bool)
                mask[valid] = True
        action = self._act(observation, mask)
        if self._gate is None:
            return action
        return self._gated(observation, action, self._gate(observation, mask))

    def _gated(
        self, observation: Observation, action: Any, held: int, known: dict[int, Any] | None = None
    ) -> Any:
        """The margin gate (class docstring): ``action`` where its logit beats ``held``'s by the
        margin, else ``held``; ``known``: logits already computed, by action."""
        assert self._scorer is not None and self.margin is not None  # _set_gate checked
        if held == action:
            return action
        known = known or {}
        if action not in known or held not in known:
            assert isinstance(observation, Mapping)  # node-scoring models take Dict observations
            pair = self._scorer.logits(observation, np.array([action, held]))
            known = {action: pair[0], held: pair[1]}
        return action if float(known[action]) - float(known[held]) >= self.margin else held

    def _act(self, observation: Observation, mask: np.ndarray) -> Action:
        """The model's greedy action within ``mask`` (no anchor, no gate)."""
        if self._mlp is not None and not isinstance(observation, Mapping):
            return self._mlp.act(np.asarray(observation), mask)
        obs = self._normalize(observation)
        if isinstance(self.model.action_space, spaces.Box):  # continuous: no mask applies
            action, _ = self.model.predict(obs, deterministic=True)
            return np.asarray(action, dtype=np.float32)
        mask = np.asarray(mask, dtype=bool)
        if self._scorer is not None and mask.any():
            assert isinstance(observation, Mapping)  # node-scoring models take Dict observations
            return self._scorer.act(observation, mask)
        if getattr(self, "resized", False):  # another node count: the network, not predict()
            assert isinstance(observation, Mapping)  # node-scoring models take Dict observations
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
        out = {"name": self.name, "kind": "learned", "algo": self.algo, "path": str(self.dir)}
        if self._gate is not None:
            out.update(anchor=self.anchor, margin=self.margin)
        return out
