"""Routing of :class:`~rlsched.core.llm.simulator.LLMSimulator`: arrivals, the choice of a
prompt and a token instance per request, the router queue."""

from __future__ import annotations

from collections import deque

from rlsched.core.llm.cluster import (
    Instance,
    InstanceConfig,
)
from rlsched.core.llm.state import SimulatorState


class Routing(SimulatorState):
    """Arrivals and the routing of requests to instances."""

    def _arrive(self, i: int) -> None:
        route = self._route(i)
        if route is None:
            if self._servable(i):
                self._router_queue.append(i)
            else:
                self._unservable += 1
                self._drop(i)
            return
        self._assign(i, route[0], route[1])

    def _route(self, i: int) -> tuple[Instance, Instance | None] | None:
        p = self._P[i]
        o = self._O[i]
        act = self._active
        mixed = act["mixed"]
        pi = _least_pending(act["prompt"], p, 1)
        if mixed and (pi is None or self._long_queue(pi, p)):
            mi = _least_pending(mixed, p, o)
            if mi is not None and (pi is None or not self._long_queue(mi, p)):
                pi = mi
        if pi is None:
            return None
        if o == 1:
            return pi, None
        if pi.tag == "mixed":
            return pi, pi
        ti = _least_memory(act["token"], p, o)
        if mixed and (ti is None or ti.sched_memory_tokens + p + o >= ti.kv_capacity):
            mi = _least_memory(mixed, p, o)
            if mi is not None and (ti is None or mi.sched_memory_tokens + p + o < mi.kv_capacity):
                ti = mi
        if ti is None:
            return None
        return pi, ti

    def _long_queue(self, inst: Instance, p: int) -> bool:
        return bool(inst.prefill_queue) and inst.sched_pending_tokens + p > self._max_pending

    def _servable(self, i: int) -> bool:
        """Some instance (existing or of a start-state pool) could ever hold the request."""
        p, o = self._P[i], self._O[i]
        caps = self._cap_by_tag

        def prefill_ok(tag: str) -> bool:
            return p + 1 <= caps.get(tag, 0)

        def decode_ok(tag: str) -> bool:
            return o == 1 or _fits_decode(caps.get(tag, 0), self._headroom(tag), p, o)

        if prefill_ok("mixed") and decode_ok("mixed"):
            return True
        return prefill_ok("prompt") and (decode_ok("token") or decode_ok("mixed"))

    def _headroom(self, tag: str) -> int:
        pool = self.start_state.pools.get(tag)
        return (pool.instance if pool else InstanceConfig()).kv_headroom_iterations

    def _assign(self, i: int, pi: Instance, ti: Instance | None) -> None:
        p = self._P[i]
        self._pinst[i] = pi
        self._tinst[i] = ti
        pi.sched_pending_tokens += p
        if ti is None:
            pi.sched_memory_tokens += p + 1
        elif ti is pi:
            pi.sched_memory_tokens += p + self._O[i]
        else:
            pi.sched_memory_tokens += p + 1
            ti.sched_memory_tokens += p + self._O[i]
        pi.prefill_queue.append(i)
        if pi._run_start < 0.0:
            self._start(pi)
        elif pi.tag == "mixed" and not pi._run_prefills:
            self._pause(pi)

    def _dispatch_router_queue(self) -> None:
        q = self._router_queue
        if not q:
            return
        keep: deque[int] = deque()
        while q:
            i = q.popleft()
            route = self._route(i)
            if route is None:
                keep.append(i)
            else:
                self._assign(i, route[0], route[1])
        self._router_queue = keep


def _fits_decode(cap: int, headroom: int, p: int, o: int) -> bool:
    """A decode of a ``p``-token prompt and ``o`` outputs can run alone on ``cap`` tokens: its
    KV lands with ``headroom`` tokens to spare and its final context fits."""
    return p + o <= cap and p + 1 + headroom <= cap


def _least_pending(insts: list[Instance], p: int, o: int) -> Instance | None:
    """Fewest pending prompt tokens among the instances that can prefill ``p`` tokens (and,
    for ``o`` > 1 on a mixed instance, decode the request too)."""
    best = None
    least = tie = 0.0
    for x in insts:
        cap = x.kv_capacity
        if p + 1 > cap or (
            o > 1
            and x.tag == "mixed"
            and not _fits_decode(cap, x.config.kv_headroom_iterations, p, o)
        ):
            continue
        k = x.sched_pending_tokens  # the order of (pending, tiebreak) tuples, without them
        if best is None or k < least or (k == least and x.tiebreak < tie):
            best, least, tie = x, k, x.tiebreak
    return best


def _least_memory(insts: list[Instance], p: int, o: int) -> Instance | None:
    """Least committed KV among the instances that can decode the request."""
    best = None
    least = tie = 0.0
    for x in insts:
        if not _fits_decode(x.kv_capacity, x.config.kv_headroom_iterations, p, o):
            continue
        k = x.sched_memory_tokens  # the order of (memory, tiebreak) tuples, without them
        if best is None or k < least or (k == least and x.tiebreak < tie):
            best, least, tie = x, k, x.tiebreak
    return best
