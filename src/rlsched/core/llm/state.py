"""The state every part of :class:`~rlsched.core.llm.simulator.LLMSimulator` shares: the
event kinds and request statuses, and :class:`SimulatorState`, which declares the
simulator's attributes and methods for the parts written in their own modules
(:mod:`~rlsched.core.llm.routing`, :mod:`~rlsched.core.llm.engine`,
:mod:`~rlsched.core.llm.accounting`)."""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from rlsched.core.llm.cluster import (
    Instance,
    ModelSpec,
    Server,
)
from rlsched.core.llm.perf_model import PerfModel
from rlsched.core.llm.scaling import ClusterControl, ScalingManager, StartState
from rlsched.core.llm.slo import SLOConfig
from rlsched.core.llm.trace import LLMRequests

#: splitwise-sim's penalty for an iteration mixing prefills and decodes.
MIXED_BATCH_FACTOR = 1.1

_ITER, _KV, _ACT, _DRAIN, _SAMPLE = 0, 1, 2, 3, 4
_INF = math.inf
_PENDING, _DONE, _DROPPED = 0, 1, 2

IterationHook = Callable[[Instance, int, int, int, int, float], None]
"""``hook(instance, n_prefills, prefill_tokens, n_decodes, iterations, iteration_seconds)``,
called whenever an instance starts a run of iterations (for tests and tracing)."""


class SimulatorState(ClusterControl):
    """The attributes :class:`~rlsched.core.llm.simulator.LLMSimulator` sets in
    ``__init__`` and (for type checkers only) its methods: the parts call each other
    through ``self``. The simulator implements :class:`~rlsched.core.llm.scaling.ClusterControl`
    (its four cluster changes are declared there)."""

    compat: str | None
    _tbt_div: int
    requests: LLMRequests
    start_state: StartState
    slo: SLOConfig
    perf_model: PerfModel
    model: ModelSpec
    seed: int
    _rng: np.random.Generator
    sample_interval: float
    on_iteration: IterationHook | None
    _kv_spt: float
    _swap_spt: float
    _lat: float
    _max_pending: int
    _n: int
    _arr: list[float]
    _P: list[int]
    _O: list[int]
    _cumP: np.ndarray
    _cumO: np.ndarray
    _first: list[float]
    _finish: list[float]
    _status: bytearray
    _pinst: list[Instance | None]
    _tinst: list[Instance | None]
    _gen0: list[int]
    _base: list[int]
    _npre: list[int]
    _next: int
    _router_queue: deque[int]
    _done_idx: list[int]
    _done_t: list[float]
    _drop_idx: list[int]
    _drop_t: list[float]
    _rows: np.ndarray
    _rows_len: int
    _rows_view: np.ndarray | None
    _unservable: int
    now: float
    _heap: list[tuple]
    _seq: int
    events: int
    stale_events: int
    instances: list[Instance]
    all_servers: list[Server]
    _acc_closed: tuple[float, float, float]
    _acc_open: list[Server]
    all_instances: list[Instance]
    _active: dict[str, list[Instance]]
    _next_server: int
    _next_instance: int
    timeline: list[dict[str, Any]]
    _ck_t: list[float]
    _ck_v: list[tuple[float, float, float]]
    _sampling: bool
    scaling_manager: ScalingManager
    _cap_by_tag: dict[str, int]
    _unloaded: dict[str, np.ndarray]
    _unloaded_div: dict[str, tuple[np.ndarray, np.ndarray]]
    _unloaded_divisors: tuple[list[float | None], ...]

    if TYPE_CHECKING:

        @property
        def done(self) -> bool: ...

        @property
        def router_queue_len(self) -> int: ...

        def run_until(self, t: float) -> int: ...

        def run(self) -> int: ...

        def snapshot(self) -> dict[str, Any]: ...

        def window_stats(self, since: float) -> dict[str, Any]: ...

        def results(self) -> dict[str, Any]: ...

        def request_table(self) -> dict[str, np.ndarray]: ...

        def _push(self, t: float, kind: int, obj: Any, arg: Any) -> None: ...

        def _run(self, t_end: float) -> int: ...

        def _arrive(self, i: int) -> None: ...

        def _route(self, i: int) -> tuple[Instance, Instance | None] | None: ...

        def _long_queue(self, inst: Instance, p: int) -> bool: ...

        def _servable(self, i: int) -> bool: ...

        def _headroom(self, tag: str) -> int: ...

        def _assign(self, i: int, pi: Instance, ti: Instance | None) -> None: ...

        def _dispatch_router_queue(self) -> None: ...

        def _start(self, inst: Instance) -> None: ...

        def _pause(self, inst: Instance) -> None: ...

        def _admit(self, inst: Instance, room: int, limit_room: int) -> None: ...

        def _pend_entry(self, inst: Instance, r: int) -> tuple[int, float, int]: ...

        def _reserved_slots(self, inst: Instance) -> int: ...

        def _slot_preempt(self, inst: Instance) -> bool: ...

        def _swap_out(self, inst: Instance, r: int, ctx: int) -> None: ...

        def _evict_pending(self, inst: Instance) -> None: ...

        def _mem_preempt(self, inst: Instance) -> None: ...

        def _try_transfers(self, inst: Instance) -> None: ...

        def _iter_done(self, inst: Instance) -> None: ...

        def _kv_done(self, r: int, inst: Instance, src: Instance | None) -> None: ...

        def _complete(self, r: int) -> None: ...

        def _drop(self, r: int) -> None: ...

        def _capacity(self, sku: Any, parallelism: int) -> int: ...

        def _note_capacity(self, tag: str, cap: int) -> None: ...

        def _activate(self, inst: Instance) -> None: ...

        def _quiescent(self) -> bool: ...

        def _arm_sampling(self) -> None: ...

        def _sample(self) -> None: ...

        def _cumulative(self) -> tuple[float, float, float]: ...

        def _checkpoint(self) -> None: ...

        def _cumulative_at(self, t: float) -> tuple[float, float, float]: ...

        def _latencies(self, idx: list[int]) -> dict[str, np.ndarray]: ...

        def _unloaded_reference(self) -> dict[str, np.ndarray]: ...
