"""Node-choosing heuristics, vectorised over nodes.

Each scores every node from a :class:`~rlsched.core.cluster.NodeView` (higher is better) and takes
the best valid one. Ties go to a seeded random choice among the best, as kube-scheduler's
``selectHost`` does, so no heuristic is favoured by node order unless that is its rule.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, cast

import gymnasium as gym
import numpy as np

from rlsched.core.cluster import NodeView
from rlsched.envs.base import RlschedEnv
from rlsched.policies.base import Observation, Policy

#: kube-scheduler's framework.MaxNodeScore.
MAX_NODE_SCORE = 100.0

ViewFn = Callable[[Observation], NodeView]


class RandomPolicy(Policy):
    """Uniform among valid actions."""

    name = "random"
    reads_observation = False  # the mask alone

    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def act(self, observation: Observation, mask: np.ndarray) -> int:
        valid = np.flatnonzero(mask)
        if len(valid) == 0:
            return 0
        return int(valid[self.rng.integers(len(valid))])


class RoundRobinPolicy(Policy):
    """The next valid action after the last one taken, cycling."""

    name = "round_robin"
    reads_observation = False  # the mask alone

    def __init__(self) -> None:
        self.last = -1

    def reset(self, seed: int | None = None) -> None:
        self.last = -1

    def act(self, observation: Observation, mask: np.ndarray) -> int:
        n = len(mask)
        s = (self.last + 1) % n
        k = s + int(mask[s:].argmax())  # the first valid at or after s, else the first before
        if not mask[k]:
            k = int(mask[:s].argmax()) if s else s
            if not mask[k]:
                k = s  # none valid: one step on
        self.last = k
        return k


class FirstFitPolicy(Policy):
    """The lowest-indexed valid action."""

    name = "first_fit"
    reads_observation = False  # the mask alone

    def act(self, observation: Observation, mask: np.ndarray) -> int:
        return int(mask.argmax())  # the method: np.argmax's dispatch costs more than the work


class ScoringPolicy(Policy):
    """Takes the valid node with the highest ``score(view)``; ties broken by a seeded rng."""

    def __init__(self, view: ViewFn, seed: int | None = None) -> None:
        self.view = view
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def score(self, v: NodeView) -> np.ndarray:
        raise NotImplementedError

    def preferences(self, observation: Observation, mask: np.ndarray) -> np.ndarray:
        """Each node's score (actions past the nodes: below every node)."""
        scores = np.asarray(self.score(self.view(observation)), dtype=np.float64)
        out = np.full(len(mask), -np.inf)
        out[: len(scores)] = scores
        return out

    def act(self, observation: Observation, mask: np.ndarray) -> int:
        view = self.view(observation)
        scores = self.score(view)
        node_mask = mask[: len(scores)]  # actions 0..N-1 are the nodes
        if not node_mask.any():
            fb = view.fallback_action
            return int(fb if fb is not None and mask[fb] else np.argmax(mask))
        s = np.where(node_mask, scores, -np.inf)
        best = np.flatnonzero(s >= s.max() - 1e-12)
        return int(best[0] if len(best) == 1 else best[self.rng.integers(len(best))])


def _fraction_after(v: NodeView, k: int = 2) -> np.ndarray:
    """Requested / capacity of the first ``k`` resources with the pending item added, ``(N, k)``."""
    return (v.requested[:, :k] + v.demand[:k]) / v.capacity[:, :k]


class BestFitPolicy(ScoringPolicy):
    """Least remaining capacity after placement (mean of cpu and memory fractions)."""

    name = "best_fit"

    def score(self, v: NodeView) -> np.ndarray:
        return _fraction_after(v).mean(axis=1)


class WorstFitPolicy(ScoringPolicy):
    """Most remaining capacity after placement."""

    name = "worst_fit"

    def score(self, v: NodeView) -> np.ndarray:
        return -_fraction_after(v).mean(axis=1)


class CheapestPolicy(ScoringPolicy):
    """Lowest price per hour."""

    name = "cheapest"

    def score(self, v: NodeView) -> np.ndarray:
        assert v.price is not None
        return -v.price


class LeastLoadedPolicy(ScoringPolicy):
    """Lowest actual load (measured usage, not requests)."""

    name = "least_loaded"

    def score(self, v: NodeView) -> np.ndarray:
        assert v.load is not None
        return -v.load


