"""Reward functions, chosen by name, so one env can serve several objectives.

Each takes a :class:`PlacementOutcome` (what one decision caused) and the env's weights, and
returns a float. They are pure: the env computes the outcome from its state, never from noise.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple


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


REWARDS: dict[str, Callable[[PlacementOutcome, RewardWeights], float]] = {
    "latency_cost": latency_cost,
    "slo_cost": slo_cost,
}
