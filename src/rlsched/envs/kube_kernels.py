"""The numba-compiled parts of :class:`~rlsched.envs.kube_scheduling.KubeSchedulingEnv`'s step
(imported on first use: numba is optional, the ``fast`` extra; without it the env does the same
in numpy).

At a few nodes each numpy call of the pending pod's mask costs more than its work, and a step
made about ten of them: the mask here is 0.6 against 10.5 µs. Integer comparisons and sums
only, and one float product per node as the env writes it, so the results are the env's own
(``tests/envs/test_kube_scheduling.py`` plays episodes both ways).
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np


def _njit(fn: Any) -> Any:
    # cached on disk; no reference counting of arrays: the kernels allocate nothing
    options: dict[str, Any] = {"cache": True, "nogil": True, "_nrt": False}
    return numba.njit(**options)(fn)


@_njit
def fill_mask(
    free_c: np.ndarray, free_m: np.ndarray, low: np.ndarray, p: int, c: int, m: int,
    mask: np.ndarray, n: int,
) -> bool:  # fmt: skip
    """Binds (``mask[:n]``: the pod fits the node's free cpu and memory) and preemptions
    (``mask[n:2n]``: it does not fit, and would with the node's pods of priority below ``p``
    evicted; none when ``p`` is 0) of a pod of ``c`` millicores, ``m`` bytes and priority
    ``p``; whether any of them is valid."""
    any_valid = False
    for i in range(n):
        fits = free_c[i] >= c and free_m[i] >= m
        mask[i] = fits
        evict = False
        if p > 0 and not fits:
            evict = free_c[i] + low[p, 0, i] >= c and free_m[i] + low[p, 1, i] >= m
        mask[n + i] = evict
        if fits or evict:
            any_valid = True
    return any_valid


@_njit
def place(
    used: np.ndarray, free_c: np.ndarray, free_m: np.ndarray, low: np.ndarray,
    ucpu: np.ndarray, inv_alloc: np.ndarray, node: int, c: int, m: int, p: int, sign: int,
) -> None:  # fmt: skip
    """A pod of ``c`` millicores, ``m`` bytes and priority ``p`` bound to ``node`` (``sign``
    1) or taken off it (-1): the node's requests, free room, lower-priority sums and cpu
    use."""
    used[node, 0] += sign * c
    used[node, 1] += sign * m
    free_c[node] -= sign * c
    free_m[node] -= sign * m
    for q in range(p + 1, low.shape[0]):
        low[q, 0, node] += sign * c
        low[q, 1, node] += sign * m
    ucpu[node] = used[node, 0] * inv_alloc[node, 0]
