"""A fast trace-driven simulator of disaggregated LLM serving (Splitwise-style).

**Request life.** A request arrives (trace time), the router picks a prompt instance and a token
instance at once (below), the prompt instance prefills it in a batch and so produces the first
token (**TTFT ends here**), its KV cache (``prompt + 1`` tokens) is shipped over a link to the
token instance, which decodes the remaining ``output - 1`` tokens one per iteration in a
continuous batch; the request completes with its last token. A ``mixed`` instance does both
phases itself (no transfer). Per request:

- TTFT = first token time - arrival = router and prefill queueing + the prefill iteration;
- E2E = completion - arrival;
- TBT = (E2E - TTFT) / (output - 1): the mean gap between consecutive tokens after the first,
  so it includes the KV transfer and any waiting for a decode slot (0 for a one-token output).

For a request alone on an idle cluster: TTFT = prompt_time(p), E2E = TTFT + transfer(p + 1)
+ (o - 1) x token_time(1), with ``transfer(n) = n x kv_bytes_per_token / link bandwidth +
latency``.

**Router** (splitwise-sim's mixed-pool scheduler, without its dynamic re-tagging): the prompt
instance is the active ``prompt`` instance with the fewest ``sched_pending_tokens``; if its
queue is non-empty and would pass ``prompt_max_pending_tokens``, a ``mixed`` instance with a
shorter queue is used instead. The token instance is the active ``token`` instance with the
least ``sched_memory`` (committed KV); if that one is full, a ``mixed`` instance with room is
used. A request prefilled on a mixed instance decodes there too. Ties go to a seeded random
order of instances. Only instances whose KV capacity can ever hold the request are considered;
when none exists in the cluster or the start state's pools, the request is **dropped** at
arrival; when candidates exist but none is active, it waits in the router queue.

**Batching** (splitwise-sim's ``Splitwise`` instance): an iteration holds at most
``max_batch_size`` requests and ``max_batch_tokens`` tokens (a prefill counts its prompt, a
decode 1; a single prefill larger than the budget runs alone). A prompt instance batches
prefills FCFS; a token instance runs all its decodes together; a mixed instance puts prefills
first and fills the rest with decodes (decodes left out are slot-preempted: their KV stays).
Iteration time: ``prompt_time(batch tokens)`` for prefill-only, ``token_time(batch size)`` for
decode-only, ``1.1 x prompt_time(prefill tokens + decodes)`` for a mixed batch (splitwise-sim's
rule). Decode-only iterations run back to back as one event until the first request in the
batch finishes, KV memory would run out, or new work that fits arrives (then the run stops at
the next iteration boundary): this is what makes the simulator fast.

**KV memory** (tokens; capacity = GPU memory - weights, see :mod:`rlsched.core.llm.cluster`): a
prefill takes ``prompt + 1`` tokens on the prompt instance from its start until its KV has
been shipped. Shipping starts only when the token instance can hold the KV with room for
``kv_headroom_iterations`` iterations of its batch's growth; until then the KV waits on the
prompt instance (FCFS), which holds back that instance's next prefills when its memory is full.
A decode grows by one token per iteration. When a decode iteration would not fit, the token
instance **preempts**: first a request waiting for a batch slot, then the most recently
admitted running request that has been preempted fewer than ``max_preemptions`` times (the
most recent one when all have); its KV is swapped to host memory and swapped back (host link
``swap_bandwidth_gib_s``) ahead of new transfers when memory allows; requests preempted
``max_preemptions`` times are admitted first. A request whose KV can never fit is dropped.

**compat="splitwise-sim"** reproduces splitwise-sim's own numbers (docs/fidelity.md): its
readings of the performance model (``PerfModel.load(compat="splitwise-sim")``: a decode
iteration of b requests read at b batch tokens, small prompts extrapolated below the first
measured point) and its TBT, ``(E2E - TTFT) / output`` (here by default ``output - 1``: the
gaps after the first token). A :class:`PerfModel` object passed in is used as given.

**Time and accounting.** ``run_until(t)`` processes events up to ``t``; ``run()`` to the end.
Servers are billed (GPU-hours, US$) from creation to removal; energy is ``idle power x alive
time + (peak - idle) x time iterating`` per server. ``timeline`` holds a sample every
``sample_interval`` seconds.

The class is written in parts, along the sections of the model: :mod:`~rlsched.core.llm.routing`
(arrivals, routing), :mod:`~rlsched.core.llm.engine` (the instance engine),
:mod:`~rlsched.core.llm.accounting` (samples, accounting, latencies and SLO); this module holds
the constructor, the public API, the event loop and the cluster changes (the
:class:`~rlsched.core.llm.scaling.ClusterControl` interface the scaling manager uses).
"""

