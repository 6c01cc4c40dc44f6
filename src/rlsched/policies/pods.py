"""Baselines for ``rlsched/PodRebalancing-v0``, built with the env (``factory(env, seed)``).

Both act from the observation and the action mask only (the env's action layout:
``a - 1 = (src * K + slot) * N + dst``, see :class:`~rlsched.envs.pod_rebalancing.
PodRebalancingEnv`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from rlsched.core.pods import greedy_candidates, node_load
from rlsched.optional import loaded
from rlsched.policies.base import Observation, Policy


class NoMigrationPolicy(Policy):
    """Never moves a pod (action 0): the cluster as the scheduler placed it."""

    name = "no_migration"
    stateless = True

    def __init__(self, env: Any = None, seed: int | None = None) -> None:
        pass

    def act(self, observation: Observation, mask: np.ndarray) -> int:
        return 0


class GreedyMigrationPolicy(Policy):
    """Moves the pod with the most violated requests in the last window to the least-loaded
    node it can move to; does nothing when no pod had a violation.

    Pods are ranked by ``pod_violations`` (proportional to violated requests; ties: lower
    node, then lower slot); the first pod with a feasible move in ``mask`` is moved. The
    target is the feasible node with the lowest load, ``max`` over cpu and memory of the
    window's mean ``load`` (ties: lower index).
    """

    name = "greedy_migration"
    stateless = True

    def __init__(self, env: Any = None, seed: int | None = None) -> None:
        pass

    def preferences(self, observation: Observation, mask: np.ndarray) -> np.ndarray:
        """Its own order: moves of pods with more violations first, each to less loaded
        nodes first; no move above moving a pod without violations."""
        assert isinstance(observation, dict)
        viol = np.asarray(observation["pod_violations"], dtype=float)
        v = (viol * np.asarray(observation["pod_mask"])).ravel()
        load = node_load(np.asarray(observation["load"]))
        # violations dominate (a count), the target's load (a fraction) breaks ties
        moves = np.where(v[:, None] > 0, v[:, None], -1.0) * 1e3 - load[None, :]
        return np.concatenate([[0.0], moves.ravel()])

    def act(self, observation: Observation, mask: np.ndarray) -> int:
        # the first move of greedy_candidates' order (where that order is written), if its
        # pod had violations: then no pod with violations can move and it does nothing
        return _greedy_action(*_greedy_order(observation, mask, 1))


#: Set False to use the numpy path where numba is installed (the kernels' tests compare both)
COMPILED = True


def _compiled() -> Any:
    """The compiled ranking (:mod:`rlsched.core.pods_kernels`, looked for at the first decision,
    so that importing the baselines does not import numba), or None (numba missing, or
    ``COMPILED`` off)."""
    return loaded("rlsched.core.pods_kernels") if COMPILED else None


def _kernel_inputs(observation: Observation, mask: np.ndarray) -> tuple[np.ndarray, ...]:
    assert isinstance(observation, dict)
    return (np.asarray(observation["pod_violations"]), np.asarray(observation["pod_mask"]),
            np.asarray(observation["load"]), np.asarray(mask, dtype=bool))  # fmt: skip


def _greedy_order(
    observation: Observation, mask: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray, int]:
    """greedy_migration's first ``k`` valid moves (flat ``slot * N + node``, as
    :func:`~rlsched.core.pods.greedy_candidates`), each slot's violations and ``N``."""
    assert isinstance(observation, dict)
    kernels = _compiled()
    if kernels is not None:
        viol, pod_mask, load, bool_mask = _kernel_inputs(observation, mask)
        first, v = kernels.greedy_first(viol, pod_mask, load, bool_mask, k)
        return first, v, viol.shape[0]
    viol = np.asarray(observation["pod_violations"], dtype=float)
    N, K = viol.shape
    v = (viol * np.asarray(observation["pod_mask"])).ravel()
    load = node_load(np.asarray(observation["load"]))
    moves = np.asarray(mask[1:], dtype=bool).reshape(N * K, N)
    return greedy_candidates(v, load, moves, k), v, N


def anchored_actions(observation: Observation, mask: np.ndarray, candidates: int) -> np.ndarray:
    """The valid actions left when ``mask`` is narrowed to action 0 and the ``candidates``
    valid moves greedy_migration tries first, ascending: what the env's mask keeps with
    ``candidates`` (:func:`~rlsched.core.pods.greedy_candidates`), computed from the
    observation. A model trained with that argument acts through it in any env, so it picks
    among the moves it learned to pick among."""
    return anchored_and_greedy(observation, mask, candidates)[0]


def anchored_and_greedy(
    observation: Observation, mask: np.ndarray, candidates: int
) -> tuple[np.ndarray, int]:
    """:func:`anchored_actions` and greedy_migration's own action, from one ranking of the
    moves (at 100 nodes the ranking is most of a decision's cost)."""
    kernels = _compiled()
    if kernels is not None:  # the same actions in one compiled call
        valid, own = kernels.anchored(*_kernel_inputs(observation, mask), candidates)
        return valid, int(own)
    first, v, N = _greedy_order(observation, mask, candidates)
    moves = 1 + first
    valid = np.sort(np.concatenate([[0], moves]) if mask[0] else moves)
    return valid, _greedy_action(first, v, N)


def _greedy_action(first: np.ndarray, v: np.ndarray, N: int) -> int:
    """greedy_migration's action from its ranking (:func:`_greedy_order`): the first move, if
    its pod had violations; otherwise no pod with violations can move and it does nothing."""
    return 1 + int(first[0]) if len(first) and v[first[0] // N] > 0 else 0


def anchored_mask(observation: Observation, mask: np.ndarray, candidates: int) -> np.ndarray:
    """:func:`anchored_actions` as a mask."""
    out = np.zeros(len(mask), dtype=bool)
    out[anchored_actions(observation, mask, candidates)] = True
    return out


POLICY_FACTORIES: dict[str, Callable[[Any, int | None], Policy]] = {
    "no_migration": NoMigrationPolicy,
    "greedy_migration": GreedyMigrationPolicy,
}
