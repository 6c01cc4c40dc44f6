"""PodRebalancing's hot paths, compiled (numba): greedy_migration's ranking of moves and the
window model.

:func:`rlsched.core.pods.greedy_candidates` and the inputs it is computed from (each slot's
violations, each node's load) make about thirty small array calls per decision. At 100 nodes
that is most of an anchored PodRebalancing model's decision, and in play, where the env's step
between two decisions leaves the caches cold, each call costs two to three times what it does
back to back. :func:`anchored` does the same in one compiled call: the same float64
violations and loads (the loads summed slot by slot, as numpy reduces that axis), the same
stable orders, so the same moves in the same order, exactly (``tests/core/test_pods_kernels.py``
checks it against the numpy path).

:func:`simulate_window` is :func:`rlsched.core.pods.simulate_window`'s window in one call (each
env step plays one, and a trial guard's rollouts thousands): the same sums in the same order
(numpy's ``bincount`` and ``cumsum`` add in index order), the same orders (its stable sorts by
size, then by key, are the order by ``(key, size, index)``: :func:`_order`), so the same floats
and the same served requests, exactly (the same tests).

Imported only where numba is installed (the ``fast`` extra); without it the numpy path runs.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from rlsched.core.pods import _RTOL


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


@njit(cache=True, nogil=True)
def _fits(total, limit):
    return total <= limit + _RTOL * max(abs(limit), 1.0)


@njit(cache=True, nogil=True)
def _order(idx, keys, nkeys, demand):
    """``idx`` (requests in index order, each with its key ``keys[j] < nkeys``) ordered by
    ``(key, demand, index)``: numpy's stable sort by size, then its stable sort by key, of
    them. A counting sort by key (stable), then each key's requests by size, stably (in place
    where they are few)."""
    n = len(idx)
    start = np.zeros(nkeys + 1, np.int64)
    for j in range(n):
        start[keys[j] + 1] += 1
    for b in range(nkeys):
        start[b + 1] += start[b]
    fill = start[:-1].copy()
    out = np.empty(n, np.int64)
    for j in range(n):
        b = keys[j]
        out[fill[b]] = idx[j]
        fill[b] += 1
    for b in range(nkeys):
        lo, hi = start[b], start[b + 1]
        if hi - lo <= 32:  # insertion sort: moves past strictly larger only, so stable
            for x in range(lo + 1, hi):
                v = out[x]
                d = demand[v]
                y = x - 1
                while y >= lo and demand[out[y]] > d:
                    out[y + 1] = out[y]
                    y -= 1
                out[y + 1] = v
        else:
            seg = out[lo:hi].copy()
            out[lo:hi] = seg[np.argsort(demand[seg], kind="mergesort")]
    return out


@njit(cache=True, nogil=True)
def _serve(demand, pod, node, t, n_t, assigned, capacity, one_per_pod, ok):
    """:func:`rlsched.core.pods.serve` into ``ok`` (zeros on entry): the same orders
    (:func:`_order`) and the same sums."""
    R = len(demand)
    if R == 0:
        return
    if one_per_pod:
        for i in range(R):
            ok[i] = _fits(demand[i], assigned[pod[i]])
    else:
        key = np.empty(R, np.int64)
        for i in range(R):
            key[i] = pod[i] * n_t + t[i]
        o1 = _order(np.arange(R), key, len(assigned) * n_t, demand)
        _group_fits(o1, pod, n_t, t, demand, assigned, True, ok)
    used = np.zeros(len(capacity) * n_t)
    n_rest = 0
    for i in range(R):
        used[node[i] * n_t + t[i]] += demand[i] if ok[i] else 0.0
        n_rest += not ok[i]
    if n_rest == 0:
        return
    rest = np.empty(n_rest, np.int64)  # the unserved, in index order
    key = np.empty(n_rest, np.int64)
    a = 0
    for i in range(R):
        if not ok[i]:
            rest[a] = i
            key[a] = node[i] * n_t + t[i]
            a += 1
    o2 = _order(rest, key, len(capacity) * n_t, demand)
    left = np.empty(len(capacity) * n_t)
    for c in range(len(capacity)):
        for s in range(n_t):
            left[c * n_t + s] = capacity[c] - used[c * n_t + s]
    _group_fits(o2, node, n_t, t, demand, left, False, ok)


@njit(cache=True, nogil=True)
def _group_fits(order, group, n_t, t, demand, limit, by_group, ok):
    """``ok[order] = _fits(_group_cumsum(order, group * n_t + t, demand), lim)`` with ``lim``
    ``limit[group[order]]`` (``by_group``) or ``limit[key]``: numpy's sequential cumsum over
    the whole order, less its value before each key's first element."""
    cs = 0.0
    before = 0.0
    prev = -1
    for j in range(len(order)):
        i = order[j]
        k = group[i] * n_t + t[i]
        v = demand[i]
        cs += v
        if k != prev:
            before = cs - v
            prev = k
        lim = limit[group[i]] if by_group else limit[k]
        ok[i] = _fits(cs - before, lim)


