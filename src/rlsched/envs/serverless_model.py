"""The ServerlessPlacement-v0 model, written once for its two envs.

:class:`~rlsched.envs.serverless_placement.ServerlessPlacementEnv` (one env, scalar hot path)
and :class:`~rlsched.vector.serverless_placement.ServerlessPlacementBatch` (``B`` sub-envs in
arrays) share everything here: the column layout of the float32 node-feature buffer and of the
per-instance rows the observation is cut from, the observation space and the observation
builder (``...`` indexing: one function for ``(N, F)`` and ``(B, N, F)``), the per-instance
constants of the response-time and reward formulas, the episode metrics and their
:data:`METRICS` spec, and the reward functions, each registered with its scalar and its batched
form together (:data:`REWARDS`). The batched forms do the scalar forms' IEEE double operations
in the same order, so the two envs agree bit for bit (``tests/vector``).

What stays per env is the state update itself: the single env steps Python floats (a numpy call
costs more than the arithmetic on one node), the batched env gathers and scatters rows of
``(B * N, ...)`` matrices. Both docstrings name the operations they mirror.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from gymnasium import spaces

from rlsched.envs.base import Metric

I32_MAX = np.iinfo(np.int32).max

# ---------------------------------------------------------------------------- column layout
#: Columns of the float32 node-feature buffer, ``(..., N, NB_WIDTH)``: utilisation of cpu,
#: memory, network, disk (0:4), capacity cores and GB (4:6), price (6), deployed cpu and memory
#: requests (7:9), warm container of the current type (9), seconds of billing committed (10).
UTIL, CAP, PRICE, DEPLOYED, WARM, BILLED = slice(0, 4), slice(4, 6), 6, slice(7, 9), 9, 10
NB_WIDTH = 11
#: Columns of the float32 per-instance rows, ``(..., INST_WIDTH)``: cpu and memory request
#: (0:2), network and disk io (2:4), standalone execution time (4).
INST_REQUEST, INST_IO, INST_EXEC = slice(0, 2), slice(2, 4), slice(4, 5)
INST_WIDTH = 5


def observation_space(num_nodes: int, num_functions: int) -> spaces.Dict:
    """The observation space of one env with ``num_nodes`` nodes and ``num_functions`` slots."""
    N, F, inf, f32 = num_nodes, num_functions, np.inf, np.float32
    return spaces.Dict(
        {
            "node_utilization": spaces.Box(0.0, inf, (N, 4), f32),
            "node_capacity": spaces.Box(0.0, inf, (N, 2), f32),
            "node_price": spaces.Box(0.0, inf, (N,), f32),
            "node_deployed": spaces.Box(0.0, inf, (N, 2), f32),
            "node_active": spaces.MultiBinary(N),
            "current_function_request": spaces.Box(0.0, inf, (2,), f32),
            "current_function_io": spaces.Box(0.0, inf, (2,), f32),
            "current_function_requests": spaces.Box(0, I32_MAX, (1,), np.int32),
            "current_function_rart": spaces.Box(0.0, inf, (1,), f32),
            "cluster_function_requests": spaces.Box(0, I32_MAX, (F,), np.int32),
            "current_function_exec": spaces.Box(0.0, inf, (1,), f32),
            "node_warm": spaces.Box(0.0, 1.0, (N,), f32),
            "node_billed_time": spaces.Box(0.0, inf, (N,), f32),
        }
    )


def observation(
    nb: np.ndarray,
    active: np.ndarray,
    inst: np.ndarray,
    nreq: np.ndarray,
    rart: np.ndarray,
    in_flight: np.ndarray,
) -> dict[str, np.ndarray]:
    """The observation dict, cut from arrays the caller made for it (views of them are
    returned: pass new arrays, never the env's state): ``nb`` ``(..., N, NB_WIDTH)`` float32
    node features, ``active`` ``(..., N)`` int8, ``inst`` ``(..., INST_WIDTH)`` float32 current
    instance, ``nreq`` ``(..., 1)`` int32 its invocations, ``rart`` ``(..., 1)`` float32 its
    type's recent RFRT, ``in_flight`` ``(..., F)`` invocations per slot (copied to int32)."""
    return {
        "node_utilization": nb[..., UTIL],
        "node_capacity": nb[..., CAP],
        "node_price": nb[..., PRICE],
        "node_deployed": nb[..., DEPLOYED],
        "node_active": active,
        "current_function_request": inst[..., INST_REQUEST],
        "current_function_io": inst[..., INST_IO],
        "current_function_requests": nreq,
        "current_function_rart": rart,
        "cluster_function_requests": in_flight.astype(np.int32),
        "current_function_exec": inst[..., INST_EXEC],
        "node_warm": nb[..., WARM],
        "node_billed_time": nb[..., BILLED],
    }


# ---------------------------------------------------------------------------- instance constants
def cold_start_time(
    cold_start: float, cold_start_per_gb: float, mem_request: np.ndarray
) -> np.ndarray:
    """Seconds a cold start adds to an instance: ``cold_start + cold_start_per_gb * mem``."""
    return cold_start + cold_start_per_gb * mem_request


def cost_reference(
    max_rate: float, exec_time: np.ndarray, rfrt_max: float, node_keepalive: float
) -> np.ndarray:
    """The cost normaliser of a placement: the most it can add on any node,
    ``max $/s * (exec_time * rfrt_max + node_keepalive)``."""
    return max_rate * (exec_time * rfrt_max + node_keepalive)


def slo_bound(slo_factor: float, exec_time: np.ndarray) -> np.ndarray:
    """Response time above which an instance violates its SLO: ``slo_factor * exec_time``."""
    return slo_factor * exec_time


# ---------------------------------------------------------------------------- metrics
#: The metrics of ``info["metrics"]`` / ``metrics()``, in leaderboard order; the main metric is
#: the episode return (the chosen reward is the objective).
METRICS: dict[str, Metric] = {
    "cost": Metric("cost $", "$", higher_is_better=False, leaderboard=True),
    "mean_rfrt": Metric("mean RFRT", "x", higher_is_better=False, leaderboard=True),
    "p95_rfrt": Metric("p95 RFRT", "x", higher_is_better=False, leaderboard=True),
    "slo_violation_pct": Metric("SLO viol. %", "%", higher_is_better=False, leaderboard=True),
    "cold_start_pct": Metric("cold starts %", "%", higher_is_better=False, leaderboard=True),
    "invalid_actions": Metric("invalid", "actions", higher_is_better=False, leaderboard=True),
    "placed": Metric("placed", "instances", higher_is_better=True),
    "mean_response_time": Metric("mean_response_time", "s", higher_is_better=False),
    "unplaceable": Metric("unplaceable", "instances", higher_is_better=False),
    "sim_time": Metric("sim_time", "s", higher_is_better=None),
}


def episode_metrics(
    rfrt: Sequence[float] | np.ndarray,
    response: Sequence[float] | np.ndarray,
    cost: float,
    slo_count: int,
    cold_count: int,
    invalid: int,
    unplaceable: int,
    now: float,
) -> dict[str, float]:
    """The episode so far: ``rfrt`` and ``response`` of the placed instances in placement
    order, the committed cost, SLO-violation, cold-start, invalid-action and unplaceable
    counts, and the clock."""
    placed = np.asarray(rfrt)
    k = len(placed)
    return {
        "placed": float(k),
        "cost": cost,
        "mean_rfrt": float(placed.mean()) if k else float("nan"),
        "p95_rfrt": float(np.percentile(placed, 95)) if k else float("nan"),
        "mean_response_time": float(np.mean(response)) if k else float("nan"),
        "slo_violation_pct": 100.0 * slo_count / k if k else 0.0,
        "cold_start_pct": 100.0 * cold_count / k if k else 0.0,
        "invalid_actions": float(invalid),
        "unplaceable": float(unplaceable),
        "sim_time": float(now),
    }


# ---------------------------------------------------------------------------- rewards
class PlacementOutcome(NamedTuple):
    """The measurable consequences of placing one function instance."""

    rfrt: float
    """Response time / standalone execution time (>= 1 barring rounding)."""
    cost_delta: float
    """Dollars of node billing this placement added to the cluster's committed cost."""
    cost_ref: float
    """Largest cost this instance could add on any node: the cost normaliser."""
    slo_violated: bool
    """Response time exceeded the instance's SLO."""


@dataclass(frozen=True)
class RewardWeights:
    beta: float = 0.7
    """Weight of latency against cost in ``latency_cost``."""
    rfrt_min: float = 1.0
    """RFRT mapped to 0 in ``latency_cost`` (a standalone run)."""
    rfrt_max: float = 5.0
    """RFRT mapped to 1 in ``latency_cost``; larger values are clipped."""
    slo_penalty: float = 1.0
    """Penalty of one SLO violation in ``slo_cost``."""
    cost_weight: float = 0.5
    """Weight of the normalised cost in ``slo_cost``."""


def _clip01(x: float) -> float:
    return 0.0 if x < 0.0 else 1.0 if x > 1.0 else x


def latency_cost(o: PlacementOutcome, w: RewardWeights) -> float:
    """The design note's reward: ``-(beta * norm(RFRT) + (1 - beta) * norm(cost change))``.

    Both terms are min-max normalised to ``[0, 1]``: RFRT over ``[rfrt_min, rfrt_max]``; the cost
    change over ``[0, cost_ref]`` (0 when the node was already billed long enough).
    """
    r1 = _clip01((o.rfrt - w.rfrt_min) / (w.rfrt_max - w.rfrt_min))
    r2 = _clip01(o.cost_delta / o.cost_ref) if o.cost_ref > 0 else 0.0
    return -(w.beta * r1 + (1.0 - w.beta) * r2)


def slo_cost(o: PlacementOutcome, w: RewardWeights) -> float:
    """For near-real-time functions: ``-(slo_penalty * violated + cost_weight * norm(cost))``."""
    r2 = _clip01(o.cost_delta / o.cost_ref) if o.cost_ref > 0 else 0.0
    return -(w.slo_penalty * float(o.slo_violated) + w.cost_weight * r2)


#: ``(rfrt, cost_delta, cost_ref, slo_violated)`` arrays of shape ``(B,)`` -> rewards ``(B,)``.
BatchedReward = Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray], np.ndarray]


