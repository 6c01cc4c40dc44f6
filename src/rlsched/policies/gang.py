"""Gang-aware bin packing for ``rlsched/KubeScheduling-v0`` (built with the env:
``factory(env, seed)``).

Volcano's default scheduler (actions ``enqueue, allocate, backfill``; plugins ``gang`` and
``binpack`` among others) places a job only when all of its pods fit (the gang plugin's
minAvailable: no partial allocation) and puts each pod on the feasible node that the binpack
plugin scores highest: the most requested share of the node after placement, cpu and memory
weighted equally. It does not preempt (``preempt`` is not among the default actions).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from rlsched.policies.base import Observation, Policy


def binpack_plan(
    free_c: np.ndarray, free_m: np.ndarray, alloc: np.ndarray, cpu: np.ndarray, mem: np.ndarray
) -> list[int] | None:
    """Nodes for the pods ``(cpu, mem)`` in order, each on the fitting node with the highest
    binpack score given the pods placed before it; None when some pod fits nowhere."""
    fc = free_c.astype(np.int64)
    fm = free_m.astype(np.int64)
    inv = 1.0 / alloc.astype(np.float64)
    plan: list[int] = []
    for c, m in zip(cpu.tolist(), mem.tolist(), strict=True):
        fits = (fc >= c) & (fm >= m)
        if not fits.any():
            return None
        # requested share after placement = 1 - (free - request) / allocatable, mean of both
        score = 2.0 - (fc - c) * inv[:, 0] - (fm - m) * inv[:, 1]
        i = int(np.argmax(np.where(fits, score, -np.inf)))  # ties: the lower node
        fc[i] -= c
        fm[i] -= m
        plan.append(i)
    return plan


class GangBinpackPolicy(Policy):
    """Volcano's gang + binpack: at a gang's first pod, delay unless the whole gang fits the
    free capacity; then bind each pod to the fitting node of highest binpack score (requested
    share after placement, cpu and memory averaged). Rejects only when delay is not allowed."""

    name = "gang_binpack"

    def __init__(self, env: Any, seed: int | None = None) -> None:
        self.env = getattr(env, "unwrapped", env)

    def act(self, observation: Observation, mask: np.ndarray) -> int:
        env = self.env
        N = env.num_nodes
        delay, reject = 2 * N, 2 * N + 1
        cpu, mem, first = env.pending_gang()
        free_c, free_m = env.free_capacity()
        alloc = env.allocatable
        k = len(cpu) if first else 1  # the whole gang at its first pod, then pod by pod
        plan = binpack_plan(free_c, free_m, alloc, cpu[:k], mem[:k])
        if not plan or not mask[plan[0]]:
            return delay if mask[delay] else reject
        return plan[0]


POLICY_FACTORIES: dict[str, Callable[[Any, int | None], Policy]] = {
    "gang_binpack": GangBinpackPolicy,
}
