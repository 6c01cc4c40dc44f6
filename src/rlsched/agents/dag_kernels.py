"""The whole-workflow network's forward pass for one observation, compiled (numba).

:meth:`rlsched.agents.dag_net.DagScorer.score_one` in numpy makes about a hundred small array
calls per decision, and their overhead, not the arithmetic (about 1.5 million multiply-adds for
a 15-task workflow at 6 servers), is most of its 0.17-0.21 ms. :func:`score_one` does the same
arithmetic in one compiled call: the task rows of :func:`~rlsched.agents.dag_net.dag_inputs`,
the embedding, the rounds of messages with their layer norms, the pooled context and the head
for each server. float32 throughout, as the numpy path; its sums run in another order (and,
compiled with reassociation, in the order the compiler vectorises them), so scores agree to
float32 rounding (``tests/agents/test_dag_net.py``).

Imported only where numba is installed (the ``fast`` extra); without it the numpy path runs.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

# Where a scorer passes no PEFT schedule it passes empty arrays; ``use_plan`` says which.


@njit(cache=True, nogil=True)
def _symlog(v: float) -> float:
    a = math.log1p(abs(v))
    return a if v >= 0 else -a


@njit(cache=True, nogil=True)
def _layer(a, w, b, relu):
    out = a @ w + b
    if relu:
        for i in range(out.shape[0]):
            for j in range(out.shape[1]):
                if out[i, j] < 0:
                    out[i, j] = 0
    return out


@njit(cache=True, nogil=True)
def _row_means(links, n, transpose):
    """Each row of the first ``n`` rows and columns of ``links > 0`` (``[child, parent]``;
    transposed: ``[parent, child]``) over its count: the weights of a mean over neighbours."""
    out = np.zeros((n, n), np.float32)
    for i in range(n):
        k = 0
        for j in range(n):
            if (links[j, i] if transpose else links[i, j]) > 0:
                k += 1
        for j in range(n):
            if (links[j, i] if transpose else links[i, j]) > 0:
                out[i, j] = np.float32(1.0) / np.float32(k)
    return out


#: float reassociation and contraction (FMA), so that the loops' sums vectorise; no
#: assumption of finite values (an input may be inf) and no Python zero-division checks
_FAST = {"reassoc", "contract", "nsz", "arcp"}


@njit(cache=True, nogil=True, fastmath=_FAST, error_model="numpy")
def score_one(
    tasks, oct_, placed, links, plan, plan_servers, nodes, glob, origin, base, relative,
    use_plan, task_mu, task_sd, we, be, w_first, b0, w2, b2, gamma, beta,
    server_mu, server_sd, wh_ctx, wh_srv, bh0, wh2, bh2, wh4, bh4,
):  # fmt: skip
    """Each server's score (``DagScorer.score_one``'s arithmetic; the arguments are the
    observation's arrays, ``nodes (S, 18)`` its per-server keys, ``glob (11,)`` its task and
    subtree keys, then the weights as :class:`~rlsched.agents.dag_net.DagScorer` prepares
    them: ``w_first (R, H, 3H)`` each round's first layer, its blocks for a task's own,
    its parents' and its children's embeddings side by side)."""
    f32 = np.float32
    n = 0
    for i in range(tasks.shape[0]):
        if tasks[i, 11] != 0:
            n += 1
    S = oct_.shape[1]
    data = f32(1.0)
    if relative:  # the workflow's mean data out over its real tasks
        tot = f32(0.0)
        for i in range(n):
            tot += tasks[i, 3]
        mean = tot / f32(max(n, 1))
        if mean > 0:
            data = mean
    # the task rows (dag_inputs), normalised
    F = task_mu.shape[0]
    xin = np.zeros((n, F), f32)
    for i in range(n):
        for c in range(12):
            v = tasks[i, c]
            if c == 3:
                v = v / data
            if c == 0 or c == 2 or c == 3 or c == 4 or c == 10:
                v = _symlog(v)
            xin[i, c] = v
        least = np.inf
        for s in range(S):
            xin[i, 12 + s] = 1.0 if placed[i] == s else 0.0
            o = f32(_symlog(oct_[i, s]))
            xin[i, 12 + S + s] = o
            least = min(least, o)
        for s in range(S):
            xin[i, 12 + 2 * S + s] = xin[i, 12 + S + s] - least
        din = f32(0.0)
        for j in range(n):
            din += links[i, j]
        xin[i, 12 + 3 * S] = _symlog(din / data)
        if use_plan:
            at = int(plan[i, 0])
            for s in range(S):
                xin[i, 13 + 3 * S + s] = 1.0 if at == s else 0.0
            xin[i, 13 + 4 * S] = _symlog(plan[i, 1])
        for c in range(F):
            xin[i, c] = (xin[i, c] - task_mu[c]) / task_sd[c]
    x = _layer(xin, we, be, True)
    # messages: each task reads the mean of its parents' and of its children's embeddings
    par = _row_means(links, n, False)  # [child, parent]
    kid = _row_means(links, n, True)  # [parent, child]
    H = we.shape[1]
    for r in range(w_first.shape[0]):
        # one product for the three blocks; the neighbours' means then mix its rows, as
        # (par @ x) @ W = par @ (x @ W), over the few links a task has
        a = x @ w_first[r]
        z = np.empty((n, H), f32)
        for i in range(n):
            for j in range(H):
                z[i, j] = a[i, j] + b0[r, j]
            for q in range(n):
                p = par[i, q]
                if p != 0:
                    for j in range(H):
                        z[i, j] += p * a[q, H + j]
                c = kid[i, q]
                if c != 0:
                    for j in range(H):
                        z[i, j] += c * a[q, 2 * H + j]
        for i in range(n):
            for j in range(H):
                if z[i, j] < 0:
                    z[i, j] = 0
        y = x + z @ w2[r] + b2[r]
        for i in range(n):
            m = f32(0.0)
            for j in range(H):
                m += y[i, j]
            m /= H
            q = f32(0.0)
            for j in range(H):
                y[i, j] -= m
                q += y[i, j] * y[i, j]
            d = f32(math.sqrt(q / H + 1e-5))
            for j in range(H):
                x[i, j] = y[i, j] / d * gamma[r, j] + beta[r, j]
    # the context: the current task, the mean of its descendants, the mean of all
    cur = 0
    for i in range(n):
        if tasks[i, 7] > tasks[cur, 7]:
            cur = i
    seen = np.zeros(n, np.bool_)
    stack = [cur]
    while len(stack):
        p = stack.pop()
        for c in range(n):
            if links[c, p] > 0 and not seen[c]:
                seen[c] = True
                stack.append(c)
    ctx = np.zeros(3 * H, f32)
    k = 0
    for i in range(n):
        for j in range(H):
            ctx[2 * H + j] += x[i, j]
        if seen[i]:
            k += 1
            for j in range(H):
                ctx[H + j] += x[i, j]
    for j in range(H):
        ctx[j] = x[cur, j]
        ctx[H + j] /= max(k, 1)
        ctx[2 * H + j] /= n
    # the server rows, normalised, then the head
    K = nodes.shape[1]
    G = server_mu.shape[0]
    g = glob.shape[0]
    row = np.zeros((S, G), f32)
    sym = np.empty((S, K), f32)
    for s in range(S):
        for j in range(K):
            sym[s, j] = _symlog(nodes[s, j])
    gl = np.empty(g, f32)
    for j in range(g):
        v = glob[j]
        if j == 3 or j == 4:
            v = v / data
        gl[j] = _symlog(v)
    ps = np.zeros((S, 2), f32)
    if use_plan:
        for s in range(S):
            for j in range(2):
                ps[s, j] = _symlog(plan_servers[s, j])
    for s in range(S):
        for j in range(K):
            row[s, j] = sym[s, j]
            row[s, K + j] = sym[s, j] - sym[base, j]
        for j in range(g):
            row[s, 2 * K + j] = gl[j]
        e0 = 2 * K + g
        row[s, e0 + s] = 1.0
        row[s, e0 + S] = origin[s]
        if use_plan:
            for j in range(2):
                row[s, e0 + S + 1 + j] = ps[s, j]
                row[s, e0 + S + 3 + j] = ps[s, j] - ps[base, j]
        for j in range(G):
            row[s, j] = (row[s, j] - server_mu[j]) / server_sd[j]
    h = row @ wh_srv + (ctx @ wh_ctx + bh0)
    for i in range(S):
        for j in range(h.shape[1]):
            if h[i, j] < 0:
                h[i, j] = 0
    h = _layer(h, wh2, bh2, True)
    out = h @ wh4 + bh4
    return out[:, 0].copy()


@njit(cache=True, nogil=True)
def score_mean(
    tasks, oct_, placed, links, plan, plan_servers, nodes, glob, origin, base, relative,
    use_plan, offsets, task_mu, task_sd, we, be, w_first, b0, w2, b2, gamma, beta,
    server_mu, server_sd, wh_ctx, wh_srv, bh0, wh2, bh2, wh4, bh4,
):  # fmt: skip
    """The mean over ``M`` networks of the same shape of each one's :func:`score_one` less its
    offset (an ensemble in one call: the weights are :func:`score_one`'s, stacked on a first
    axis of length ``M``; ``offsets (M,)``). Summed in the order of the numpy loop of
    :meth:`rlsched.policies.departures.DeparturePolicy.scores`, so the same float32 numbers."""
    M = offsets.shape[0]
    total = np.zeros(oct_.shape[1], np.float32)
    for m in range(M):
        z = score_one(
            tasks, oct_, placed, links, plan, plan_servers, nodes, glob, origin, base,
            relative, use_plan, task_mu[m], task_sd[m], we[m], be[m], w_first[m], b0[m],
            w2[m], b2[m], gamma[m], beta[m], server_mu[m], server_sd[m],
            wh_ctx[m], wh_srv[m], bh0[m], wh2[m], bh2[m], wh4[m], bh4[m],
        )  # fmt: skip
        for j in range(total.shape[0]):
            total[j] = (total[j] + z[j]) - offsets[m]
    return total * np.float32(1.0 / M)