def latency_cost_batched(w: RewardWeights) -> BatchedReward:
    """:func:`latency_cost` over arrays, with the weights' constants computed once."""
    rfrt_min, span = w.rfrt_min, w.rfrt_max - w.rfrt_min
    weights = np.array([w.beta, 1.0 - w.beta])

    def reward(
        rfrt: np.ndarray, cost_delta: np.ndarray, cost_ref: np.ndarray, slo: np.ndarray
    ) -> np.ndarray:
        q = np.empty((rfrt.size, 2))
        np.subtract(rfrt, rfrt_min, out=q[:, 0])
        q[:, 0] /= span
        np.divide(cost_delta, cost_ref, out=q[:, 1])
        np.maximum(q, 0.0, out=q)
        np.minimum(q, 1.0, out=q)
        q *= weights
        r = q[:, 0] + q[:, 1]
        np.negative(r, out=r)
        return r

    return reward


def slo_cost_batched(w: RewardWeights) -> BatchedReward:
    """:func:`slo_cost` over arrays."""
    slo_penalty, cost_weight = w.slo_penalty, w.cost_weight

    def reward(
        rfrt: np.ndarray, cost_delta: np.ndarray, cost_ref: np.ndarray, slo: np.ndarray
    ) -> np.ndarray:
        r2 = cost_delta / cost_ref
        np.maximum(r2, 0.0, out=r2)
        np.minimum(r2, 1.0, out=r2)
        r2 *= cost_weight
        r = slo_penalty * slo.astype(np.float64)
        r += r2
        np.negative(r, out=r)
        return r

    return reward


