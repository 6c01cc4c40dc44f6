"""Policies for ``rlsched/VMPlacement-v0``: first / best / worst fit and random, over NUMA nodes.

Each reads the observation (``node_after``, ``request``) and the mask only, vectorised over the
``2N`` actions (one per NUMA node), and is built as ``factory(env, seed)``.

``best_fit`` and ``worst_fit`` score an action by what stays free where the VM lands::

    left(a) = mean over the NUMA nodes that receive part of the VM of
              (remaining cpu / NUMA cpu + remaining mem / NUMA mem) / 2   after placing it

(a single VM: the NUMA ``a``; a double VM: both NUMA nodes of server ``a // 2``, each after
its half). ``best_fit`` takes the valid action with the least ``left``, ``worst_fit`` the most;
ties go to the lowest index. VMAgent's ``best_fit_action`` instead keeps the candidate with the
*largest* ``min(cpu, mem)`` remaining fraction (a worst fit) and, for a double VM, reads NUMA 0
twice; those are not reproduced.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from rlsched.policies.base import Observation, Policy
from rlsched.policies.heuristics import RandomPolicy


def left_after(observation: Observation) -> np.ndarray:
    """``left(a)`` of every action (see the module docstring), shape ``(2N,)``."""
    assert isinstance(observation, Mapping), "VMPlacement-v0 observations are dicts"
    left = observation["node_after"].sum(axis=1, dtype=np.float64) / 2.0
    if observation["request"][2] > 0.5:  # double: both NUMA nodes of the server
        pair = left.reshape(-1, 2).mean(axis=1)
        left = np.repeat(pair, 2)
    return left


class FirstFitPolicy(Policy):
    """The first valid action in index order (server 0 NUMA 0, server 0 NUMA 1, ...)."""

    name = "first_fit"

    def __init__(self, env: Any = None, seed: int | None = None) -> None:
        pass

    def act(self, observation: Observation, mask: np.ndarray) -> int:
        return int(mask.argmax())


class _ScoreFit(Policy):
    sign = 1.0

    def __init__(self, env: Any = None, seed: int | None = None) -> None:
        pass

    def preferences(self, observation: Observation, mask: np.ndarray) -> np.ndarray:
        return -self.sign * np.asarray(left_after(observation), dtype=np.float64)

    def act(self, observation: Observation, mask: np.ndarray) -> int:
        if not mask.any():
            return 0
        score = np.where(mask, self.sign * left_after(observation), np.inf)
        return int(score.argmin())


class BestFitPolicy(_ScoreFit):
    """Least cpu + memory left (as NUMA fractions) where the VM lands, after placing it."""

    name = "best_fit"
    sign = 1.0


class WorstFitPolicy(_ScoreFit):
    """Most cpu + memory left (as NUMA fractions) where the VM lands, after placing it."""

    name = "worst_fit"
    sign = -1.0


class RandomFitPolicy(RandomPolicy):
    """Uniform over the valid actions (seeded; ``reset(seed)`` replays)."""

    def __init__(self, env: Any = None, seed: int | None = None) -> None:
        super().__init__(seed)


POLICY_FACTORIES: dict[str, Callable[[Any, int | None], Policy]] = {
    "first_fit": FirstFitPolicy,
    "best_fit": BestFitPolicy,
    "worst_fit": WorstFitPolicy,
    "random": RandomFitPolicy,
}
