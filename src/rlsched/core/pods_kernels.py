"""greedy_migration's ranking of moves, compiled (numba).

:func:`rlsched.core.pods.greedy_candidates` and the inputs it is computed from (each slot's
violations, each node's load) make about thirty small array calls per decision. At 100 nodes
that is most of an anchored PodRebalancing model's decision, and in play, where the env's step
between two decisions leaves the caches cold, each call costs two to three times what it does
back to back. :func:`anchored` does the same in one compiled call: the same float64
violations and loads (the loads summed slot by slot, as numpy reduces that axis), the same
stable orders, so the same moves in the same order, exactly (``tests/core/test_pods_kernels.py``
checks it against the numpy path).

Imported only where numba is installed (the ``fast`` extra); without it the numpy path runs.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def _by_violations(v):
    """``np.argsort(-v, kind="stable")``: slots with more violations first, then lower slot.
    Few slots have violations: those are sorted, the rest (0) follow in slot order, without
    sorting every slot (any negative value: the whole sort)."""
    violated = 0
    for x in v:
        if x < 0 or x != x:
            return np.argsort(-v, kind="mergesort")
        violated += x > 0
    top = np.empty(violated, np.int64)
    rest = np.empty(len(v) - violated, np.int64)
    a = b = 0
    for i in range(len(v)):
        if v[i] > 0:
            top[a] = i
            a += 1
        else:
            rest[b] = i
            b += 1
    out = np.empty(len(v), np.int64)
    out[:violated] = top[np.argsort(-v[top], kind="mergesort")]
    out[violated:] = rest
    return out


@njit(cache=True, nogil=True)
def greedy_first(viol, pod_mask, load, mask, k):
    """The first ``k`` valid moves of greedy_migration's order (flat ``slot * N + node``) and
    each slot's violations (float64), from the observation's ``pod_violations`` and
    ``pod_mask`` ``(N, K)``, ``load`` ``(N, slots, 2)`` and the env's ``mask`` ``(1 + N*K*N,)``.
    """
    n_nodes, per = viol.shape
    v = np.empty(n_nodes * per, np.float64)
    for i in range(n_nodes):
        for j in range(per):
            v[i * per + j] = np.float64(viol[i, j]) * np.float64(pod_mask[i, j])
    slots, dims = load.shape[1], load.shape[2]
    node_load = np.empty(n_nodes, np.float64)
    sums = np.empty(dims, np.float64)
    for i in range(n_nodes):
        sums[:] = 0.0
        for t in range(slots):  # numpy reduces the slot axis one slot after another
            for d in range(dims):
                sums[d] += np.float64(load[i, t, d])
        best = sums[0] / slots
        for d in range(1, dims):
            x = sums[d] / slots
            if x > best:
                best = x
        node_load[i] = best
    pods = _by_violations(v)
    nodes = np.argsort(node_load, kind="mergesort")  # less loaded first, then lower node
    first = np.empty(k, np.int64)
    found = 0
    for p in pods:
        if found == k:
            break
        row = 1 + p * n_nodes
        for n in nodes:
            if mask[row + n]:
                first[found] = p * n_nodes + n
                found += 1
                if found == k:
                    break
    return first[:found], v


@njit(cache=True, nogil=True)
def anchored(viol, pod_mask, load, mask, k):
    """:func:`rlsched.policies.pods.anchored_and_greedy`: the valid actions left when the mask
    is narrowed to action 0 and greedy_migration's first ``k`` valid moves (ascending), and
    greedy_migration's own action."""
    first, v = greedy_first(viol, pod_mask, load, mask, k)
    n_nodes = viol.shape[0]
    own = 1 + first[0] if len(first) and v[first[0] // n_nodes] > 0 else 0
    zero = 1 if mask[0] else 0
    valid = np.empty(zero + len(first), np.int64)
    if zero:
        valid[0] = 0
    valid[zero:] = np.sort(first) + 1
    return valid, own