@dataclass(frozen=True)
class Reward:
    """One reward formula in its two forms. ``scalar`` scores one placement. ``batched(w)``
    (None: none written) returns the formula over ``(B,)`` arrays with the same IEEE
    operations in the same order, so equal bit for bit; it is valid where every ``cost_ref`` is
    positive (the batched env falls back to ``scalar`` per element otherwise)."""

    scalar: Callable[[PlacementOutcome, RewardWeights], float]
    batched: Callable[[RewardWeights], BatchedReward] | None = None

    def over(
        self,
        w: RewardWeights,
        rfrt: np.ndarray,
        cost_delta: np.ndarray,
        cost_ref: np.ndarray,
        slo: np.ndarray,
    ) -> np.ndarray:
        """``scalar`` element by element (any ``cost_ref``)."""
        fn = self.scalar
        return np.array(
            [
                fn(PlacementOutcome(float(r), float(c), float(f), bool(v)), w)
                for r, c, f, v in zip(rfrt, cost_delta, cost_ref, slo, strict=True)
            ]
        )


#: Reward name -> its scalar and batched forms (the env's ``reward`` argument).
REWARDS: dict[str, Reward] = {
    "latency_cost": Reward(latency_cost, latency_cost_batched),
    "slo_cost": Reward(slo_cost, slo_cost_batched),
}
