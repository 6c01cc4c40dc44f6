"""Servers, instances and models of the LLM serving simulator.

**Servers** are machines of a named :class:`SKU` (a DGX-A100 or DGX-H100 class box: GPUs, GPU
memory, price per hour, idle and peak power). Each server hosts exactly one **instance**: one
copy of the model served with ``parallelism`` GPUs (tensor parallelism; the perf model has 2,
4 and 8 for llama2-70b). A server is billed for all its GPUs from its creation (scale-up
start) to its removal, whatever the instance uses.

An instance belongs to a **pool** by its ``tag``: ``prompt`` (prefill), ``token`` (decode) or
``mixed`` (both, no KV transfer, Orca / vLLM style batching).

**KV cache.** ``kv_bytes(tokens) = 2 x tokens x hidden x layers x dtype_bytes x kv_heads_ratio``
(keys and values for every layer). The default model is llama2-70b: hidden 8192, 80 layers,
fp16 (2 bytes), 69e9 parameters (138 GB of weights), ``kv_heads_ratio = 1``: the multi-head
formula, as splitwise-sim uses, 2.62 MB per token. The real llama2-70b uses grouped-query
attention with 8 KV heads of 64, which makes the cache 8x smaller (``kv_heads_ratio =
0.125``); the default keeps splitwise-sim's choice so results compare with it, and a start
state can set the ratio. An instance's KV capacity is its GPUs' memory minus the weights
(``parallelism x gpu_memory - weights``), counted in tokens: 209,501 tokens for llama2-70b on 8
x 80 GiB.
"""

from __future__ import annotations

import copy
import enum
from collections import deque
from dataclasses import dataclass, field, fields
from typing import Any

from rlsched.errors import ConfigError

GIB = 1024**3


@dataclass(frozen=True)
class SKU:
    """A server type."""

    name: str
    hardware: str
    """GPU name in the performance model (``a100-80gb``, ``h100-80gb``, ``h100-80gb-pcap``)."""
    gpus: int
    gpu_memory_gib: float
    cost_per_hour: float
    """US$ per server-hour."""
    idle_power_w: float
    peak_power_w: float
    """Power while an iteration runs (the server's TDP)."""


#: Server types, after splitwise-sim's hardware repo (DGX TDPs 6.5 / 10.2 kW, idle power
#: 1.5 / 2.8 kW from its power model) and the Splitwise paper's prices (US$2.21 and US$4.76 per
#: GPU-hour, i.e. 17.68 / 38.08 per 8-GPU server). ``dgx-h100-pcap`` is an H100 server power-capped
#: to 70 % (Splitwise-HHcap), priced as an H100.
SKUS: dict[str, SKU] = {
    s.name: s
    for s in (
        SKU("dgx-a100", "a100-80gb", 8, 80.0, 17.68, 1500.0, 6500.0),
        SKU("dgx-h100", "h100-80gb", 8, 80.0, 38.08, 2800.0, 10200.0),
        SKU("dgx-h100-pcap", "h100-80gb-pcap", 8, 80.0, 38.08, 2800.0, 7140.0),
    )
}
SKU_ALIASES = {"a100": "dgx-a100", "h100": "dgx-h100", "h100-pcap": "dgx-h100-pcap"}


def get_sku(name: str | SKU) -> SKU:
    """A SKU by name (``dgx-a100`` / ``a100``, ``dgx-h100`` / ``h100``, ``dgx-h100-pcap``)."""
    if isinstance(name, SKU):
        return name
    key = SKU_ALIASES.get(str(name).lower(), str(name).lower())
    try:
        return SKUS[key]
    except KeyError:
        raise ConfigError(f"unknown server SKU {name!r}; known: {', '.join(SKUS)}") from None


