"""One interface for every decision maker, heuristic or learned."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any

import numpy as np

Observation = Mapping[str, np.ndarray] | np.ndarray
#: An action index (Discrete action spaces) or an array (Box spaces, e.g. LLMAutoscaling's).
Action = int | np.ndarray


class Policy(ABC):
    """Picks an action from an observation and the env's action mask (True = valid).

    ``reset(seed)`` is called at the start of every episode so that stateful or random policies
    replay exactly under the same seed.
    """

    name: str = "policy"
    #: ``heuristic`` (what operators run; candidates for the reference of a verdict),
    #: ``search`` (planners such as rollouts or an exact solver), ``learned`` or ``oracle``
    #: (reads the future: not deployable).
    category: str = "heuristic"
    #: True when ``act`` keeps no state between calls (nor ``reset``), so a search that needs
    #: copies of the policy (:mod:`rlsched.policies.rollout`) may share this object instead.
    stateless: bool = False
    #: False when ``act`` reads the env it was built with, never the observation, so a
    #: search's rollouts may step the env without building one (``env.advance``).
    reads_observation: bool = True

    def reset(self, seed: int | None = None) -> None:  # noqa: B027 - optional hook
        """Start a new episode; the default keeps no state."""

    @abstractmethod
    def act(self, observation: Observation, mask: np.ndarray) -> Action:
        """The action to take."""

    def taken(self, action: Action) -> None:  # noqa: B027 - optional hook
        """The action the env took after this policy's last ``act``, told when a caller may
        play another (DAgger: the learner acts, this policy only labels); the default keeps
        no state."""

    def action_values(self) -> dict[int, float] | None:
        """What this policy's last ``act`` estimated each candidate action to be worth (higher
        is better), or None when it compared none: a search teacher's values, which imitation
        can fit (``TrainConfig.imitation_target``) instead of its choice alone."""
        return None

    def preferences(self, observation: Observation, mask: np.ndarray) -> np.ndarray | None:
        """How much the policy likes each action (higher is better; the action it takes is
        the best valid one), or None when it ranks only its own choice. A search over this
        policy (:mod:`rlsched.policies.rollout`) tries its top-ranked actions first."""
        return None

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "kind": type(self).__name__}


class SavedModelPolicy(Policy):
    """A policy loaded from a model folder: the env it was trained for, read from the folder's
    ``meta.json`` (``self.meta``, set by the subclass)."""

    category = "learned"
    meta: dict[str, Any]

    @property
    def env_id(self) -> str:
        return str(self.meta["env_id"])

    @property
    def env_kwargs(self) -> dict[str, Any]:
        return dict(self.meta.get("env_kwargs", {}))


def first_valid(mask: np.ndarray) -> int:
    """Index of the first valid action (0 when none is: the env decides what that means)."""
    return int(np.argmax(mask))
