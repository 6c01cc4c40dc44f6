"""ServerlessPlacement-v0's reward functions; they live in :mod:`rlsched.envs.serverless_model`
(with their batched forms) and are re-exported here for older imports."""

from __future__ import annotations

from rlsched.envs.serverless_model import REWARDS as REWARD_FORMULAS
from rlsched.envs.serverless_model import (
    PlacementOutcome,
    Reward,
    RewardWeights,
    latency_cost,
    slo_cost,
)

#: Reward name -> its scalar function (the batched forms: ``REWARD_FORMULAS``).
REWARDS = {name: r.scalar for name, r in REWARD_FORMULAS.items()}

__all__ = [
    "REWARDS",
    "REWARD_FORMULAS",
    "PlacementOutcome",
    "Reward",
    "RewardWeights",
    "latency_cost",
    "slo_cost",
]