@dataclass(frozen=True)
class ModelSpec:
    """What the simulator needs to know of a model beyond the performance table."""

    name: str
    hidden: int
    layers: int
    dtype_bytes: int
    weights_bytes: float
    kv_heads_ratio: float = 1.0
    """KV heads / attention heads; 1 = the multi-head formula (splitwise-sim's)."""

    @property
    def kv_bytes_per_token(self) -> float:
        return 2.0 * self.hidden * self.layers * self.dtype_bytes * self.kv_heads_ratio

    def kv_bytes(self, tokens: int) -> float:
        """Bytes of KV cache for ``tokens`` tokens: ``2 x tokens x hidden x layers x dtype``."""
        return tokens * self.kv_bytes_per_token


MODELS: dict[str, ModelSpec] = {
    "llama2-70b": ModelSpec("llama2-70b", 8192, 80, 2, 138e9),
    "bloom-176b": ModelSpec("bloom-176b", 14336, 70, 2, 352e9),
}


def get_model(name: str, kv_heads_ratio: float | None = None) -> ModelSpec:
    try:
        m = MODELS[name]
    except KeyError:
        raise ConfigError(f"unknown model {name!r}; known: {', '.join(MODELS)}") from None
    if kv_heads_ratio is not None and kv_heads_ratio != m.kv_heads_ratio:
        if not 0 < kv_heads_ratio <= 1:
            raise ConfigError(f"kv_heads_ratio must be in (0, 1], got {kv_heads_ratio}")
        m = ModelSpec(m.name, m.hidden, m.layers, m.dtype_bytes, m.weights_bytes, kv_heads_ratio)
    return m


