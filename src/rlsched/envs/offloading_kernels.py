"""The numba-compiled kernels of :mod:`rlsched.envs.offloading_fast` (imported on first use:
numba is optional, the ``fast`` extra, and slow to import).

Each repeats, in the same order of floating-point operations, what the env does in Python:
:func:`_estimate` is ``WorkflowOffloadingEnv.estimate`` (``ready_time``, ``ServerState.plan``
and ``earliest_fit``), :func:`_commit` is ``ServerState.commit``, :func:`base_order` is the base's
``eft_order``, :func:`rollout_returns` the search's rollouts with their summed reward, and
:func:`observe` and :func:`child_done` the per-server part of the env's observation
(``_server_features_python`` and ``_child_done``; ``_peak`` is ``ServerState.usage``).
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

_EPS = 1e-9  # rlsched.core.offloading's tolerance on capacity


def _njit(fn: Any) -> Any:
    # cached on disk (compiling takes seconds). Without numba's reference counting of arrays
    # (``_nrt=False``; the kernels allocate nothing, the caller passes every buffer): its
    # atomic increments at each call took most of the rollouts' time, 5-6 times the work.
    options: dict[str, Any] = {"cache": True, "nogil": True, "_nrt": False}
    return numba.njit(**options)(fn)


# ---------------------------------------------------------------- the kernels
# Static arrays of one workflow (``st``): par_ptr, par_idx, ch_ptr, ch_idx (CSR parents and
# children), work, data, tcpu, tmem, img (image ids), sink, host (tasks x servers: can host),
# holds (tasks x servers: the server holds the task's image), rank (upward), oct (tasks x
# servers), speed, scpu, smem, cloud, adj, lat (servers x servers), cache_size (-1: none).
# Scalars (``sc``): arrival, bandwidth, input_data, pull_time, time_unit, origin.


@_njit
def _round9(x: float) -> float:
    return np.rint(x * 1e9) / 1e9


@_njit
def _trans(p, i, j, data, adj, lat, bw):
    if i == j:
        return 0.0
    return data[p] * adj[i, j] / bw + lat[i, j]


@_njit
def _image(t, s, holds, img, cimg, ctime, ncache):
    """``(pulled, avail)`` of task ``t``'s image on server ``s`` (ServerState.image_ready):
    held there (available from -inf), cached (from its pull's end) or to be pulled now."""
    if holds[t, s]:
        return False, -np.inf
    for c in range(ncache[s]):
        if cimg[s, c] == img[t]:
            return False, ctime[s, c]
    return True, 0.0


@_njit
def _estimate(t, s, st, sc, server, finish, iv, niv, cimg, ctime, ncache, buf):
    """``(start, finish, pulled, t_trans, t_exec, done, ready)`` of task ``t`` on server
    ``s``."""
    (par_ptr, par_idx, _cp, _ci, work, data, tcpu, tmem, img, sink, _h, holds, _r, _o,
     speed, scpu, smem, cloud, adj, lat, _cs) = st  # fmt: skip
    arrival, bw, input_data, pull_time = sc[0], sc[1], sc[2], sc[3]
    o = int(sc[5])
    lo, hi = par_ptr[t], par_ptr[t + 1]
    # ready_time and the input transfer
    if lo == hi:
        t_in = 0.0 if s == o or input_data == 0 else input_data * adj[o, s] / bw + lat[o, s]
        ready = arrival + t_in
    else:
        ready = arrival
        t_in = 0.0
        for k in range(lo, hi):
            p = par_idx[k]
            x = _trans(p, server[p], s, data, adj, lat, bw)
            r = finish[p] + x
            if r > ready:
                ready = r
            t_in += x
    ex = work[t] / speed[s]
    pulled, avail = _image(t, s, holds, img, cimg, ctime, ncache)
    lower = ready
    if not pulled and avail > ready:
        lower = avail
    run = ex + (pull_time if pulled else 0.0)
    start = lower
    if not cloud[s]:
        start = _earliest_fit(s, lower, run, tcpu[t], tmem[t], iv, niv, scpu, smem, buf)
    fin = start + run
    t_out = 0.0
    if sink[t] and s != o:  # a sink's output goes back to the origin
        t_out = data[t] * adj[s, o] / bw + lat[s, o]
    return (start, fin, pulled, t_in + t_out, ex + (pull_time if pulled else 0.0), fin + t_out,
            ready)  # fmt: skip


@_njit
def _peak(s, t0, t1, iv, niv):
    """ServerState.usage: the peak cpu and memory reserved on ``s`` during ``[t0, t1)``, the
    sums at ``t0`` and at each start inside the span, each over the runs in their order."""
    n = niv[s]
    pc = 0.0
    pm = 0.0
    for a in range(-1, n):
        if a >= 0:
            x = iv[s, a, 0]
            if not (t0 < x < t1):  # a run starting inside the span (so ending after t0)
                continue
        else:
            x = t0
        c = 0.0
        mm = 0.0
        for b in range(n):
            if iv[s, b, 0] <= x < iv[s, b, 1]:
                c += iv[s, b, 2]
                mm += iv[s, b, 3]
        if c > pc:
            pc = c
        if mm > pm:
            pm = mm
    return pc, pm


@_njit
def _earliest_fit(s, lower, dur, cpu, mem, iv, niv, scpu, smem, buf):
    """ServerState.earliest_fit: the first of ``lower`` and the later interval ends where the
    run fits, each peak summed over the intervals in their order."""
    n = niv[s]
    cand = buf  # scratch: the candidate start times, sorted by insertion
    cand[0] = lower
    m = 1
    for k in range(n):
        e = iv[s, k, 1]
        if e > lower:
            j = m
            while j > 0 and cand[j - 1] > e:
                cand[j] = cand[j - 1]
                j -= 1
            cand[j] = e
            m += 1
    span = dur if dur >= _EPS else _EPS
    prev = np.nan
    for q in range(m):
        t0 = cand[q]
        if t0 == prev:  # a set: each time once
            continue
        prev = t0
        pc, pm = _peak(s, t0, t0 + span, iv, niv)
        if pc + cpu <= scpu[s] + _EPS and pm + mem <= smem[s] + _EPS:
            return t0
    return cand[m - 1]


@_njit
def base_order(
    t, st, sc, server, finish, iv, niv, cimg, ctime, ncache, base, key, tr, order, ests, buf
):
    """The servers that can host ``t`` in the base's order, written into ``order``: least key
    (the finish plus a sink's return, rounded to 1e-9 s; PEFT adds its optimistic cost), then
    less transfer, then lower index (``key`` and ``tr``: scratch). Each server's estimate goes
    to ``ests[s]`` (start, finish, pulled, t_trans, t_exec, done). Returns the count."""
    host, oct_ = st[10], st[13]
    S = host.shape[1]
    n = 0
    for s in range(S):
        if not host[t, s]:
            continue
        e = _estimate(t, s, st, sc, server, finish, iv, niv, cimg, ctime, ncache, buf)
        t_trans, done = e[3], e[5]
        ests[s, 0], ests[s, 1], ests[s, 2] = e[0], e[1], 1.0 if e[2] else 0.0
        ests[s, 3], ests[s, 4], ests[s, 5] = e[3], e[4], e[5]
        d = _round9(done)
        key[s] = d if base == 0 else _round9(d + oct_[t, s])
        tr[s] = t_trans
        # insertion into the order (stable: an equal key and transfer keeps the lower index)
        j = n
        while j > 0:
            u = order[j - 1]
            if key[u] < key[s] or (key[u] == key[s] and tr[u] <= tr[s]):
                break
            order[j] = u
            j -= 1
        order[j] = s
        n += 1
    return n


@_njit
def observe(t, st, sc, server, finish, iv, niv, cimg, ctime, ncache, now, buf, est, feat):
    """The per-server part of the env's observation for task ``t`` (its ``_observation``
    loop): ``est[s]`` is the estimate there (start, finish, t_trans, done),
    ``feat[s]`` the image held or cached (1/0), the runs not over by ``now``, the free cpu
    and memory share at ``ready`` (1 on the cloud) and the reserved cpu-seconds after
    ``now``."""
    scpu, smem, cloud = st[15], st[16], st[17]
    for s in range(len(niv)):
        e = _estimate(t, s, st, sc, server, finish, iv, niv, cimg, ctime, ncache, buf)
        est[s, 0], est[s, 1], est[s, 2], est[s, 3] = e[0], e[1], e[3], e[5]
        feat[s, 0] = 0.0 if e[2] else 1.0  # held or cached: not pulled
        q = 0
        busy = 0.0
        for k in range(niv[s]):
            b, f = iv[s, k, 0], iv[s, k, 1]
            if f > now:
                q += 1
                busy += (f - (b if b >= now else now)) * iv[s, k, 2]
        feat[s, 1] = q
        if cloud[s]:
            feat[s, 2], feat[s, 3], feat[s, 4] = 1.0, 1.0, 0.0
            continue
        c, m = _peak(s, e[6], e[6] + 1e-9, iv, niv)
        fc = 1 - c / scpu[s]
        fm = 1 - m / smem[s]
        feat[s, 2] = fc if fc > 0.0 else 0.0
        feat[s, 3] = fm if fm > 0.0 else 0.0
        feat[s, 4] = busy


@_njit
def child_done(t, st, sc, server, finish, iv, niv, cimg, ctime, ncache, est, buf, out):
    """The env's ``_child_done``: per server ``s`` the task ``t`` could go to (``est[s]``:
    :func:`observe`'s estimate there), the earliest its child of highest upward rank could
    be done (a sink: its output back at the origin) on any server that can host it, after
    the inputs of its parents placed so far."""
    (par_ptr, par_idx, ch_ptr, ch_idx, work, data, tcpu, tmem, img, sink, host, holds, rank,
     _o, speed, scpu, smem, cloud, adj, lat, _cs) = st  # fmt: skip
    arrival, bw, pull_time = sc[0], sc[1], sc[3]
    o = int(sc[5])
    S = len(niv)
    lo, hi = ch_ptr[t], ch_ptr[t + 1]
    if lo == hi:
        for s in range(S):
            out[s] = est[s, 3]
        return
    c = ch_idx[lo]  # the first of the highest rank
    for k in range(lo + 1, hi):
        if rank[ch_idx[k]] > rank[c]:
            c = ch_idx[k]
    for s in range(S):
        out[s] = np.inf
    for j in range(S):
        if not host[c, j]:
            continue
        floor = arrival
        for k in range(par_ptr[c], par_ptr[c + 1]):
            p = par_idx[k]
            if p == t or server[p] < 0:
                continue
            x = finish[p] + _trans(p, server[p], j, data, adj, lat, bw)
            if x > floor:
                floor = x
        pulled, avail = _image(c, j, holds, img, cimg, ctime, ncache)
        run = work[c] / speed[j] + (pull_time if pulled else 0.0)
        back = 0.0
        if sink[c] and j != o:
            back = data[c] * adj[j, o] / bw + lat[j, o]
        for s in range(S):
            r = est[s, 1] + _trans(t, s, j, data, adj, lat, bw)
            ready = floor if floor >= r else r
            lower = ready
            if not pulled and avail > ready:
                lower = avail
            start = lower
            if not cloud[j]:
                start = _earliest_fit(j, lower, run, tcpu[c], tmem[c], iv, niv, scpu, smem, buf)
            end = start + run
            v = end + back
            if v < out[s]:
                out[s] = v


@_njit
def _commit(t, s, start, fin, pulled, st, sc, iv, niv, cimg, ctime, ncache):
    """ServerState.commit: reserve the run and update the LRU image cache."""
    tcpu, tmem, img, cloud, cache_size = st[6], st[7], st[8], st[17], st[20]
    pull_time = sc[3]
    if not cloud[s]:
        k = niv[s]
        iv[s, k, 0] = start
        iv[s, k, 1] = fin
        iv[s, k, 2] = tcpu[t]
        iv[s, k, 3] = tmem[t]
        niv[s] = k + 1
    if pulled:
        k = ncache[s]
        cimg[s, k] = img[t]
        ctime[s, k] = start + pull_time
        k += 1
        if cache_size[s] >= 0 and k > cache_size[s]:  # evict the least recently used
            for c in range(1, k):
                cimg[s, c - 1] = cimg[s, c]
                ctime[s, c - 1] = ctime[s, c]
            k -= 1
        ncache[s] = k
    else:
        k = ncache[s]
        for c in range(k):
            if cimg[s, c] == img[t]:  # most recently used: to the end
                im, tm = cimg[s, c], ctime[s, c]
                for d in range(c + 1, k):
                    cimg[s, d - 1] = cimg[s, d]
                    ctime[s, d - 1] = ctime[s, d]
                cimg[s, k - 1] = im
                ctime[s, k - 1] = tm
                break


@_njit
def play_workflow(
    st, sc, t0, first, server, finish, missing, ready, projected,
    iv, niv, cimg, ctime, ncache, base, reward, max_steps, scratch, rewards, nr, picker,
):  # fmt: skip
    """Play one workflow in place from task ``t0``: ``first`` there (negative: the base's
    action), then the base, until the workflow ends or ``max_steps`` rewards are in
    ``rewards`` (``nr`` already there). Returns ``(nr, projected, end)``: the rewards written
    so far, the projected finish, and the time every sink's output is back at the origin
    (NaN when the workflow did not finish); ``nr`` -1: the random stream ran out.
    ``picker``: the task order (:func:`patent_task`'s state; its first entry 0: by rank)."""
    ch_ptr, ch_idx, sink, rank, img, holds = st[2], st[3], st[9], st[12], st[8], st[11]
    kind, cand, ncand, prev, ubuf, upos, pool = picker
    data, adj, lat = st[5], st[18], st[19]
    arrival, bw, time_unit, o = sc[0], sc[1], sc[4], int(sc[5])
    key, tr, order, ests, buf = scratch
    t = t0
    a = first
    while True:
        base_order(
            t, st, sc, server, finish, iv, niv, cimg, ctime, ncache, base, key, tr, order,
            ests, buf,
        )  # fmt: skip
        if a < 0:
            a = order[0]
        start, fin, pulled = ests[a, 0], ests[a, 1], ests[a, 2] > 0.0
        t_trans, t_exec, done = ests[a, 3], ests[a, 4], ests[a, 5]
        _commit(t, a, start, fin, pulled, st, sc, iv, niv, cimg, ctime, ncache)
        server[t] = a
        finish[t] = fin
        if reward == 1:
            cost = t_trans + t_exec
        else:
            cost = done - projected if done - projected > 0.0 else 0.0
        if done > projected:
            projected = done
        rewards[nr] = -cost / time_unit
        nr += 1
        ready[t] = False
        if kind == 1:  # the ready list in the env's order: t out, its freed children in
            j = 0
            while cand[j] != t:
                j += 1
            for q in range(j + 1, ncand[0]):
                cand[q - 1] = cand[q]
            ncand[0] -= 1
        for k in range(ch_ptr[t], ch_ptr[t + 1]):
            c = ch_idx[k]
            missing[c] -= 1
            if missing[c] == 0:
                ready[c] = True
                if kind == 1:
                    cand[ncand[0]] = c
                    ncand[0] += 1
        prev[0] = a
        if kind == 0:  # highest upward rank among the ready ones, ties to the lower index
            t = next_task(ready, rank)
        else:
            t = patent_task(cand, ncand, prev, holds, img, cimg, ncache, ubuf, upos, pool)
            if t == -2:
                return -1, projected, np.nan
        if t < 0:
            break
        if nr >= max_steps:
            return nr, projected, np.nan
        a = -1
    # OffloadInstance.completion_time: the last sink's output back at the origin
    end = arrival
    first_sink = True
    for u in range(len(sink)):
        if sink[u]:
            x = finish[u] + (0.0 if server[u] == o else data[u] * adj[server[u], o] / bw
                             + lat[server[u], o])  # fmt: skip
            if first_sink or x > end:
                end = x
                first_sink = False
    return nr, projected, end


@_njit
def patent_task(cand, ncand, prev, holds, img, cimg, ncache, ubuf, upos, pool):
    """The env's ``_pick_task`` in the patent's order: among the ready tasks (``cand``, in
    the env's list order) those whose image is usable on the last server (``prev``; -1:
    none), or all when none is, and one of them drawn as ``np_random.integers(len(pool))``
    draws it: Lemire's bounded method on the generator's 32-bit outputs, ``ubuf`` from
    position ``upos`` (numpy's ``random_bounded_uint64_fill`` for ranges below 2**32).
    Returns -1 with no ready task, -2 when ``ubuf`` runs out."""
    nc = ncand[0]
    if nc == 0:
        return -1
    p = prev[0]
    m = 0
    if p >= 0:
        for i in range(nc):
            t = cand[i]
            ok = holds[t, p]
            if not ok:
                for c in range(ncache[p]):
                    if cimg[p, c] == img[t]:
                        ok = True
                        break
            if ok:
                pool[m] = t
                m += 1
    if m == 0:
        for i in range(nc):
            pool[i] = cand[i]
        m = nc
    if m == 1:
        return pool[0]
    pos = upos[0]
    if pos >= len(ubuf):
        return -2
    x = ubuf[pos] * m
    pos += 1
    left = x & 0xFFFFFFFF
    if left < m:
        threshold = (0xFFFFFFFF - (m - 1)) % m
        while left < threshold:
            if pos >= len(ubuf):
                return -2
            x = ubuf[pos] * m
            pos += 1
            left = x & 0xFFFFFFFF
    upos[0] = pos
    return pool[x >> 32]


@_njit
def next_task(ready, rank):
    """The ready task of highest upward rank, ties to the lower index (-1: none)."""
    t = -1
    for u in range(len(ready)):
        if ready[u] and (t < 0 or rank[u] > rank[t]):
            t = u
    return t


@_njit
def prune(iv, niv, now):
    """ServerState.prune on every server: forget the intervals that ended by ``now``,
    keeping the others in their order."""
    for s in range(len(niv)):
        k = 0
        for j in range(niv[s]):
            if iv[s, j, 1] > now:
                for q in range(4):
                    iv[s, k, q] = iv[s, j, q]
                k += 1
        niv[s] = k


@_njit
def copy_state(src, dst):
    """The rollout state ``src`` (server, finish, missing, ready, iv, niv, cimg, ctime,
    ncache) into ``dst``, by hand: slice assignment would allocate."""
    server0, finish0, missing0, ready0, iv0, niv0, cimg0, ctime0, ncache0 = src
    server, finish, missing, ready, iv, niv, cimg, ctime, ncache = dst
    for i in range(len(server0)):
        server[i] = server0[i]
        finish[i] = finish0[i]
        missing[i] = missing0[i]
        ready[i] = ready0[i]
    for i in range(iv0.shape[0]):
        niv[i] = niv0[i]
        ncache[i] = ncache0[i]
        for j in range(niv0[i]):
            for q in range(4):
                iv[i, j, q] = iv0[i, j, q]
        for j in range(ncache0[i]):
            cimg[i, j] = cimg0[i, j]
            ctime[i, j] = ctime0[i, j]


@_njit
def rollout_returns(
    st, sc, t0, cands, state, projected, base, reward, max_steps, work, scratch, rewards, out,
    picker,
):  # fmt: skip
    """Each candidate's rollout return, into ``out``: from ``state`` (server, finish,
    missing, ready, iv, niv, cimg, ctime, ncache; copied into ``work`` for each), place
    ``t0`` on it, then the base to the end of the workflow (or ``max_steps`` decisions); the
    first reward plus the rest summed in order, as the search sums them."""
    for ci in range(len(cands)):
        copy_state(state, work)
        server, finish, missing, ready, iv, niv, cimg, ctime, ncache = work
        nr, _p, _e = play_workflow(
            st, sc, t0, cands[ci], server, finish, missing, ready, projected, iv, niv, cimg,
            ctime, ncache, base, reward, max_steps, scratch, rewards, 0, picker,
        )  # fmt: skip
        rest = 0.0
        for k in range(1, nr):
            rest += rewards[k]
        out[ci] = rewards[0] + rest