class K8sLeastAllocated(ScoringPolicy):
    """kube-scheduler NodeResourcesFit, strategy LeastAllocated (cpu and memory, weight 1 each):
    per resource ``floor((allocatable - requested) * MaxNodeScore / allocatable)`` (0 when over
    allocatable), requested including the pod, then the integer mean over resources."""

    name = "k8s_least_allocated"

    def score(self, v: NodeView) -> np.ndarray:
        f = _fraction_after(v)
        per = np.where(f > 1.0, 0.0, np.floor((1.0 - f) * MAX_NODE_SCORE))
        return np.floor(per.sum(axis=1) / per.shape[1])


class K8sMostAllocated(ScoringPolicy):
    """kube-scheduler NodeResourcesFit, strategy MostAllocated:
    per resource ``floor(min(requested, allocatable) * MaxNodeScore / allocatable)``, then the
    integer mean over resources."""

    name = "k8s_most_allocated"

    def score(self, v: NodeView) -> np.ndarray:
        per = np.floor(np.minimum(_fraction_after(v), 1.0) * MAX_NODE_SCORE)
        return np.floor(per.sum(axis=1) / per.shape[1])


class K8sBalancedAllocation(ScoringPolicy):
    """kube-scheduler NodeResourcesBalancedAllocation: ``(1 - std(fractions)) * MaxNodeScore``
    over cpu and memory requested fractions (pod included, each capped at 1); for two resources
    the standard deviation is ``|f_cpu - f_mem| / 2``."""

    name = "k8s_balanced"

    def score(self, v: NodeView) -> np.ndarray:
        f = np.minimum(_fraction_after(v), 1.0)
        std = np.abs(f[:, 0] - f[:, 1]) / 2.0
        return np.floor((1.0 - std) * MAX_NODE_SCORE)


#: Heuristic name -> (class, NodeView fields it needs beyond capacity/requested/demand).
HEURISTICS: dict[str, tuple[type[Policy], tuple[str, ...]]] = {
    "random": (RandomPolicy, ()),
    "round_robin": (RoundRobinPolicy, ()),
    "first_fit": (FirstFitPolicy, ()),
    "best_fit": (BestFitPolicy, ()),
    "worst_fit": (WorstFitPolicy, ()),
    "cheapest": (CheapestPolicy, ("price",)),
    "least_loaded": (LeastLoadedPolicy, ("load",)),
    "k8s_least_allocated": (K8sLeastAllocated, ()),
    "k8s_most_allocated": (K8sMostAllocated, ()),
    "k8s_balanced": (K8sBalancedAllocation, ()),
}


def make_heuristic(name: str, view: ViewFn | None, seed: int | None = None) -> Policy:
    cls, _ = HEURISTICS[name]
    if issubclass(cls, ScoringPolicy):
        if view is None:
            raise ValueError(f"heuristic {name!r} needs an env with node_view()")
        return cls(view, seed=seed)
    if cls is RandomPolicy:
        return RandomPolicy(seed)
    return cls()


def applicable(name: str, sample_view: NodeView | None) -> bool:
    """Whether heuristic ``name`` can run on an env whose node view looks like ``sample_view``."""
    cls, needs = HEURISTICS[name]
    if not issubclass(cls, ScoringPolicy):
        return True
    if sample_view is None:
        return False
    return all(getattr(sample_view, f) is not None for f in needs)


def view_of(env: RlschedEnv | gym.Env) -> ViewFn | None:
    """The env's ``node_view`` (the env contract, :mod:`rlsched.envs.base`), None when the env
    has none."""
    base = cast(RlschedEnv, env.unwrapped)
    return cast(ViewFn, base.node_view) if type(base).has_node_view() else None


def sample_view(
    env: RlschedEnv | gym.Env, observation: Mapping[str, np.ndarray] | None = None
) -> NodeView | None:
    """The env's node view of ``observation``, by default of an all-zero observation of the
    env's observation space: which view fields an env fills does not depend on the values, so
    applicability is decided without resetting or stepping the env."""
    fn = view_of(env)
    if fn is None:
        return None
    if observation is None:
        observation = zero_observation(env.observation_space)
    return fn(observation)


def zero_observation(space: object) -> Any:
    """An observation of ``space`` with every entry 0 (Box, Discrete, MultiDiscrete, Dict)."""
    from gymnasium import spaces

    if isinstance(space, spaces.Dict):
        return {k: zero_observation(s) for k, s in space.spaces.items()}
    if isinstance(space, spaces.Tuple):
        return tuple(zero_observation(s) for s in space.spaces)
    if isinstance(space, spaces.Discrete):
        return int(space.start)
    shape = getattr(space, "shape", None) or ()
    return np.zeros(shape, dtype=getattr(space, "dtype", None) or np.float64)