@dataclass(frozen=True)
class InstanceConfig:
    """Batching and memory limits of one instance (splitwise-sim's ``Splitwise`` instance)."""

    max_batch_size: int = 512
    """Requests in one iteration (prefills + decodes)."""
    max_batch_tokens: int = 2048
    """Tokens processed in one iteration: a prefill counts its prompt, a decode 1. A single
    prefill larger than this runs alone (as in splitwise-sim), so long prompts are served."""
    max_preemptions: int = 4
    """A request preempted this many times is no longer chosen as a victim while others can be,
    and is admitted first (splitwise-sim's rule)."""
    kv_headroom_iterations: int = 8
    """KV landing on a decode instance (transfer or swap-in) must leave room for this many
    iterations of the running batch's growth, so a preempted request does not swap straight
    back in (no thrashing)."""

    def __post_init__(self) -> None:
        for f in fields(self):
            v = getattr(self, f.name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise ConfigError(f"instance config {f.name} must be an integer >= 1, got {v!r}")

    @staticmethod
    def from_dict(d: dict[str, Any] | None) -> InstanceConfig:
        d = dict(d or {})
        d.pop("instance_type", None)  # splitwise-sim's start states name the class
        d.pop("pipeline_parallelism", None)
        known = {f.name for f in fields(InstanceConfig)}
        unknown = set(d) - known
        if unknown:
            raise ConfigError(
                f"unknown instance config key(s) {sorted(unknown)}; known: {sorted(known)}"
            )
        return InstanceConfig(**d)


class InstanceState(enum.Enum):
    SCALING_UP = "scaling_up"
    ACTIVE = "active"
    DRAINING = "draining"
    REMOVED = "removed"


@dataclass(eq=False)
class Server:
    """One machine; billed from ``created`` to ``removed``."""

    id: int
    sku: SKU
    created: float
    removed: float | None = None
    instance: Instance | None = field(default=None, repr=False)

    def __deepcopy__(self, memo: dict[int, Any]) -> Server:
        # the SKU is frozen: shared (a simulator copy at every rollout of a search)
        new = Server(self.id, self.sku, self.created, self.removed)
        memo[id(self)] = new
        if self.instance is not None:
            new.instance = copy.deepcopy(self.instance, memo)
        return new

    def alive_seconds(self, now: float, since: float = 0.0) -> float:
        end = now if self.removed is None else min(self.removed, now)
        return max(0.0, end - max(self.created, since))


TAGS = ("prompt", "token", "mixed")


class Instance:
    """One model instance on one server, with its queues (driven by the simulator; read it,
    do not change it).

    Identity: ``id``, ``tag`` (pool), ``state`` (:class:`InstanceState`), ``server``,
    ``config`` (:class:`InstanceConfig`), ``parallelism``; ``created`` / ``activated`` /
    ``removed`` times.

    Scheduler view (splitwise-sim's names): ``sched_pending_tokens`` = prompt tokens routed here
    and not yet prefilled (queued + running); ``sched_memory`` = KV bytes the router has
    committed here (a prefill holds ``prompt + 1`` tokens until its KV is shipped; a decode
    holds ``prompt + output`` tokens, its final size, until it completes), also in tokens as
    ``sched_memory_tokens``.

    Now: ``kv_used`` / ``kv_capacity`` (tokens really resident / capacity; decodes grow one
    token per iteration), ``kv_utilization``, ``batch_size`` (requests in the current
    iteration), ``running`` (decodes in the batch), ``queue_len`` (prefills queued + KV waiting
    to land + decodes waiting for a slot), ``busy``. Totals: ``busy_time``, ``utilization(now)``,
    ``prefill_iterations``, ``decode_iterations``, ``preemptions``.
    """

    __slots__ = (
        "_dec_heap",
        "_pend_heap",
        "_run_b",
        "_run_dt",
        "_run_k",
        "_run_prefills",
        "_run_start",
        "_seq",
        "_version",
        "activated",
        "busy_time",
        "config",
        "created",
        "decode_iterations",
        "id",
        "iter_count",
        "kv_bytes_per_token",
        "kv_capacity",
        "kv_used",
        "kv_wait",
        "parallelism",
        "preemptions",
        "prefill_iterations",
        "prefill_queue",
        "prompt_time",
        "removed",
        "running",
        "sched_memory_tokens",
        "sched_pending_tokens",
        "server",
        "state",
        "tag",
        "tiebreak",
        "token_time",
    )

    def __init__(
        self,
        id: int,
        tag: str,
        server: Server,
        config: InstanceConfig,
        parallelism: int,
        kv_capacity: int,
        kv_bytes_per_token: float,
        prompt_time: Any,
        token_time: Any,
        created: float,
    ) -> None:
        self.id = id
        self.tag = tag
        self.server = server
        self.config = config
        self.parallelism = parallelism
        self.state = InstanceState.SCALING_UP
        self.kv_capacity = kv_capacity
        """KV cache capacity in tokens."""
        self.kv_bytes_per_token = kv_bytes_per_token
        self.prompt_time = prompt_time
        self.token_time = token_time
        self.created = created
        self.tiebreak = 0.0
        """Seeded random key breaking routing ties between equally loaded instances."""
        self.activated: float | None = None
        self.removed: float | None = None
        # scheduler bookkeeping
        self.sched_pending_tokens = 0
        self.sched_memory_tokens = 0
        # queues and batch state
        self.prefill_queue: Any = None  # deque of request indices (set by the simulator)
        self.kv_wait: Any = None  # deque of (request, tokens, source instance or None)
        self._pend_heap: list = []  # decodes with resident KV waiting for a batch slot
        self._dec_heap: list = []  # running decodes: (finish_iteration, seq, request)
        self.running: dict[int, int] = {}  # running decode request -> admission seq
        self.iter_count = 0
        self.kv_used = 0
        self._seq = 0
        self._version = 0
        self._run_start = -1.0  # < 0: idle
        self._run_dt = 0.0
        self._run_k = 0
        self._run_b = 0
        self._run_prefills: list = []
        # statistics
        self.busy_time = 0.0
        self.prefill_iterations = 0
        self.decode_iterations = 0
        self.preemptions = 0

    #: Numbers, strings, the state, the frozen config and the memoised timing functions:
    #: shared by a copy (:meth:`__deepcopy__`)
    _COPY_SAME = (
        "_run_b", "_run_dt", "_run_k", "_run_start", "_seq", "_version", "activated",
        "busy_time", "config", "created", "decode_iterations", "id", "iter_count",
        "kv_bytes_per_token", "kv_capacity", "kv_used", "parallelism", "preemptions",
        "prefill_iterations", "prompt_time", "removed", "sched_memory_tokens",
        "sched_pending_tokens", "state", "tag", "tiebreak", "token_time",
    )  # fmt: skip

    def __deepcopy__(self, memo: dict[int, Any]) -> Instance:
        """The same copy as ``copy.deepcopy``'s generic one, without its per-slot dispatch (a
        simulator copy, at every rollout of a search, is mostly its instances; a snapshot of
        8 instances 0.71-0.76 ms against 1.03-1.05 ms, docs/benchmarks.md): the containers are
        rebuilt from their immutable items; the server and the source instances of KV in
        flight go through ``memo``."""
        new = object.__new__(Instance)
        memo[id(self)] = new
        for name in Instance._COPY_SAME:
            setattr(new, name, getattr(self, name))
        new.server = copy.deepcopy(self.server, memo)
        new.prefill_queue = None if self.prefill_queue is None else deque(self.prefill_queue)
        new.kv_wait = None if self.kv_wait is None else deque(
            (r, c, None if src is None else copy.deepcopy(src, memo))
            for r, c, src in self.kv_wait
        )  # fmt: skip
        new._pend_heap = list(self._pend_heap)  # (priority, arrival, request) tuples
        new._dec_heap = list(self._dec_heap)  # (finish iteration, seq, request) tuples
        new.running = dict(self.running)
        new._run_prefills = list(self._run_prefills)
        return new

    # ------------------------------------------------------------------ views
    @property
    def busy(self) -> bool:
        """An iteration (or a run of decode iterations) is in progress."""
        return self._run_start >= 0.0

    @property
    def sched_memory(self) -> float:
        """Committed KV in bytes (see the class docstring)."""
        return self.sched_memory_tokens * self.kv_bytes_per_token

    @property
    def kv_capacity_bytes(self) -> float:
        return self.kv_capacity * self.kv_bytes_per_token

    @property
    def kv_utilization(self) -> float:
        """Resident KV / capacity, in [0, 1]."""
        return self.kv_used / self.kv_capacity if self.kv_capacity else 0.0

    @property
    def memory_utilization(self) -> float:
        """Committed KV (``sched_memory``) / capacity; may exceed 1 when decodes queue."""
        return self.sched_memory_tokens / self.kv_capacity if self.kv_capacity else 0.0

    @property
    def batch_size(self) -> int:
        """Requests in the current iteration (prefills + running decodes)."""
        return len(self._run_prefills) + len(self.running)

    @property
    def queue_len(self) -> int:
        """Requests waiting here: prefills queued, KV waiting to land, decodes waiting a slot."""
        return len(self.prefill_queue or ()) + len(self.kv_wait or ()) + len(self._pend_heap)

    @property
    def decode_waiting(self) -> int:
        return len(self._pend_heap)

    def busy_seconds(self, now: float) -> float:
        """Seconds spent iterating since creation, up to ``now``."""
        return self.busy_time + (now - self._run_start if self.busy else 0.0)

    def utilization(self, now: float) -> float:
        """Fraction of the time from activation (or creation) to ``now`` (or removal) spent
        iterating."""
        start = self.activated if self.activated is not None else self.created
        if self.removed is not None:
            now = min(now, self.removed)
        span = now - start
        return min(1.0, self.busy_seconds(now) / span) if span > 0 else 0.0

    @property
    def idle_and_empty(self) -> bool:
        """No work at all: nothing queued, running, landing or committed."""
        return (
            not self.busy
            and not self.prefill_queue
            and not self.kv_wait
            and not self._pend_heap
            and not self.running
            and self.kv_used == 0
            and self.sched_memory_tokens == 0
            and self.sched_pending_tokens == 0
        )

    def __repr__(self) -> str:
        return (
            f"Instance(id={self.id}, tag={self.tag!r}, state={self.state.value}, "
            f"server={self.server.id}, sku={self.server.sku.name}, tp={self.parallelism})"
        )