from __future__ import annotations

import bisect
import math
from collections import deque
from collections.abc import Mapping, Sequence
from copy import deepcopy
from heapq import heappop, heappush
from pathlib import Path
from typing import Any

import numpy as np

from rlsched.core.copying import lean_deepcopy
from rlsched.core.llm.accounting import Accounting
from rlsched.core.llm.cluster import (
    GIB,
    TAGS,
    Instance,
    InstanceConfig,
    InstanceState,
    Server,
    get_model,
    get_sku,
)
from rlsched.core.llm.engine import InstanceEngine
from rlsched.core.llm.perf_model import COMPAT, PerfModel
from rlsched.core.llm.routing import Routing
from rlsched.core.llm.scaling import ScalingManager, StartState
from rlsched.core.llm.slo import METRICS, SLOConfig
from rlsched.core.llm.state import (
    _ACT,
    _DRAIN,
    _INF,
    _ITER,
    _KV,
    _SAMPLE,
    MIXED_BATCH_FACTOR,
    IterationHook,
)
from rlsched.core.llm.trace import LLMRequests
from rlsched.errors import ConfigError

__all__ = ["MIXED_BATCH_FACTOR", "IterationHook", "LLMSimulator"]

#: the keys of :meth:`LLMSimulator.arrival_stats` that :meth:`~LLMSimulator.window_stats` shares
_ARRIVAL_KEYS = ("arrivals", "prompt_tokens", "output_tokens", "mean_prompt_tokens",
                 "mean_output_tokens")  # fmt: skip


#: the latency percentiles :meth:`LLMSimulator.results` reports
_RESULT_PERCENTILES = (50, 90, 99)


