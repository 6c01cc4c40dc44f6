"""ServerlessPlacement-v0 batched: ``B`` sub-envs in ``(B, ...)`` numpy arrays, stepped together.

:class:`ServerlessPlacementBatch` is the simulation core: the model of
:class:`~rlsched.envs.serverless_placement.ServerlessPlacementEnv` (placement, response time,
cold starts, billing, releases, queueing, rewards, metrics) with every per-node, per-instance
and per-type quantity stored with a leading env axis, so that one step of all ``B`` sub-envs is
one pass of array operations whatever ``B``. :class:`ServerlessPlacementVectorEnv` is its
:class:`gymnasium.vector.VectorEnv` (same-step autoreset).

**Equal to the single env, exactly.** Every quantity is computed with the same IEEE double
operations, in the same order, as the single env's scalar code (numpy's elementwise float64
arithmetic is Python's), and finished instances are released in an order that gives the same
floating-point results: the single env pops its finish heap in (time, placement) order and
clamps a node's requests and usage at 0 after each release; the batch releases every due event
at once, subtracting in that order per node (``np.subtract.at`` applies repeated indices in
sequence) and clamping once, which gives the same numbers because nothing subtracted is
negative. ``tests/vector`` checks observations, rewards, terminations, masks and episode
metrics for equality step by step.

**Layout** (``B`` envs, ``N`` nodes, ``L = episode_length``, ``T`` function types, ``F``
slots). Per-env scalars are ``(B,)``. Node state is one float64 matrix ``(B * N, 18)`` (row
``b * N + node``: requests, usage, free cpu / memory, billing period, and the constants a step
needs), so that the chosen node of every env is one gather and one scatter. Instances are one
float64 matrix ``(B * (L + 1), 15)`` and one int matrix (row ``b * (L + 1) + i``; the padding
row keeps ``i == L`` inside the env's rows), with the per-instance constants of a step
(cold-start cost, cost normaliser, SLO bound) computed at reset. Finish times are
``(B, L + 1)`` by instance (``inf`` unless running), so a placement is one scatter and the due
releases are one comparison. Warm containers are ``(B * T, N)``.

Only the per-episode set-up (drawing the workload, once per ``episode_length`` steps per env)
loops over envs; it calls the single env's public ``draw_episode``.

**One model.** The observation layout and builder, the per-instance constants (cold-start
time, cost normaliser, SLO bound), the metrics and the reward formulas (scalar and batched,
registered together) come from :mod:`rlsched.envs.serverless_model`, which the single env uses
too; what is written here is the array form of the state update (placement, billing, releases,
queueing), operation for operation the single env's scalar code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from rlsched.core.cluster import Cluster
from rlsched.envs import serverless_model as model
from rlsched.envs.serverless_model import (
    BILLED,
    CAP,
    DEPLOYED,
    I32_MAX,
    NB_WIDTH,
    PRICE,
    UTIL,
    WARM,
)
from rlsched.envs.serverless_placement import ServerlessPlacementEnv

# node matrix columns: requests (0:2), usage (2:6), free cpu (-inf when inactive) and memory
# (6:8), billing period (8 billed until, 9 period start, 10 closed cost), constants: 1 /
# capacity (11:15), $/s (15), cpu capacity (-inf when inactive) and memory capacity (16:18).
# "Billed until" starts at 0, not the single env's -inf: for clocks >= 0 every result is the
# same (the first placement bills from now either way; the closed cost adds rate * 0).
_REQ, _USE, _FREE = slice(0, 2), slice(2, 6), slice(6, 8)
_UNTIL, _PSTART, _CLOSED, _INV, _RATE, _CAPF = 8, 9, 10, slice(11, 15), 15, slice(16, 18)
_NODE_COLS = 18
# instance matrix columns: what placing adds to node columns 0:8 (cpu, mem, 4 usages, -cpu,
# -mem), exec time, arrival, cold-start cost, cost normaliser, SLO bound, cpu and memory
# request less the admission tolerance
_DELTA, _EXEC, _ARR, _COLD, _CREF, _SLO, _FIT = slice(0, 8), 8, 9, 10, 11, 12, slice(13, 15)
_INST_COLS = 15
# instance int columns: env * T + type (rart entry), that * N (warm row start), env * F + slot
# (in-flight counter), requests, type
_RT, _WT, _SF, _NREQ, _TYPE = 0, 1, 2, 3, 4
_INF = float("inf")
# utilisations whose maximum (with 1) is the sharing slowdown: cpu, network, disk
_SHARE = np.array([True, False, True, True])


@dataclass
class BatchStep:
    """What one step of all sub-envs produced; arrays of shape ``(B,)``.

    The per-step fields (``node`` ... ``slo_violated``) are meaningful where ``placed`` is True
    (the env placed its instance this step); ``invalid`` marks envs whose action was invalid;
    ``time`` is each env's clock when its action was taken.
    """

    reward: np.ndarray
    done: np.ndarray
    placed: np.ndarray
    invalid: np.ndarray
    node: np.ndarray
    rfrt: np.ndarray
    response_time: np.ndarray
    cold_start: np.ndarray
    cost_delta: np.ndarray
    slo_violated: np.ndarray
    time: np.ndarray


class ServerlessPlacementBatch:
    """``num_envs`` ServerlessPlacement-v0 sub-envs with array state; see the module docstring.

    Takes the single env's arguments (validated by it); the dataset must be a registry name, a
    :class:`~rlsched.data.Dataset`, a list of workflows or a list of instance dicts (replayed
    from its start every episode, as by the single env) with arrival times >= 0; an instance
    generator is one stream and cannot be shared by several sub-envs. ``template`` is a single
    env holding the dataset and the fixed cluster: changes to ``template.cluster`` (e.g.
    ``active``) take effect at each sub-env's next reset, as they do for the single env at its
    reset.
    """

    def __init__(self, num_envs: int, **env_kwargs: Any) -> None:
        if num_envs < 1:
            raise ValueError("num_envs must be >= 1")
        tpl = ServerlessPlacementEnv(**env_kwargs)
        if tpl.streams_instances:
            raise ValueError(
                "the batched env needs a dataset (registry name, Dataset, workflows or a list of "
                "instance dicts), not an instance generator: one stream cannot feed several "
                "sub-envs"
            )
        if tpl.node_keepalive < 0:  # billing starts "billed until 0" (see _UNTIL)
            raise ValueError("the batched env needs node_keepalive >= 0")
        self.template = tpl
        self.num_envs = B = int(num_envs)
        self.num_nodes = N = tpl.num_nodes
        self.num_functions = F = tpl.num_functions
        self.episode_length = L = tpl.episode_length
        self._L1 = L1 = L + 1
        w = tpl.weights
        self._w = w
        self._reward = tpl.reward_formula
        self._reward_batched = (
            None if tpl.reward_formula.batched is None else tpl.reward_formula.batched(w)
        )
        self._penalty = (
            None if tpl.invalid_action_penalty is None else float(tpl.invalid_action_penalty)
        )
        self._kvec = np.array([tpl.k_cpu, tpl.k_mem])
        self._keeps = np.array([tpl.warm_keepalive, tpl.node_keepalive])

        self._all = np.arange(B)
        self._node_base = self._all * N
        self._inst_base = self._all * L1
        # per env
        self._rngs: list[np.random.Generator | None] = [None] * B
        self._now = np.zeros(B)
        self._i = np.zeros(B, np.int64)
        self._n = np.zeros(B, np.int64)
        self._unplaceable = np.zeros(B, np.int64)
        self._invalid = np.zeros(B, np.int64)
        self._slo_count = np.zeros(B, np.int64)
        self._cold_count = np.zeros(B, np.int64)
        self._cref_pos = np.zeros(B, bool)  # every cost normaliser of the episode is > 0
        self._all_cref_pos = False
        self._done = np.ones(B, bool)
        self._n_done = B
        # per node
        self._node = np.zeros((B * N, _NODE_COLS))
        self._node3 = node3 = self._node.reshape(B, N, _NODE_COLS)
        self._fit_cpu = node3[:, :, 6]  # (B, N) views for the masks and the observation
        self._free_mem = node3[:, :, 7]
        self._until = node3[:, :, _UNTIL]
        self._active8 = np.ones((B, N), np.int8)
        self._nb = np.zeros((B, N, NB_WIDTH), np.float32)
        self._mask = np.ones((B, N), bool)
        self._mask_f = self._mask.reshape(-1)
        self._tmp_bn = np.zeros((B, N))
        # per instance
        self._inst = np.zeros((B * L1, _INST_COLS))
        self._inst_i = np.zeros((B * L1, 5), np.int64)
        self._inst32 = np.zeros((B * L1, 5), np.float32)
        self._nreq32 = np.zeros((B * L1, 1), np.int32)
        self._node_of = np.full(B * L1, -1, np.int64)
        self._rfrt_hist = np.zeros(B * L1)
        self._resp_hist = np.zeros(B * L1)
        self._fin2 = np.full((B, L1), _INF)  # finish time of running instances
        self._fin = self._fin2.reshape(-1)
        self._cols6 = np.arange(6)
        self._nonneg = True  # every instance's requests and usages are >= 0
        # the current instance of each env (set by _advance): row, float and int columns
        self._cur_fi = self._inst_base.copy()
        self._cur_inst = np.zeros((B, _INST_COLS))
        self._cur_ii = np.zeros((B, 5), np.int64)
        # per type and slot
        self._T = T = max(1, len(tpl.type_names))
        self._warm = np.full((B * T, N), -np.inf)
        self._warm_f = self._warm.reshape(-1)
        self._rart = np.ones(B * T)
        self._in_flight2 = np.zeros((B, F), np.int64)
        self._in_flight = self._in_flight2.reshape(-1)

    # ------------------------------------------------------------------ resets
    def reset(self, envs: np.ndarray | list[int], seeds: list[int | None] | None = None) -> None:
        """Start a new episode in each of ``envs``; ``seeds[k]`` reseeds env ``envs[k]`` (None:
        continue its random stream, as the single env's ``reset()`` without a seed)."""
        envs = [int(b) for b in envs]
        seeds = seeds if seeds is not None else [None] * len(envs)
        for b, s in zip(envs, seeds, strict=True):
            self._reset_one(b, s)
        self._all_cref_pos = bool(self._cref_pos.all())
        self._advance(np.asarray(envs, dtype=np.int64))
        self._n_done = int(np.count_nonzero(self._done))

    def _ensure_types(self, n_types: int) -> None:
        """Grow the per-type arrays to ``n_types`` (renumbering every env's rows)."""
        if n_types <= self._T:
            return
        B, N, T = self.num_envs, self.num_nodes, self._T
        warm = np.full((B, n_types, N), -np.inf)
        warm[:, :T] = self._warm.reshape(B, T, N)
        rart = np.ones((B, n_types))
        rart[:, :T] = self._rart.reshape(B, T)
        self._warm = warm.reshape(B * n_types, N)
        self._warm_f = self._warm.reshape(-1)
        self._rart = rart.reshape(-1)
        self._T = n_types
        env = np.repeat(self._all, self._L1)
        self._inst_i[:, _RT] = env * n_types + self._inst_i[:, _TYPE]
        self._inst_i[:, _WT] = self._inst_i[:, _RT] * N
        self._cur_ii = self._inst_i[self._cur_fi]

    def _reset_one(self, b: int, seed: int | None) -> None:
        tpl = self.template
        N, L, L1, F = self.num_nodes, self.episode_length, self._L1, self.num_functions
        # the single env's reset, in its order: seed, (redraw the cluster), draw the workload
        if seed is not None or self._rngs[b] is None:
            self._rngs[b], _ = seeding.np_random(seed)
        rng = self._rngs[b]
        assert rng is not None
        cluster = Cluster.sample(N, rng) if tpl.randomize_cluster else tpl.cluster
        cap = cluster.capacity
        active = np.asarray(cluster.active, bool)
        price = np.asarray(cluster.price, dtype=np.float64)
        node = self._node[b * N : (b + 1) * N]
        node[:] = 0.0
        node[:, 6] = np.where(active, cap[:, 0], -np.inf)
        node[:, 7] = cap[:, 1]
        node[:, _INV] = 1.0 / cap
        node[:, _RATE] = price / 3600.0
        node[:, 16] = node[:, 6]
        node[:, 17] = cap[:, 1]
        max_rate = float(cluster.price.max()) / 3600.0
        self._active8[b] = active
        nb = self._nb[b]
        nb[:] = 0.0
        nb[:, CAP] = cap[:, :2]
        nb[:, PRICE] = cluster.price

        ep = tpl.draw_episode(rng, cluster)
        n = len(ep)
        if n > L:  # the drawing code never returns more than episode_length instances
            raise AssertionError(f"episode of {n} instances > episode_length {L}")
        if n and ep.arrival_time[0] < 0:  # sorted by arrival; the billing needs clocks >= 0
            raise ValueError("the batched env needs arrival times >= 0")
        n_types = max(len(ep.type_names), int(ep.type.max()) + 1 if n else 1)
        self._ensure_types(n_types)
        T = self._T
        rows = slice(b * L1, (b + 1) * L1)
        inst = self._inst[rows]
        inst[:] = 0.0
        inst[:, _EXEC] = 1.0
        cpu, mem = ep.cpu_request, ep.mem_request
        inst[:n, 0] = cpu
        inst[:n, 1] = mem
        inst[:n, 2] = ep.cpu_usage
        inst[:n, 3] = mem
        inst[:n, 4] = ep.io_network
        inst[:n, 5] = ep.io_disk
        inst[:n, 6] = -cpu
        inst[:n, 7] = -mem
        exec_t = ep.exec_time
        inst[:n, _EXEC] = exec_t
        inst[:n, _ARR] = ep.arrival_time
        inst[:n, _COLD] = model.cold_start_time(tpl.cold_start, tpl.cold_start_per_gb, mem)
        cref = model.cost_reference(max_rate, exec_t, self._w.rfrt_max, tpl.node_keepalive)
        inst[:n, _CREF] = cref
        inst[:n, _SLO] = model.slo_bound(tpl.slo_factor, exec_t)
        inst[:n, 13] = cpu - 1e-9
        inst[:n, 14] = mem - 1e-9
        self._cref_pos[b] = bool(np.all(cref > 0))
        if inst[:n, 0:6].min(initial=0.0) < 0:
            self._nonneg = False
        ii = self._inst_i[rows]
        ii[:] = 0
        ii[:n, _TYPE] = ep.type
        ii[:, _RT] = b * T + ii[:, _TYPE]
        ii[:, _WT] = ii[:, _RT] * N
        ii[:, _SF] = b * F + np.minimum(ii[:, _TYPE], F - 1)
        ii[:n, _NREQ] = ep.requests
        i32 = self._inst32[rows]
        i32[:] = 0.0
        i32[:n] = np.column_stack([cpu, mem, ep.io_network, ep.io_disk, exec_t]).astype(np.float32)
        self._nreq32[rows] = 0
        self._nreq32[b * L1 : b * L1 + n, 0] = np.minimum(ep.requests, I32_MAX).astype(np.int32)
        self._warm[b * T : (b + 1) * T] = -np.inf
        self._rart[b * T : (b + 1) * T] = 1.0
        self._in_flight[b * F : (b + 1) * F] = 0
        self._node_of[rows] = -1
        self._fin2[b] = _INF
        self._now[b] = 0.0
        self._i[b] = 0
        self._n[b] = n
        self._unplaceable[b] = 0
        self._invalid[b] = 0
        self._slo_count[b] = 0
        self._cold_count[b] = 0
        self._done[b] = False

    # ------------------------------------------------------------------ stepping
    def step(self, actions: np.ndarray) -> BatchStep:
        """Place each env's current instance on ``actions[b]``; envs whose episode ends stay
        done (observation and metrics readable) until :meth:`reset`."""
        B, N = self.num_envs, self.num_nodes
        if self._n_done:
            raise RuntimeError(
                f"step() on finished sub-envs {np.flatnonzero(self._done).tolist()}; reset them"
            )
        a = np.asarray(actions, dtype=np.int64).reshape(B)
        in_range = a.view(np.uint64) < N  # negative actions wrap to huge values
        fa = self._node_base + a
        valid = self._mask_f.take(fa, mode="clip")
        valid &= in_range
        time = self._now.copy()
        if np.count_nonzero(valid) == B:
            reward, rfrt, rt, cold, cost, slo = self._place(self._all, a, fa, True)
            res = BatchStep(reward, self._done, valid, ~valid, a, rfrt, rt, cold, cost, slo, time)
            self._advance(self._all, True)
        else:
            reward = np.zeros(B)
            z, no = np.zeros(B), np.zeros(B, bool)
            res = BatchStep(
                reward=reward,
                done=self._done,
                placed=valid,
                invalid=~valid,
                node=a,
                rfrt=z,
                response_time=z.copy(),
                cold_start=no,
                cost_delta=z.copy(),
                slo_violated=no.copy(),
                time=time,
            )
            e = np.flatnonzero(valid)
            if e.size:
                out = self._place(e, a[e], fa[e], False)
                reward[e] = out[0]
                res.rfrt[e], res.response_time[e], res.cold_start[e] = out[1:4]
                res.cost_delta[e], res.slo_violated[e] = out[4:6]
            bad = np.flatnonzero(~valid)
            self._invalid[bad] += 1
            if self._penalty is None:  # instances left: not placed yet
                placed = self._i[bad] - self._unplaceable[bad]
                pen = (self._n[bad] - placed).astype(np.float64)
            else:
                pen = np.full(bad.size, self._penalty)
            reward[bad] = -pen
            self._done[bad] = True
            if e.size:
                self._advance(e)
        done = self._done.copy()
        res.done = done
        self._n_done = int(np.count_nonzero(done))
        return res

    def _place(
        self, e: np.ndarray, a: np.ndarray, fa: np.ndarray, full: bool
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Place the current instance of each env ``e[k]`` on node ``a[k]`` (row ``fa[k]``);
        ``full``: ``e`` is every env, in order. The single env's ``step`` and
        ``Cluster.place`` / ``Billing.extend``, operation for operation. Returns the reward,
        rfrt, response time, cold start, cost delta and SLO violation of each env ``e[k]``."""
        if full:
            now, fi, inst, ii = self._now, self._cur_fi, self._cur_inst, self._cur_ii
        else:
            now, fi, inst, ii = self._now[e], self._cur_fi[e], self._cur_inst[e], self._cur_ii[e]
        node = self._node
        x = node[fa]
        x[:, _DELTA] += inst[:, _DELTA]
        util = x[:, _USE] * x[:, _INV]
        # response time: (1 + k_cpu u_cpu'^2 + k_mem u_mem'^2) * max(1, u_cpu, u_net, u_disk)
        share = np.maximum.reduce(util, axis=1, initial=1.0, where=_SHARE)
        m2 = np.minimum(util[:, 0:2], 1.0)
        k2 = self._kvec * m2
        k2 *= m2
        slowdown = 1.0 + k2[:, 0]
        slowdown += k2[:, 1]
        slowdown *= share
        fw = ii[:, _WT] + a
        warm_f = self._warm_f
        warm = warm_f[fw]
        cold = warm < now
        exec_t = inst[:, _EXEC]
        run = inst[:, _COLD] * cold  # the cold start where cold, else exactly 0
        run += exec_t * slowdown
        finish = now + run
        response = now - inst[:, _ARR]
        response += run
        rfrt = response / exec_t
        keeps = finish[:, None] + self._keeps  # warm until, billed until
        keep = keeps[:, 0]
        np.maximum(warm, keep, out=keep)
        warm_f[fw] = keep
        # Billing.extend
        until = x[:, _UNTIL]
        rate = x[:, _RATE]
        end = keeps[:, 1]
        idle = until < now
        ext = end > until
        ext |= idle
        cost = end - np.where(idle, now, until)
        cost *= rate
        cost_delta = np.where(ext, cost, 0.0)
        np.add(x[:, _CLOSED], rate * (until - x[:, _PSTART]), out=x[:, _CLOSED], where=idle)
        np.copyto(x[:, _PSTART], now, where=idle)
        np.copyto(x[:, _UNTIL], end, where=ext)
        node[fa] = x
        slo = response > inst[:, _SLO]
        # the reward: the batched form where every cost normaliser is positive, else the
        # scalar form per env (model.Reward)
        cost_ref = inst[:, _CREF]
        if self._reward_batched is not None and (
            self._all_cref_pos if full else bool(self._cref_pos[e].all())
        ):
            reward = self._reward_batched(rfrt, cost_delta, cost_ref, slo)
        else:
            reward = self._reward.over(self._w, rfrt, cost_delta, cost_ref, slo)
        # bookkeeping: the finish event, in-flight invocations, history, type's RFRT average
        self._fin[fi] = finish
        sf = ii[:, _SF]
        self._in_flight[sf] += ii[:, _NREQ]
        self._node_of[fi] = a
        self._rfrt_hist[fi] = rfrt
        self._resp_hist[fi] = response
        rt = ii[:, _RT]
        rart = self._rart[rt]
        rart *= 0.7
        rart += 0.3 * rfrt
        self._rart[rt] = rart
        if full:
            self._slo_count += slo
            self._cold_count += cold
            self._i += 1
        else:
            self._slo_count[e] += slo
            self._cold_count[e] += cold
            self._i[e] += 1
        return reward, rfrt, response, cold, cost_delta, slo

    def _release(self, rows: np.ndarray, j: np.ndarray) -> None:
        """Release instance ``j[k]`` of env ``rows[k]`` (all due): nodes' requests and usage,
        in-flight counts.

        The single env pops them in (finish time, placement) order and clamps each node's
        requests and usage at 0 (below 1e-9) after each subtraction. Here the subtractions
        run in that order per node (``np.subtract.at`` applies repeated indices in sequence)
        and the clamp once at the end: the same result, since the amounts subtracted are
        never negative (a value clamped mid-way could only have gone lower). With negative
        amounts (only possible in injected instance lists) the events go in rounds of one per
        node instead."""
        if rows.size == 1:
            self._release_distinct(rows, j)
            return
        if not self._nonneg:
            for r in self._release_rounds(rows, j):
                self._release_distinct(rows[r], j[r])
            return
        order = np.lexsort((j, self._fin2[rows, j]))
        rows, j = rows[order], j[order]
        fi = self._inst_base[rows] + j
        fa = self._node_base[rows] + self._node_of[fi]
        node = self._node
        flat = (fa * _NODE_COLS)[:, None] + self._cols6
        np.subtract.at(node.reshape(-1), flat.reshape(-1), self._inst[fi, 0:6].ravel())
        x = node[fa]
        y = x[:, 0:6]
        np.copyto(y, 0.0, where=y <= 1e-9)
        np.subtract(x[:, _CAPF], y[:, _REQ], out=x[:, _FREE])
        node[fa] = x  # repeated rows write the same final values
        ii = self._inst_i[fi]
        np.subtract.at(self._in_flight, ii[:, _SF], ii[:, _NREQ])
        self._fin[fi] = _INF

    def _release_rounds(self, rows: np.ndarray, j: np.ndarray) -> list[np.ndarray]:
        """Split events into rounds with at most one event per node, each node's events in
        heap order (finish time, then placement)."""
        fa = self._node_base[rows] + self._node_of[self._inst_base[rows] + j]
        order = np.lexsort((j, self._fin2[rows, j], fa))
        fa_o = fa[order]
        first = np.ones(fa.size, bool)
        first[1:] = fa_o[1:] != fa_o[:-1]
        pos = np.arange(fa.size)
        rank = pos - np.maximum.accumulate(np.where(first, pos, 0))
        return [order[rank == r] for r in range(int(rank.max()) + 1)]

    def _release_distinct(self, rows: np.ndarray, j: np.ndarray) -> None:
        """``Cluster.release`` of instance ``j[k]`` of env ``rows[k]``, all on distinct nodes."""
        fi = self._inst_base[rows] + j
        fa = self._node_base[rows] + self._node_of[fi]
        x = self._node[fa]
        y = x[:, 0:6]
        y -= self._inst[fi, 0:6]
        np.copyto(y, 0.0, where=y <= 1e-9)
        np.subtract(x[:, _CAPF], y[:, _REQ], out=x[:, _FREE])
        self._node[fa] = x
        ii = self._inst_i[fi]
        np.subtract.at(self._in_flight, ii[:, _SF], ii[:, _NREQ])
        self._fin[fi] = _INF

    def _advance(self, e: np.ndarray, full: bool = False) -> None:
        """The single env's ``_advance`` for envs ``e``: move each clock to its next arrival,
        release what finished, wait for releases while nothing fits, skip unplaceable
        instances; sets the masks and current instances, or ``done`` when the episode is
        over. ``full``: ``e`` is every env, in order."""
        while e.size:
            # n <= episode_length and placed <= i, so "i < n and placed < L" is "i < n"
            i = self._i if full else self._i[e]
            over = i >= (self._n if full else self._n[e])
            if np.count_nonzero(over):
                self._done[e[over]] = True
                keep = ~over
                e, i, full = e[keep], i[keep], False
                if not e.size:
                    return
            fi = self._inst_base[e] + i
            inst = self._inst[fi]
            now = np.maximum(self._now if full else self._now[e], inst[:, _ARR])
            due = (self._fin2 if full else self._fin2[e]) <= now[:, None]
            if np.count_nonzero(due):
                r, j = due.nonzero()
                self._release(e[r], j)
            fit = inst[:, _FIT]
            cpu, mem = fit[:, 0:1], fit[:, 1:2]
            if full:
                mask = self._fit_cpu >= cpu
                mask &= self._free_mem >= mem
            else:
                mask = self._fit_cpu[e] >= cpu
                mask &= self._free_mem[e] >= mem
            first = mask.argmax(axis=1)
            ok = mask.reshape(-1)[self._node_base[: e.size] + first]
            if np.count_nonzero(ok) != e.size:
                # wait: release the next finish (ties: the earliest placed, as the single
                # env's heap; argmin takes the first minimum) until the instance fits or
                # nothing runs
                w = np.flatnonzero(~ok)
                while w.size:
                    ew = e[w]
                    fin = self._fin2[ew]
                    j = fin.argmin(axis=1)
                    t = fin[np.arange(w.size), j]
                    running = t < _INF
                    if np.count_nonzero(running) != w.size:
                        w, ew, j, t = w[running], ew[running], j[running], t[running]
                        if not w.size:
                            break
                    np.maximum(now[w], t, out=t)
                    now[w] = t
                    self._release_distinct(ew, j)
                    mw = self._fit_cpu[ew] >= cpu[w]
                    mw &= self._free_mem[ew] >= mem[w]
                    mask[w] = mw
                    okw = mw.any(axis=1)
                    ok[w] = okw
                    w = w[~okw]
            ii = self._inst_i[fi]
            if full:
                self._now[:] = now
            else:
                self._now[e] = now
            if np.count_nonzero(ok) == e.size:
                if full:
                    self._mask[:] = mask
                    self._cur_fi, self._cur_inst, self._cur_ii = fi, inst, ii
                else:
                    self._mask[e] = mask
                    self._cur_fi[e], self._cur_inst[e], self._cur_ii[e] = fi, inst, ii
                return
            eo = e[ok]
            self._mask[eo] = mask[ok]
            self._cur_fi[eo], self._cur_inst[eo], self._cur_ii[eo] = fi[ok], inst[ok], ii[ok]
            e, full = e[~ok], False  # larger than every active node: it can never run here
            self._unplaceable[e] += 1
            self._i[e] += 1

    # ------------------------------------------------------------------ reading the state
    def observe(self, envs: np.ndarray | None = None) -> dict[str, np.ndarray]:
        """The observations of all envs (or of ``envs``), batched on a leading axis; every
        array is new (never a view of the state)."""
        if envs is None:
            nb, now, idx, node = self._nb, self._now, self._all, self._node3
            fi, rt = self._cur_fi, self._cur_ii[:, _RT]
            tmp = self._tmp_bn
            np.subtract(self._until, now[:, None], out=tmp)
            done_n = self._n_done
        else:
            idx = np.asarray(envs, dtype=np.int64)
            nb, now, node = self._nb[idx], self._now[idx], self._node3[idx]
            fi, rt = self._cur_fi[idx], self._cur_ii[idx, _RT]
            tmp = self._until[idx]
            np.subtract(tmp, now[:, None], out=tmp)
            done_n = 1
        np.maximum(tmp, 0.0, out=nb[:, :, BILLED], casting="same_kind")
        # the single env keeps these rows up to date as nodes change: the same values
        np.multiply(node[:, :, _USE], node[:, :, _INV], out=nb[:, :, UTIL], casting="same_kind")
        nb[:, :, DEPLOYED] = node[:, :, _REQ]
        np.greater_equal(self._warm[rt], now[:, None], out=nb[:, :, WARM], casting="unsafe")
        inst = self._inst32[fi]
        nreq = self._nreq32[fi]
        rart = self._rart[rt].astype(np.float32)[:, None]
        if done_n:
            done = self._done[idx]
            nb[done, :, WARM] = 0.0
            inst[done] = 0.0
            nreq[done] = 0
            rart[done] = 1.0
        if envs is None:
            c, active, in_flight = nb.copy(), self._active8.copy(), self._in_flight2
        else:
            c, active, in_flight = nb, self._active8[idx], self._in_flight2[idx]
        return model.observation(c, active, inst, nreq, rart, in_flight)

    def action_masks(self) -> np.ndarray:
        """``(B, N)`` valid nodes per env (all True for an env whose episode is over)."""
        m = self._mask.copy()
        if self._n_done:
            m[self._done] = True
        return m

    @property
    def done(self) -> np.ndarray:
        return self._done.copy()

    @property
    def now(self) -> np.ndarray:
        return self._now.copy()

    def committed_cost(self, b: int) -> float:
        """Env ``b``'s :meth:`~rlsched.core.cluster.Billing.committed_cost`, same arithmetic."""
        node = self._node[b * self.num_nodes : (b + 1) * self.num_nodes]
        open_ = node[:, _UNTIL] - node[:, _PSTART]  # 0 where never billed, as the single env
        closed = np.ascontiguousarray(node[:, _CLOSED])
        return float(closed.sum() + (node[:, _RATE] * open_).sum())

    def metrics(self, b: int) -> dict[str, float]:
        """Env ``b``'s episode so far, as the single env's ``metrics()``."""
        rows = slice(b * self._L1, (b + 1) * self._L1)
        placed_at = self._node_of[rows] >= 0  # placement order is instance order
        return model.episode_metrics(
            self._rfrt_hist[rows][placed_at],
            self._resp_hist[rows][placed_at],
            self.committed_cost(b),
            int(self._slo_count[b]),
            int(self._cold_count[b]),
            int(self._invalid[b]),
            int(self._unplaceable[b]),
            float(self._now[b]),
        )


class ServerlessPlacementVectorEnv(VectorEnv):
    """``num_envs`` ServerlessPlacement-v0 envs as one Gymnasium vector env (array-stepped).

    Autoreset mode: **same-step** (``metadata["autoreset_mode"] == AutoresetMode.SAME_STEP``).
    When a sub-env's episode ends, ``step`` resets it at once and returns the new episode's
    first observation in its row; the last observation is ``infos["final_obs"][b]`` and the
    last step's info ``infos["final_info"]`` (``metrics`` as the single env's
    ``info["metrics"]``, ``invalid_action``), each with its ``_key`` mask. Same-step was chosen
    because it is what Stable-Baselines3 expects (``terminal_observation``) and because every
    step then places an instance in every sub-env: no wasted no-op step, and the masks
    returned by :meth:`action_masks` always belong to the returned observations.

    Sub-env ``b`` reset with ``seed`` behaves exactly as ``ServerlessPlacementEnv`` reset with
    ``seed`` (``reset(seed=s)`` seeds ``s, s + 1, ...``, as Gymnasium's vector envs do); the
    autoresets continue each sub-env's own random stream, as ``env.reset()`` does.

    ``infos`` of ``step`` hold the single env's per-step keys (``node``, ``rfrt``,
    ``response_time``, ``cold_start``, ``cost_delta``, ``slo_violated``, ``time``) as ``(B,)``
    arrays, masked (``_node`` ...) by the envs that placed an instance; the arrays may share one
    mask object. ``render`` is not supported (use the single env).
    """

    # VectorEnv declares metadata an instance variable (typed dict[str, Any]); a ClassVar
    # here would contradict it, so ruff's ClassVar rule is waived instead
    metadata = {  # noqa: RUF012
        "autoreset_mode": AutoresetMode.SAME_STEP,
        "render_modes": [],
    }

    def __init__(self, num_envs: int = 8, **env_kwargs: Any) -> None:
        self.core = ServerlessPlacementBatch(num_envs, **env_kwargs)
        tpl = self.core.template
        self.num_envs = self.core.num_envs
        self.single_observation_space = tpl.observation_space
        self.single_action_space = tpl.action_space
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.render_mode = None
        self.env_kwargs = dict(env_kwargs)

    @property
    def template(self) -> ServerlessPlacementEnv:
        """A single env with the same arguments: dataset, cluster, spaces, ``node_view``."""
        return self.core.template

    def reset(
        self,
        *,
        seed: int | list[int | None] | None = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        B = self.num_envs
        if isinstance(seed, int | np.integer):
            super().reset(seed=int(seed))
            seeds: list[int | None] = [int(seed) + k for k in range(B)]
        elif seed is None:
            seeds = [None] * B
        else:
            seeds = list(seed)
            if len(seeds) != B:
                raise ValueError(f"{len(seeds)} seeds for {B} envs")
        envs = np.arange(B)
        if options and "reset_mask" in options:
            mask = np.asarray(options["reset_mask"], bool).reshape(B)
            envs = np.flatnonzero(mask)
            seeds = [seeds[b] for b in envs]
        self.core.reset(envs, seeds)
        obs = self.core.observe()
        done_mask = np.zeros(B, bool)
        done_mask[envs] = True
        return obs, {"time": self.core.now, "_time": done_mask}

    def step(
        self, actions: Any
    ) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        core = self.core
        r = core.step(actions)
        placed = r.placed
        infos: dict[str, Any] = {}
        for key in ("node", "rfrt", "response_time", "cold_start", "cost_delta", "slo_violated"):
            infos[key] = getattr(r, key)
            infos[f"_{key}"] = placed
        infos["time"] = r.time
        infos["_time"] = placed
        if core._n_done:
            ended = np.flatnonzero(r.done)
            B = self.num_envs
            last = core.observe(ended)
            final_obs = np.full(B, None, dtype=object)
            metrics = np.full(B, None, dtype=object)
            for k, b in enumerate(ended):
                final_obs[b] = {key: v[k] for key, v in last.items()}
                metrics[b] = core.metrics(int(b))
            mask = np.zeros(B, bool)
            mask[ended] = True
            infos["final_obs"], infos["_final_obs"] = final_obs, mask
            infos["final_info"] = {
                "metrics": metrics,
                "_metrics": mask,
                "invalid_action": r.invalid,
                "_invalid_action": r.invalid.copy(),
            }
            infos["_final_info"] = mask
            core.reset(ended)
        obs = core.observe()
        return obs, r.reward, r.done, np.zeros(self.num_envs, bool), infos

    def action_masks(self) -> np.ndarray:
        """``(num_envs, num_nodes)`` bool: the valid nodes of each sub-env's current instance."""
        return self.core.action_masks()

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Per sub-env results of ``action_masks`` or ``metrics`` (as ``SyncVectorEnv.call``);
        other names read the template env's attribute (the sub-envs share their arguments)."""
        if name == "action_masks":
            return tuple(self.core.action_masks())
        if name == "metrics":
            return tuple(self.core.metrics(b) for b in range(self.num_envs))
        value = getattr(self.template, name)
        if callable(value):
            raise AttributeError(f"{name!r} is not available per sub-env in the batched env")
        return (value,) * self.num_envs

    def get_attr(self, name: str) -> tuple[Any, ...]:
        return self.call(name)

    def close_extras(self, **kwargs: Any) -> None:
        self.template.close()