@njit(cache=True, nogil=True)
def simulate_window(pod_node, request_cpu, request_mem, node_cpu, node_mem, counts, cpu, mem,
                    serial, S):  # fmt: skip
    """:func:`rlsched.core.pods.simulate_window` (``serial``: its serial mode; ``S`` slots) of
    the requests ``counts`` / ``cpu`` / ``mem``: its :class:`~rlsched.core.pods.WindowResult`'s
    arrays ``(violated, pod_violations, node_requests, node_violations, pod_series,
    node_series, assigned_cpu, assigned_mem, axis)``; None where a size is NaN (numpy's sorts
    put it last) or the arrays do not fit together (a pod on no node, counts that do not sum
    to the sizes given): the numpy path plays those, or says what is wrong."""
    N, P = len(node_cpu), len(pod_node)
    R = len(cpu)
    total = 0
    for p in range(P):  # unchecked indexing below: only arrays that fit together
        if counts[p] < 0 or pod_node[p] < 0 or pod_node[p] >= N:
            return None
        total += counts[p]
    if (total != R or len(mem) != R or len(counts) != P or len(request_cpu) != P
            or len(request_mem) != P or len(node_mem) != N):  # fmt: skip
        return None
    for i in range(R):  # numpy sorts a NaN size last: not the orders above
        if cpu[i] != cpu[i] or mem[i] != mem[i]:
            return None
    pod = np.empty(R, np.int64)
    k = np.empty(R, np.int64)
    r = 0
    for p in range(P):
        for j in range(counts[p]):
            pod[r] = p
            k[r] = j
            r += 1
    node = np.empty(R, np.int64)
    for i in range(R):
        node[i] = pod_node[pod[i]]
    axis = np.zeros(N, np.int64)
    t = np.empty(R, np.int64)
    lo = np.empty(R)
    hi = np.empty(R)
    if serial:
        for p in range(P):
            axis[pod_node[p]] = max(axis[pod_node[p]], counts[p])
        for i in range(R):
            t[i] = k[i]
            length = max(np.float64(axis[node[i]]), 1.0)
            lo[i] = k[i] * S / length
            hi[i] = (k[i] + 1) * S / length
    else:
        for n in range(N):
            axis[n] = S
        for i in range(R):
            t[i] = ((2 * k[i] + 1) * S) // (2 * counts[pod[i]])
            lo[i] = np.float64(t[i])
            hi[i] = t[i] + 1.0
    n_t = 1
    for i in range(R):
        n_t = max(n_t, t[i] + 1)
    # assigned_resources
    rc = np.zeros(N)
    rm = np.zeros(N)
    cnt = np.zeros(N, np.int64)
    for p in range(P):
        rc[pod_node[p]] += request_cpu[p]
        rm[pod_node[p]] += request_mem[p]
        cnt[pod_node[p]] += 1
    a_cpu = np.empty(P)
    a_mem = np.empty(P)
    for p in range(P):
        n = pod_node[p]
        tot = rc[n]
        frac = request_cpu[p] / tot if tot > 0 else 1.0 / max(cnt[n], 1)
        scale = node_mem[n] / rm[n] if rm[n] > node_mem[n] else 1.0
        a_cpu[p] = node_cpu[n] * frac
        a_mem[p] = request_mem[p] * scale
    ok_cpu = np.zeros(R, np.bool_)
    ok_mem = np.zeros(R, np.bool_)
    _serve(cpu, pod, node, t, n_t, a_cpu, node_cpu, serial, ok_cpu)
    _serve(mem, pod, node, t, n_t, a_mem, node_mem, serial, ok_mem)
    violated = np.empty(R, np.bool_)
    for i in range(R):
        violated[i] = not (ok_cpu[i] and ok_mem[i])
    pod_series = np.zeros((P * S, 2))
    if serial:
        for i in range(R):
            for s in range(S):
                share = min(hi[i], s + 1.0) - max(lo[i], np.float64(s))
                if share > 0:
                    key = pod[i] * S + s
                    pod_series[key, 0] += cpu[i] * share
                    pod_series[key, 1] += mem[i] * share
    else:
        for i in range(R):
            key = pod[i] * S + t[i]
            pod_series[key, 0] += cpu[i]
            pod_series[key, 1] += mem[i]
    node_series = np.zeros((N * S, 2))
    for d in range(2):  # numpy: one bincount per resource, pods in order
        for p in range(P):
            for s in range(S):
                node_series[pod_node[p] * S + s, d] += pod_series[p * S + s, d]
    pod_viol = np.zeros(P, np.int64)
    for i in range(R):
        pod_viol[pod[i]] += violated[i]
    node_req = np.zeros(N, np.int64)
    node_viol = np.zeros(N, np.int64)
    for p in range(P):
        node_req[pod_node[p]] += counts[p]
        node_viol[pod_node[p]] += pod_viol[p]
    return (violated, pod_viol, node_req, node_viol, pod_series.reshape(P, S, 2),
            node_series.reshape(N, S, 2), a_cpu, a_mem, axis)  # fmt: skip