class LLMSimulator(Routing, InstanceEngine, Accounting):
    """Discrete-event simulation of one LLM serving cluster over a request trace.

    Args:
        requests: an :class:`LLMRequests` (a dataset name or a trace file:
            :func:`rlsched.data.azure_llm.load_requests`).
        start_state: a :class:`StartState`, a YAML path, a dict, or ``None`` for the default.
        slo: slowdown limits (:class:`SLOConfig`).
        perf_model: a :class:`PerfModel`, a CSV path, or ``None`` for the shipped one.
        scale_up_delay, drain_check_interval, min_instances_per_pool, max_total_instances:
            the :class:`ScalingManager`'s settings.
        seed: orders routing ties between equally loaded instances (the only randomness).
        sample_interval: seconds between :attr:`timeline` samples (0: none).
        on_iteration: an :data:`IterationHook`.
        compat: ``None`` (rlsched's model) or ``"splitwise-sim"`` (the peer's readings and TBT;
            see the module docstring).
    """

    def __init__(
        self,
        requests: LLMRequests,
        start_state: StartState | str | Path | Mapping[str, Any] | None = None,
        slo: SLOConfig | None = None,
        perf_model: PerfModel | str | Path | None = None,
        scale_up_delay: float = 10.0,
        drain_check_interval: float = 1.0,
        min_instances_per_pool: int = 1,
        max_total_instances: int = 100,
        seed: int = 0,
        sample_interval: float = 10.0,
        on_iteration: IterationHook | None = None,
        compat: str | None = None,
    ) -> None:
        if compat not in COMPAT:
            raise ConfigError(f"compat must be None or 'splitwise-sim', got {compat!r}")
        self.compat = compat
        # splitwise-sim's TBT divides the decode time by every output token, rlsched's by o - 1
        self._tbt_div = 0 if compat == "splitwise-sim" else 1
        if not isinstance(requests, LLMRequests):
            raise ConfigError(
                f"requests must be LLMRequests, got {type(requests).__name__}: load a dataset "
                "name or a trace file with rlsched.data.azure_llm.load_requests"
            )
        self.requests = requests
        self.start_state = StartState.coerce(start_state)
        self.slo = slo or SLOConfig()
        if perf_model is None or isinstance(perf_model, str | Path):
            perf_model = PerfModel.load(perf_model, compat=compat)
        self.perf_model = perf_model
        ss = self.start_state
        self.model = get_model(ss.model, ss.kv_heads_ratio)
        self.seed = int(seed)
        self._rng = np.random.default_rng(self.seed)
        self.sample_interval = float(sample_interval)
        self.on_iteration = on_iteration
        kvb = self.model.kv_bytes_per_token
        self._kv_spt = kvb / (ss.kv_link_bandwidth_gib_s * GIB)
        self._swap_spt = kvb / (ss.swap_bandwidth_gib_s * GIB)
        self._lat = float(ss.kv_link_latency_s)
        self._max_pending = int(ss.prompt_max_pending_tokens)

        n = len(requests)
        self._n = n
        self._arr: list[float] = requests.arrival.tolist()
        self._P: list[int] = requests.prompt_tokens.tolist()
        self._O: list[int] = requests.output_tokens.tolist()
        self._cumP = np.concatenate([[0], np.cumsum(requests.prompt_tokens)])
        self._cumO = np.concatenate([[0], np.cumsum(requests.output_tokens)])
        self._first = [math.nan] * n
        self._finish = [math.nan] * n
        self._status = bytearray(n)
        self._pinst: list[Instance | None] = [None] * n
        self._tinst: list[Instance | None] = [None] * n
        self._gen0 = [0] * n  # decode tokens generated before the current admission
        self._base = [0] * n  # iteration count of the decode instance at (re)admission - gen0
        self._npre = [0] * n  # preemptions (memory or slot)
        self._next = 0
        self._router_queue: deque[int] = deque()
        self._done_idx: list[int] = []
        self._done_t: list[float] = []
        self._drop_idx: list[int] = []
        self._drop_t: list[float] = []
        self._unservable = 0
        #: :meth:`_completed_rows`: latencies and slowdowns of the first ``_rows_len``
        #: completed requests
        self._rows = np.empty((2 * len(METRICS), 64))
        self._rows_len = 0
        self._rows_view: np.ndarray | None = None  # its read-only view

        self.now = 0.0
        self._heap: list[tuple] = []
        self._seq = 0
        self.events = 0
        """Events processed (arrivals, iteration runs, transfers, scaling, samples)."""
        self.stale_events = 0
        self.instances: list[Instance] = []
        """Every instance not removed, in creation order."""
        self.all_servers: list[Server] = []
        """Every server ever created (removed ones keep their ``removed`` time)."""
        # Accounting folds a removed, idle server into a fixed total once, so that the cost
        # and energy sums walk the live servers only (not every server ever created).
        self._acc_closed = (0.0, 0.0, 0.0)
        self._acc_open: list[Server] = []
        self.all_instances: list[Instance] = []
        self._active: dict[str, list[Instance]] = {t: [] for t in TAGS}
        self._next_server = 0
        self._next_instance = 0
        self.timeline: list[dict[str, Any]] = []
        """Samples every ``sample_interval`` s (see :meth:`snapshot`)."""
        self._ck_t: list[float] = [0.0]
        self._ck_v: list[tuple[float, float, float]] = [(0.0, 0.0, 0.0)]
        self._sampling = False

        self.scaling_manager = ScalingManager(
            self,
            scale_up_delay=scale_up_delay,
            drain_check_interval=drain_check_interval,
            min_instances_per_pool=min_instances_per_pool,
            max_total_instances=max_total_instances,
        )
        total = sum(p.num_instances for p in ss.pools.values())
        if total > max_total_instances:
            raise ConfigError(
                f"the start state has {total} instances, more than max_total_instances "
                f"({max_total_instances})"
            )
        # capacity (tokens) an instance of each pool template would have, for servability
        self._cap_by_tag: dict[str, int] = {}
        for tag, pool in ss.pools.items():
            self._note_capacity(tag, self._capacity(get_sku(pool.server_sku), pool.parallelism))
            for _ in range(pool.num_instances):
                self.create_instance(
                    tag, pool.instance, pool.parallelism, pool.server_sku, active=True
                )
        self._set_unloaded()
        if self.sample_interval > 0:
            self._sample()

    # ================================================================== public API
    @property
    def done(self) -> bool:
        """Every request completed or dropped."""
        return len(self._done_idx) + len(self._drop_idx) == self._n

    @property
    def router_queue_len(self) -> int:
        """Requests waiting at the router for an active instance that can take them."""
        return len(self._router_queue)

    def replace_future(self, tail: LLMRequests) -> None:
        """Make ``tail`` the requests still to arrive (every request not arrived yet is
        dropped from the trace); ``tail``'s arrivals must not be before the clock. For rollouts
        over sampled futures (:mod:`rlsched.policies.rollout`)."""
        if len(tail) and float(tail.arrival[0]) < self.now:
            raise ValueError(f"a replaced future starts at {tail.arrival[0]}, before {self.now}")
        k = self._next
        old = self.requests
        self.requests = LLMRequests(
            np.concatenate([old.arrival[:k], tail.arrival]),
            np.concatenate([old.prompt_tokens[:k], tail.prompt_tokens]),
            np.concatenate([old.output_tokens[:k], tail.output_tokens]),
            np.concatenate([old.request_id[:k], tail.request_id]),
        )
        n = len(self.requests)
        m = n - k
        self._n = n
        self._arr = self._arr[:k] + tail.arrival.tolist()
        self._P = self._P[:k] + tail.prompt_tokens.tolist()
        self._O = self._O[:k] + tail.output_tokens.tolist()
        self._cumP = np.concatenate([[0], np.cumsum(self.requests.prompt_tokens)])
        self._cumO = np.concatenate([[0], np.cumsum(self.requests.output_tokens)])
        self._first = self._first[:k] + [math.nan] * m
        self._finish = self._finish[:k] + [math.nan] * m
        self._status = self._status[:k] + bytearray(m)
        self._pinst = self._pinst[:k] + [None] * m
        self._tinst = self._tinst[:k] + [None] * m
        self._gen0 = self._gen0[:k] + [0] * m
        self._base = self._base[:k] + [0] * m
        self._npre = self._npre[:k] + [0] * m
        self._set_unloaded()

    def run_until(self, t: float) -> int:
        """Process every event at time <= ``t``, then set the clock to ``t``; returns the number
        of events processed."""
        if t < self.now:
            return 0
        self._arm_sampling()
        n = self._run(t)
        self.now = max(self.now, t)
        self._checkpoint()
        return n

    def run(self) -> int:
        """Run until every request is completed or dropped and scale-ups and drains have
        settled; returns the number of events processed. Requests that can then never be
        served (waiting for a pool with no instance) count as dropped."""
        self._arm_sampling()
        n = self._run(_INF)
        self._checkpoint()
        return n

    #: Replaced as a whole, never changed in place: a deep copy of the simulator (an env
    #: snapshot, at every rollout of a search) shares them
    _COPY_SHARED = ("requests", "perf_model", "_arr", "_P", "_O", "_cumP", "_cumO", "_unloaded",
                    "_unloaded_div", "_unloaded_divisors")  # fmt: skip
    #: Per-request numbers and finished-request lists, changed in place item by item with
    #: immutable items: copied one level deep
    _COPY_SHALLOW = ("_first", "_finish", "_gen0", "_base", "_npre", "_done_idx", "_done_t",
                     "_drop_idx", "_drop_t", "timeline", "_ck_t", "_ck_v")  # fmt: skip

    #: Per-request instances (None: not routed yet): copied by mapping each instance to its
    #: copy, made with ``all_instances``, rather than item by item (a third of a copy's time)
    _COPY_INSTANCES = ("_pinst", "_tinst")

    def __deepcopy__(self, memo: dict[int, Any]) -> LLMSimulator:
        new = object.__new__(type(self))
        memo[id(self)] = new
        state = vars(self)
        rest = {k: v for k, v in state.items() if k not in self._COPY_INSTANCES}
        copied = lean_deepcopy(rest, self._COPY_SHARED, self._COPY_SHALLOW, memo)
        get = memo.get
        for name in self._COPY_INSTANCES:  # every instance ever made is in all_instances
            copied[name] = [
                x if x is None else (y if (y := get(id(x))) is not None else deepcopy(x, memo))
                for x in state[name]
            ]
        vars(new).update(copied)
        return new

    def snapshot(self) -> dict[str, Any]:
        """The cluster now, as one :attr:`timeline` sample: per pool tag the instances by state,
        prompt tokens queued, decodes running and waiting, mean KV utilisation of the active
        instances; plus the router queue and request counts."""
        tags = list(self.start_state.pools) + [t for t in TAGS if t not in self.start_state.pools]
        acc = {t: [0, 0, 0, 0, 0, 0, 0.0, 0] for t in tags}
        seen = set(self.start_state.pools)
        for i in self.instances:
            a = acc[i.tag]
            seen.add(i.tag)
            st = i.state
            if st is InstanceState.ACTIVE:
                a[0] += 1
                a[6] += i.kv_used / i.kv_capacity
            elif st is InstanceState.SCALING_UP:
                a[1] += 1
            else:
                a[2] += 1
            a[3] += i.sched_pending_tokens
            a[4] += len(i.running)
            a[5] += len(i.kv_wait) + len(i._pend_heap)
            a[7] += i._run_start >= 0.0
        pools = {
            t: {
                "active": a[0],
                "scaling_up": a[1],
                "draining": a[2],
                "pending_prompt_tokens": a[3],
                "running_decodes": a[4],
                "waiting_decodes": a[5],
                "kv_utilization": a[6] / a[0] if a[0] else 0.0,
                "busy": a[7],
            }
            for t, a in acc.items()
            if t in seen
        }
        return {
            "time": self.now,
            "pools": pools,
            "router_queue": self.router_queue_len,
            "arrived": self._next,
            "completed": len(self._done_idx),
            "dropped": len(self._drop_idx),
            "servers": sum(1 for s in self.all_servers if s.removed is None),
        }

    def window_stats(self, since: float) -> dict[str, Any]:
        """What happened in ``(since, now]``, for an RL state and reward.

        Keys: ``since``, ``now``; ``completed`` and their ``ttft`` / ``tbt`` / ``e2e`` arrays (s,
        in completion order) and ``slowdown_*`` arrays; ``slo_attainment`` (per-request
        attainment at ``SLOConfig.attainment_level`` over the completed and dropped of the
        window; NaN when none); ``dropped``; ``arrivals``, ``prompt_tokens`` and
        ``output_tokens`` of the requests that arrived (sums) and their means; ``gpu_hours``,
        ``cost``, ``energy_kwh`` spent in the window (exact when ``since`` is a time the
        simulator stopped at or sampled; interpolated between those otherwise).
        """
        now = self.now
        idx, lat, sd = self._window_latencies(since)
        dropped = len(self._drop_idx) - bisect.bisect_right(self._drop_t, since)
        ok = self.slo.attained(sd) if idx else np.zeros(0, bool)
        denom = len(idx) + dropped
        arr = self.arrival_stats(since)
        # the clock's own checkpoint where run_until just took it (the same sums)
        c_now = self._ck_v[-1] if self._ck_t[-1] == now else self._cumulative()
        c_then = self._cumulative_at(since)
        return {
            "since": since,
            "now": now,
            "completed": len(idx),
            **lat,
            **{f"slowdown_{m}": sd[m] for m in METRICS},
            "slo_attainment": float(ok.sum()) / denom if denom else math.nan,
            "dropped": dropped,
            **{k: arr[k] for k in _ARRIVAL_KEYS},
            "gpu_hours": c_now[0] - c_then[0],
            "cost": c_now[1] - c_then[1],
            "energy_kwh": c_now[2] - c_then[2],
        }

    def arrival_stats(self, since: float) -> dict[str, Any]:
        """The arrival keys of :meth:`window_stats` alone (``since``, ``now``, ``arrivals``,
        token sums and means of the requests that arrived in ``(since, now]``): what the RL
        state reads of a long window at every decision, without its latencies and costs."""
        a0 = bisect.bisect_right(self._arr, since, 0, self._next)
        a1 = self._next
        arrivals = a1 - a0
        ptok = int(self._cumP[a1] - self._cumP[a0])
        otok = int(self._cumO[a1] - self._cumO[a0])
        return {
            "since": since,
            "now": self.now,
            "arrivals": arrivals,
            "prompt_tokens": ptok,
            "output_tokens": otok,
            "mean_prompt_tokens": ptok / arrivals if arrivals else 0.0,
            "mean_output_tokens": otok / arrivals if arrivals else 0.0,
        }

    def window_slowdowns(self, since: float) -> dict[str, np.ndarray]:
        """The ``slowdown_*`` arrays of :meth:`window_stats` alone (per metric, the requests
        completed in ``(since, now]``, in completion order): what a latency-driven scaler
        reads at every decision, without the window's costs and counts."""
        return self._window_latencies(since)[2]

    def _window_latencies(
        self, since: float
    ) -> tuple[list[int], dict[str, np.ndarray], dict[str, np.ndarray]]:
        """The requests completed in ``(since, now]``, their latencies and slowdowns (read-only
        views of :meth:`_completed_rows`)."""
        lo = bisect.bisect_right(self._done_t, since)
        rows = self._completed_rows()
        n = self._rows_len
        lat = {m: rows[j, lo:n] for j, m in enumerate(METRICS)}
        sd = {m: rows[len(METRICS) + j, lo:n] for j, m in enumerate(METRICS)}
        return self._done_idx[lo:], lat, sd

    def _completed_rows(self) -> np.ndarray:
        """Each completed request's latencies (``ttft``, ``tbt``, ``e2e``) and slowdowns, one
        column per request in completion order (the first :attr:`_rows_len` columns), kept as
        they complete: a request's latencies are final once it completes, so each is computed
        once, not again at every window that holds it (the env's step and a latency-driven
        scaler read one at every decision). The same floats as computing a window's at once
        (element by element). A read-only view: only this method writes the rows."""
        n = len(self._done_idx)
        rows, k = self._rows, self._rows_len
        if k < n:
            if n > rows.shape[1]:  # room doubles: a simulator's copy copies at most 2n columns
                grown = np.empty((rows.shape[0], max(2 * rows.shape[1], n)))
                grown[:, :k] = rows[:, :k]
                rows = self._rows = grown
            new = self._done_idx[k:n]
            if n - k <= self.SCALAR_ROWS:
                rows[:, k:n] = np.array(self._scalar_rows(new)).T
            else:
                lat = self._latencies(new)
                sd = self._slowdowns(lat, new)
                for j, m in enumerate(METRICS):
                    rows[j, k:n] = lat[m]
                    rows[len(METRICS) + j, k:n] = sd[m]
            self._rows_len = n
        view = self._rows_view
        if view is None or view.base is not rows:  # new room, or a copy's own rows
            view = self._rows_view = rows.view()
            view.flags.writeable = False  # the windows handed out are views of it
        return view

    #: :meth:`_completed_rows` computes at most this many new columns in Python floats (the
    #: few requests completed since a decision's last read), more in numpy: the same floats
    SCALAR_ROWS = 48

    def _scalar_rows(self, idx: list[int]) -> list[tuple[float, ...]]:
        """Each request's latencies and slowdowns (:meth:`_latencies`, :meth:`_slowdowns`),
        one tuple per request, in Python floats: the same IEEE operations on the same numbers,
        without a dozen numpy calls for a handful of requests."""
        arr, first, fin, out_tok, div = self._arr, self._first, self._finish, self._O, self._tbt_div
        dt, db, de = self._unloaded_divisors
        cols: list[tuple[float, ...]] = []
        for r in idx:
            a = arr[r]
            ttft = first[r] - a
            e2e = fin[r] - a
            o = out_tok[r]
            tbt = (e2e - ttft) / max(o - div, 1) if o > 1 else 0.0
            x, y, z = dt[r], db[r], de[r]
            cols.append((ttft, tbt, e2e, 1.0 if x is None else ttft / x,
                         1.0 if y is None else tbt / y, 1.0 if z is None else e2e / z))  # fmt: skip
        return cols

    def _slowdowns(self, lat: dict[str, np.ndarray], idx: list[int]) -> dict[str, np.ndarray]:
        """:func:`~rlsched.core.llm.slo.slowdowns` of requests ``idx`` (their latencies
        ``lat``), the same quotients from divisors computed once per trace (a window's run at
        every decision)."""
        at = np.array(idx, dtype=np.intp)
        sd = {}
        for m in METRICS:
            positive, divisor = self._unloaded_div[m]
            sd[m] = np.where(positive[at], lat[m] / divisor[at], 1.0)
        return sd

    def _set_unloaded(self) -> None:
        """Each request's unloaded latencies (:meth:`_unloaded_reference`) and, per metric,
        where they are positive and the divisor :func:`~rlsched.core.llm.slo.slowdowns` takes
        (1 where they are 0)."""
        self._unloaded = self._unloaded_reference()
        self._unloaded_div = {m: (u > 0, np.where(u > 0, u, 1.0))
                              for m, u in self._unloaded.items()}  # fmt: skip
        # the divisors as Python floats, None where the slowdown is 1 (:meth:`_scalar_rows`)
        self._unloaded_divisors = tuple(
            [x if x > 0 else None for x in self._unloaded[m].tolist()] for m in METRICS
        )

    def results(self) -> dict[str, Any]:
        """Run summary. ``requests``: completed; ``dropped``: never servable + not finished by
        now (``dropped_unservable``, ``unfinished``); latency percentiles in seconds over the
        completed requests; SLO attainment and Splitwise's percentile checks (see
        :mod:`rlsched.core.llm.slo`; dropped requests count as misses); ``gpu_hours``, ``cost``
        (US$), ``energy_kwh`` from time 0 to ``duration`` (the clock now); scaling actions."""
        idx, lat, sd = self._window_latencies(-math.inf)
        unfinished = self._n - len(idx) - len(self._drop_idx)
        dropped = len(self._drop_idx) + unfinished
        out: dict[str, Any] = {
            "requests": len(idx),
            "total_requests": self._n,
            "dropped": dropped,
            "dropped_unservable": self._unservable,
            "unfinished": unfinished,
        }
        for m in METRICS:
            v = lat[m]
            # the three in one call: the same floats as one call each
            nan = [math.nan] * len(_RESULT_PERCENTILES)
            ps = np.percentile(v, _RESULT_PERCENTILES).tolist() if len(v) else nan
            for p, x in zip(_RESULT_PERCENTILES, ps, strict=True):
                out[f"{m}_p{p}"] = x
            out[f"{m}_mean"] = float(v.mean()) if len(v) else math.nan
        out.update(self.slo.evaluate(sd, dropped))
        gpu_h, cost, kwh = self._cumulative()
        sm = self.scaling_manager
        done_o = int(np.asarray(self._O)[idx].sum()) if idx else 0
        out.update(
            {
                "gpu_hours": gpu_h,
                "cost": cost,
                "energy_kwh": kwh,
                "scale_up_actions": sm.scale_up_actions,
                "scale_down_actions": sm.scale_down_actions,
                "blocked_actions": sm.blocked_actions,
                "duration": self.now,
                "output_tokens_per_s": done_o / self.now if self.now > 0 else 0.0,
                "preemptions": int(sum(self._npre)),
                "events": self.events,
                "servers_created": len(self.all_servers),
            }
        )
        return out

    def request_table(self) -> dict[str, np.ndarray]:
        """Per request (trace order): arrival, prompt/output tokens, first-token and finish
        time, TTFT / TBT / E2E (NaN when not reached), status (0 in flight or waiting,
        1 completed, 2 dropped), preemptions, the ids of the prompt and token instances it was
        routed to (-1: none), and the unloaded TTFT / TBT / E2E."""
        arr = np.asarray(self._arr)
        first = np.asarray(self._first)
        fin = np.asarray(self._finish)
        o = np.asarray(self._O)
        ttft, e2e = first - arr, fin - arr
        with np.errstate(invalid="ignore"):
            tbt = np.where(
                o > 1,
                (e2e - ttft) / np.maximum(o - self._tbt_div, 1),
                np.where(fin >= 0, 0.0, np.nan),
            )
        return {
            "arrival": arr,
            "prompt_tokens": np.asarray(self._P),
            "output_tokens": o,
            "first_token": first,
            "finish": fin,
            "ttft": ttft,
            "tbt": tbt,
            "e2e": e2e,
            "status": np.frombuffer(bytes(self._status), dtype=np.uint8).copy(),
            "preemptions": np.asarray(self._npre),
            "prompt_instance": np.array([-1 if x is None else x.id for x in self._pinst]),
            "token_instance": np.array([-1 if x is None else x.id for x in self._tinst]),
            **{f"unloaded_{m}": self._unloaded[m].copy() for m in METRICS},
        }

    # ================================================================== event loop
    def _push(self, t: float, kind: int, obj: Any, arg: Any) -> None:
        self._seq += 1
        heappush(self._heap, (t, self._seq, kind, obj, arg))

    def _run(self, t_end: float) -> int:
        heap = self._heap
        arr = self._arr
        n = self._n
        iter_done = self._iter_done
        count = 0
        i = self._next  # only arrivals move it: the next arrival's time is kept between events
        ta = arr[i] if i < n else _INF
        while True:
            if heap and (top := heap[0][0]) <= ta:
                if top > t_end:
                    break
                t, _, kind, obj, arg = heappop(heap)
                if kind == _ITER:  # most events: a run of iterations ends
                    if arg != obj._version:  # a run cut short by _pause
                        self.stale_events += 1
                        continue
                    self.now = t
                    iter_done(obj)
                    count += 1
                    continue
                if kind == _SAMPLE and (self._quiescent() or (not heap and i >= n)):
                    self._sampling = False  # nothing can change any more: do not move the clock
                    continue
                self.now = t
                if kind == _KV:
                    self._kv_done(obj, arg[0], arg[1])
                elif kind == _ACT:
                    self._activate(obj)
                elif kind == _DRAIN:
                    self.scaling_manager.on_drain_check()
                else:
                    self._sample()
            else:
                if ta > t_end or i >= n:
                    break
                self.now = ta
                self._next = i + 1
                self._arrive(i)
                i += 1
                ta = arr[i] if i < n else _INF
            count += 1
        self.events += count
        return count

    # ================================================================== cluster changes
    # create_instance, set_state, schedule_activation and schedule_drain_check are the control
    # interface (:class:`~rlsched.core.llm.scaling.ClusterControl`) the ScalingManager uses.
    def _capacity(self, sku: Any, parallelism: int) -> int:
        cap_bytes = parallelism * sku.gpu_memory_gib * GIB - self.model.weights_bytes
        return int(cap_bytes // self.model.kv_bytes_per_token) if cap_bytes > 0 else 0

    def _note_capacity(self, tag: str, cap: int) -> None:
        self._cap_by_tag[tag] = max(self._cap_by_tag.get(tag, 0), cap)

    def create_instance(
        self,
        tag: str,
        config: InstanceConfig,
        parallelism: int,
        server_sku: str,
        *,
        active: bool,
    ) -> Instance:
        if tag not in TAGS:
            raise ConfigError(f"unknown pool tag {tag!r}; use {', '.join(TAGS)}")
        if not isinstance(config, InstanceConfig):
            raise ConfigError(
                f"instance_cfg must be an InstanceConfig, got {type(config).__name__}"
            )
        sku = get_sku(server_sku)
        if not isinstance(parallelism, int) or not 1 <= parallelism <= sku.gpus:
            raise ConfigError(
                f"parallelism must be 1..{sku.gpus} on {sku.name}, got {parallelism!r}"
            )
        pt, tt = self.perf_model.cached(self.model.name, sku.hardware, parallelism)
        cap = self._capacity(sku, parallelism)
        if cap <= 0:
            raise ConfigError(
                f"{self.model.name} ({self.model.weights_bytes / 1e9:.0f} GB of weights) does not "
                f"fit in {parallelism} x {sku.gpu_memory_gib:g} GiB of {sku.name}"
            )
        server = Server(self._next_server, sku, self.now)
        self._next_server += 1
        inst = Instance(
            self._next_instance,
            tag,
            server,
            config,
            parallelism,
            cap,
            self.model.kv_bytes_per_token,
            pt,
            tt,
            self.now,
        )
        self._next_instance += 1
        inst.prefill_queue = deque()
        inst.kv_wait = deque()
        inst.tiebreak = float(self._rng.random())
        server.instance = inst
        self.all_servers.append(server)
        self._acc_open.append(server)
        self.all_instances.append(inst)
        self.instances.append(inst)
        self._note_capacity(tag, cap)
        if active:
            self.set_state(inst, InstanceState.ACTIVE)
        return inst

    def active(self, tag: str) -> Sequence[Instance]:
        """The ``ACTIVE`` instances of pool ``tag`` in the order they became active (those of
        ``scaling_manager.get_active_instances(tag=tag)``, kept as they change: no scan of
        the cluster). The simulator's own list: read it, do not change it."""
        return self._active[tag]

    def set_state(self, inst: Instance, state: InstanceState) -> None:
        old = inst.state
        if old is state:
            return
        if old is InstanceState.ACTIVE:
            self._active[inst.tag].remove(inst)
        inst.state = state
        if state is InstanceState.ACTIVE:
            inst.activated = self.now
            self._active[inst.tag].append(inst)
            self._dispatch_router_queue()
        elif state is InstanceState.REMOVED:
            inst.removed = self.now
            inst.server.removed = self.now
            self.instances.remove(inst)

    def schedule_activation(self, inst: Instance, t: float) -> None:
        self._push(t, _ACT, inst, None)

    def _activate(self, inst: Instance) -> None:
        if inst.state is InstanceState.SCALING_UP:
            self.set_state(inst, InstanceState.ACTIVE)
            self.scaling_manager.on_activated(inst)

    def schedule_drain_check(self, t: float) -> None:
        self._push(t, _DRAIN, None, None)
