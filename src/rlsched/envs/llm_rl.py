"""The RL side of LLM autoscaling: act through the scaling manager, observe, reward.

Three pieces after the design note "RL 扩缩容管理器集成" (RL autoscaling manager integration),
with the simulator (:class:`~rlsched.core.llm.simulator.LLMSimulator`) in the role of the note's
``application`` (it holds the ``scaling_manager`` and the start state):

- :class:`RLActionExecutor` turns an action in ``[-1, 1]`` per pool into instance deltas and
  carries them out with ``scaling_manager.scale_up_full`` / ``scale_down_full``;
- :class:`RLStateCollector` builds a fixed-size float32 vector (names in :data:`FEATURES` /
  :func:`feature_names`) from the **ACTIVE** instances only, plus pool sizes with their
  scaling-up and draining counts;
- :class:`RLRewardCalculator` weighs SLO attainment, cost and a switch penalty.

The decision loop (``rlsched/LLMAutoscaling-v0`` and :mod:`rlsched.llm_runner`) is, every
``decision_interval`` seconds of simulated time: collect the state, let the policy act, execute
the action, advance the simulator, compute the reward over the interval that just passed.

Log lines go to the ``rlsched.envs.llm_rl`` logger at INFO (``[Action] ...`` for what was done,
``[Action Blocked] ...`` for what the limits refused); the scaling manager logs its own lines to
``rlsched.core.llm.scaling``. Nothing here raises on a blocked action.
"""

from __future__ import annotations

import dataclasses
import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rlsched.core.llm.cluster import Instance, InstanceConfig
from rlsched.core.llm.simulator import LLMSimulator
from rlsched.core.llm.sizing import BusyTracker, cluster_cost_per_s, pool_throughputs
from rlsched.core.llm.slo import percentile
from rlsched.errors import ConfigError

log = logging.getLogger("rlsched.envs.llm_rl")

DEFAULT_POOLS = ("prompt", "token")


def round_half_away(x: float) -> int:
    """Round to the nearest integer, halves away from zero (2.5 -> 3, -2.5 -> -3)."""
    return int(math.copysign(math.floor(abs(x) + 0.5), x))


def unit_actions(action: Any, pools: int) -> list[float]:
    """``action`` per pool in [-1, 1] as Python floats (one number: every pool's; not finite:
    0): numpy's ``where(isfinite(a), clip(a, -1, 1), 0)`` of the float64 action, the same
    floats without numpy's calls on two or three numbers (at every step of a rollout)."""
    a = np.asarray(action, dtype=np.float64).reshape(-1).tolist()
    if len(a) == 1:
        a = a * pools
    return [min(max(x, -1.0), 1.0) if math.isfinite(x) else 0.0 for x in a]


# ============================================================================ action executor
@dataclass
class ScalingOutcome:
    """What one pool's part of an action did."""

    tag: str
    requested: int
    """Instances asked for: ``round_half_away(clip(a, -1, 1) x action_scale_step)``."""
    done: int = 0
    """Signed number carried out (scale-ups started, or instances put in DRAINING)."""
    blocked: int = 0
    """How many of the requested instances the limits refused (always >= 0)."""
    instances: list[int] = field(default_factory=list)
    """Ids of the instances created or drained."""
    reason: str = ""


class RLActionExecutor:
    """Carries out an action through the simulator's
    :class:`~rlsched.core.llm.scaling.ScalingManager`.

    Action -> delta: for pool ``k``, ``delta_k = round_half_away(clip(a_k, -1, 1) x
    action_scale_step)``; so with the default step 5, ``|a| < 0.1`` does nothing, ``a = 0.3``
    adds 2 instances (1.5 rounds away from zero), ``a = -1`` drains 5. Non-finite entries count
    as 0.

    - ``delta > 0``: ``delta`` times ``scale_up_full(instance_cfg, parallelism, tag)`` with the
      start state's instance config and parallelism of ``tag`` (:meth:`_get_instance_config`,
      :meth:`_get_parallelism`; the server SKU is the start state's, ``server_sku=None``). Each
      new instance is ``SCALING_UP`` for ``scale_up_delay`` s, then ``ACTIVE``.
    - ``delta < 0``: ``|delta|`` times, the least loaded **ACTIVE** instance of ``tag`` is
      drained with ``scale_down_full`` (:meth:`least_loaded`: fewest ``sched_pending_tokens`` in
      the prompt pool, least ``sched_memory`` (committed KV) in the token and mixed pools; ties:
      the lower id). A draining instance takes no new work and is removed with its server once
      empty.

    Blocked actions (``max_total_instances`` reached, a pool at ``min_instances_per_pool``
    active instances, no active instance to drain) are logged (``[Action Blocked]``) and
    counted, never raised; the first refusal ends that pool's part of the action (the limit
    would refuse the rest too), the rest of the request counts as blocked.
    """

    def __init__(
        self,
        sim: LLMSimulator,
        pools: Sequence[str] = DEFAULT_POOLS,
        action_scale_step: int = 5,
    ) -> None:
        if not isinstance(action_scale_step, int) or action_scale_step < 1:
            raise ConfigError(f"action_scale_step must be an integer >= 1, got {action_scale_step}")
        self.sim = sim
        self.application = sim  # the note's name for the object holding the scaling manager
        self.scaling_manager = sim.scaling_manager
        self.pools = tuple(pools)
        if not self.pools or len(set(self.pools)) != len(self.pools):
            raise ConfigError(f"pools must be distinct tags, got {self.pools}")
        for tag in self.pools:
            sim.start_state.pool(tag)  # ConfigError when the start state has no such pool
        self.action_scale_step = int(action_scale_step)
        self.last: list[ScalingOutcome] = []

    # ------------------------------------------------------------------ configuration
    def _get_instance_config(self, tag: str) -> InstanceConfig:
        """The start state's instance config of ``tag`` (what every scale-up copies)."""
        return self.sim.start_state.get_instance_config(tag)

    def _get_parallelism(self, tag: str) -> int:
        return self.sim.start_state.get_parallelism(tag)

    # ------------------------------------------------------------------ arithmetic
    def deltas(self, action: Any) -> list[int]:
        """Instance deltas per pool for ``action`` (a scalar applies to every pool)."""
        return self.unit_deltas(unit_actions(action, len(self.pools)))

    def unit_deltas(self, units: list[float]) -> list[int]:
        """:meth:`deltas` of an action already in [-1, 1] per pool (:func:`unit_actions`'),
        for a caller that keeps the clipped action too."""
        if len(units) != len(self.pools):
            raise ValueError(f"action has {len(units)} entries, expected {len(self.pools)} (pools)")
        return [round_half_away(x * self.action_scale_step) for x in units]

    def least_loaded(self, tag: str) -> Instance | None:
        """The ACTIVE instance of ``tag`` a scale-down drains (see the class docstring)."""
        act = self.scaling_manager.get_active_instances(self.sim.instances, tag=tag)
        if not act:
            return None
        if tag == "prompt":
            return min(act, key=lambda i: (i.sched_pending_tokens, i.id))
        return min(act, key=lambda i: (i.sched_memory, i.id))

    # ------------------------------------------------------------------ execution
    def execute(self, action: Any, deltas: Sequence[int] | None = None) -> list[ScalingOutcome]:
        """Carry out ``action`` (``deltas``: its :meth:`deltas`, where the caller has them);
        returns one :class:`ScalingOutcome` per pool (also kept in :attr:`last`)."""
        deltas = self.deltas(action) if deltas is None else deltas
        out = [self._handle_scaling(d, t) for d, t in zip(deltas, self.pools, strict=True)]
        self.last = out
        return out

    def _handle_scaling(self, delta: int, tag: str) -> ScalingOutcome:
        res = ScalingOutcome(tag, delta)
        sm = self.scaling_manager
        if delta > 0:
            cfg, par = self._get_instance_config(tag), self._get_parallelism(tag)
            for k in range(delta):
                made = sm.scale_up_full(instance_cfg=cfg, parallelism=par, tag=tag, server_sku=None)
                if made is None:
                    res.blocked = delta - k
                    res.reason = f"max cluster size reached ({sm.max_total_instances})"
                    break
                server, inst = made
                res.done += 1
                res.instances.append(inst.id)
                log.info("[Action] Added %s instance %d on server %d", tag, inst.id, server.id)
        elif delta < 0:
            for k in range(-delta):
                target = self.least_loaded(tag)
                if target is None:
                    res.blocked = -delta - k
                    res.reason = f"no active {tag} instance"
                    break
                if not sm.scale_down_full(target):
                    res.blocked = -delta - k
                    res.reason = f"cannot remove {tag}, min limit reached"
                    break
                res.done -= 1
                res.instances.append(target.id)
                log.info("[Action] Removed %s instance %d", tag, target.id)
        if res.blocked:
            log.info(
                "[Action Blocked] %s: %d of %d %s blocked (%s)",
                tag,
                res.blocked,
                abs(delta),
                "scale-ups" if delta > 0 else "scale-downs",
                res.reason,
            )
        return res

    def summary(self, outcomes: Sequence[ScalingOutcome] | None = None) -> dict[str, Any]:
        """``{tag: {requested, done, blocked}}`` of the last (or the given) execution."""
        return {
            o.tag: {"requested": o.requested, "done": o.done, "blocked": o.blocked}
            for o in (self.last if outcomes is None else outcomes)
        }


# ============================================================================ state collector
#: Per-pool features, in order (``{tag}_{name}``), each documented in :class:`RLStateCollector`.
POOL_FEATURES = (
    "active",
    "scaling_up",
    "draining",
    "utilization",
    "kv_utilization",
    "committed_memory",
    "pending_prefill",
    "queue",
    "running",
    "demand",
)
#: Cluster-wide features, in order.
GLOBAL_FEATURES = (
    "arrival_rate",
    "arrival_rate_long",
    "prompt_tokens_mean",
    "output_tokens_mean",
    "router_queue",
    "slo_attainment",
    "ttft_slowdown_p90",
    "tbt_slowdown_p90",
    "e2e_slowdown_p90",
    "drop_rate",
)


def feature_names(pools: Sequence[str] = DEFAULT_POOLS) -> tuple[str, ...]:
    """Names of the collector's vector for ``pools``: per pool :data:`POOL_FEATURES`, then
    :data:`GLOBAL_FEATURES`, then ``last_action_{tag}`` per pool."""
    return (
        tuple(f"{t}_{f}" for t in pools for f in POOL_FEATURES)
        + GLOBAL_FEATURES
        + tuple(f"last_action_{t}" for t in pools)
    )


#: The feature names for the default pools ``("prompt", "token")``.
FEATURES = feature_names(DEFAULT_POOLS)

# (low, high) of each feature; values are clipped into them
_POOL_BOUNDS = {
    "active": (0.0, 100.0),
    "scaling_up": (0.0, 100.0),
    "draining": (0.0, 100.0),
    "utilization": (0.0, 1.0),
    "kv_utilization": (0.0, 1.0),
    "committed_memory": (0.0, 10.0),
    "pending_prefill": (0.0, 20.0),
    "queue": (0.0, 20.0),
    "running": (0.0, 20.0),
    "demand": (0.0, 100.0),
}
_GLOBAL_BOUNDS = {
    "arrival_rate": (0.0, 1000.0),
    "arrival_rate_long": (0.0, 1000.0),
    "prompt_tokens_mean": (0.0, 100.0),
    "output_tokens_mean": (0.0, 100.0),
    "router_queue": (0.0, 20.0),
    "slo_attainment": (0.0, 1.0),
    "ttft_slowdown_p90": (0.0, 100.0),
    "tbt_slowdown_p90": (0.0, 100.0),
    "e2e_slowdown_p90": (0.0, 100.0),
    "drop_rate": (0.0, 1.0),
}


def feature_bounds(pools: Sequence[str] = DEFAULT_POOLS) -> tuple[np.ndarray, np.ndarray]:
    """``(low, high)`` float32 arrays of the vector (the env's observation space)."""
    lo = [_POOL_BOUNDS[f][0] for _ in pools for f in POOL_FEATURES]
    hi = [_POOL_BOUNDS[f][1] for _ in pools for f in POOL_FEATURES]
    lo += [_GLOBAL_BOUNDS[f][0] for f in GLOBAL_FEATURES] + [-1.0] * len(pools)
    hi += [_GLOBAL_BOUNDS[f][1] for f in GLOBAL_FEATURES] + [1.0] * len(pools)
    return np.asarray(lo, np.float32), np.asarray(hi, np.float32)


class RLStateCollector:
    """A fixed-size float32 vector of the cluster, from **ACTIVE** instances only.

    Load features average over a pool's ACTIVE instances (``scaling_manager.
    get_active_instances``): an instance still ``SCALING_UP`` (no work yet) or ``DRAINING``
    (finishing old work, no new) would distort them. It shows up only in the pool counts.
    Per pool tag ``t`` (:data:`POOL_FEATURES`, in order):

    - ``t_active``, ``t_scaling_up``, ``t_draining``: instances in each state / ``count_scale``
      (default 10);
    - ``t_utilization``: mean busy fraction of the ACTIVE instances since the previous
      collection (time spent iterating / elapsed time), in [0, 1];
    - ``t_kv_utilization``: mean resident KV / KV capacity, in [0, 1];
    - ``t_committed_memory``: mean ``sched_memory`` / KV capacity (KV the router has committed,
      may exceed 1 when decodes wait), clipped to [0, 10];
    - ``t_pending_prefill``: ``log1p`` of the mean ``sched_pending_tokens`` (prompt tokens routed
      and not yet prefilled) per instance in units of the pool's ``max_batch_tokens`` (i.e.
      prefill iterations of backlog);
    - ``t_queue``: ``log1p`` of the mean requests waiting per instance (prefills queued, KV
      waiting to land, decodes waiting for a batch slot);
    - ``t_running``: ``log1p`` of the mean decodes in the running batch per instance;
    - ``t_demand``: the pool's demand over the last ``history`` s in instances' worth, /
      ``count_scale``: prompt-token arrival rate / one prompt instance's prefill throughput
      (prompt pool), output-token arrival rate / one token instance's decode throughput at the
      SLO batch (token pool), the sum for a mixed pool; throughputs from
      :func:`rlsched.policies.llm.pool_throughput` (the static sizing rule). Comparing
      ``t_demand`` with ``t_active`` tells how loaded a pool will be.

    Cluster-wide (:data:`GLOBAL_FEATURES`):

    - ``arrival_rate``: requests arrived over the last interval per second / ``rate_norm``
      (default 10 req/s); ``arrival_rate_long``: the same over the last ``history`` s (30);
    - ``prompt_tokens_mean``, ``output_tokens_mean``: mean prompt / output tokens of the
      requests that arrived in the last ``history`` s, in thousands (the token mix; kept from
      the previous collection when none arrived);
    - ``router_queue``: ``log1p`` of the requests waiting in the router for an active instance;
    - last interval's SLO statistics over the requests completed in it
      (:meth:`~rlsched.core.llm.simulator.LLMSimulator.window_stats`): ``slo_attainment`` (fraction
      within the limits at ``SLOConfig.attainment_level``, dropped ones missing),
      ``ttft_slowdown_p90``, ``tbt_slowdown_p90``, ``e2e_slowdown_p90`` (P90 slowdown divided
      by its limit at the attainment level: 1 = at the limit, clipped to [0, 100]); when no
      request completed in the interval, the previous values are kept (attainment starts at 1,
      slowdowns at 0); ``drop_rate``: dropped / (completed + dropped) in the interval.

    Then ``last_action_{t}``: the previous action per pool, clipped to [-1, 1] (so the switch
    penalty is a function of the state).
    """

    def __init__(
        self,
        sim: LLMSimulator,
        pools: Sequence[str] = DEFAULT_POOLS,
        history: float = 30.0,
        count_scale: float = 10.0,
        rate_norm: float = 10.0,
    ) -> None:
        if history <= 0 or count_scale <= 0 or rate_norm <= 0:
            raise ConfigError("history, count_scale and rate_norm must be > 0")
        self.sim = sim
        self.scaling_manager = sim.scaling_manager
        self.pools = tuple(pools)
        self.names = feature_names(self.pools)
        self.low, self.high = feature_bounds(self.pools)
        self.history = float(history)
        self.count_scale = float(count_scale)
        self.rate_norm = float(rate_norm)
        self.throughput = pool_throughputs(
            sim.requests, sim.start_state, sim.perf_model, sim.slo, self.pools
        )
        self.reset()

    def reset(self) -> None:
        """Forget the previous collection (call when the simulator starts over)."""
        self._busy = BusyTracker()
        self._last_t = self.sim.now
        self._slo = [1.0, 0.0, 0.0, 0.0]
        self._mix = [0.0, 0.0]
        self.last_window: dict[str, Any] | None = None

    def collect(
        self,
        last_action: np.ndarray | Sequence[float] | None = None,
        window: Mapping[str, Any] | None = None,
    ) -> np.ndarray:
        """The vector now. ``window``: :meth:`LLMSimulator.window_stats` of the interval since
        the previous collection, if the caller already has it (else computed here)."""
        sim = self.sim
        now = sim.now
        if window is None:
            window = sim.window_stats(self._last_t)
        self.last_window = dict(window)
        long = sim.arrival_stats(max(0.0, now - self.history)) if now > 0 else None
        v: list[float] = []
        sm = self.scaling_manager
        for tag in self.pools:
            sizes = sm.pool_sizes(tag)
            act = sm.get_active_instances(sim.instances, tag=tag)
            util = self._busy.utilization(act, now)
            n = len(act)
            if n:
                kv = sum(i.kv_utilization for i in act) / n
                mem = sum(i.memory_utilization for i in act) / n
                mbt = sum(i.config.max_batch_tokens for i in act) / n
                pend = sum(i.sched_pending_tokens for i in act) / n / mbt
                queue = sum(i.queue_len for i in act) / n
                running = sum(len(i.running) for i in act) / n
                u = sum(util) / n
            else:
                kv = mem = pend = queue = running = u = 0.0
            demand = self._demand(tag, long)
            v += [
                sizes["active"] / self.count_scale,
                sizes["scaling_up"] / self.count_scale,
                sizes["draining"] / self.count_scale,
                u,
                kv,
                mem,
                math.log1p(pend),
                math.log1p(queue),
                math.log1p(running),
                demand / self.count_scale,
            ]
        span = now - float(window.get("since", self._last_t))
        rate = window["arrivals"] / span if span > 0 else 0.0
        rate_long = 0.0
        if long is not None:
            lspan = now - long["since"]
            rate_long = long["arrivals"] / lspan if lspan > 0 else 0.0
            if long["arrivals"]:
                self._mix = [long["mean_prompt_tokens"] / 1e3, long["mean_output_tokens"] / 1e3]
        completed = int(window["completed"])
        dropped = int(window["dropped"])
        if completed or dropped:
            lim = sim.slo.limits(sim.slo.attainment_level)
            att = window["slo_attainment"]
            self._slo = [float(att) if att == att else self._slo[0]]
            for m in ("ttft", "tbt", "e2e"):
                sd = np.asarray(window[f"slowdown_{m}"])
                self._slo.append(
                    percentile(sd, 90) / lim[m]
                    if len(sd)
                    else (100.0 if dropped else 0.0)
                )
        drop_rate = dropped / (completed + dropped) if completed + dropped else 0.0
        v += [
            rate / self.rate_norm,
            rate_long / self.rate_norm,
            *self._mix,
            math.log1p(sim.router_queue_len),
            *self._slo,
            drop_rate,
        ]
        la = np.zeros(len(self.pools)) if last_action is None else np.asarray(last_action, float)
        la = np.where(np.isfinite(la), np.clip(la.reshape(-1), -1.0, 1.0), 0.0)
        if la.size == 1:
            la = np.repeat(la, len(self.pools))
        v += [float(x) for x in la]
        self._last_t = now
        out = np.asarray(v, dtype=np.float32)
        return np.clip(out, self.low, self.high)

    def _demand(self, tag: str, long: Mapping[str, Any] | None) -> float:
        if long is None:
            return 0.0
        span = long["now"] - long["since"]
        if span <= 0:
            return 0.0
        p_rate = long["prompt_tokens"] / span
        o_rate = long["output_tokens"] / span
        tp = self.throughput[tag]
        if tag == "prompt":
            return p_rate / tp.prefill_tokens_per_s
        if tag == "token":
            return o_rate / tp.decode_tokens_per_s
        return p_rate / tp.prefill_tokens_per_s + o_rate / tp.decode_tokens_per_s

    def as_dict(self, vector: np.ndarray) -> dict[str, float]:
        """``{name: value}`` of a collected vector."""
        return {k: float(x) for k, x in zip(self.names, vector, strict=True)}


# ============================================================================ reward
@dataclass(frozen=True)
class ScalingRewardWeights:
    """Weights of :class:`RLRewardCalculator` (defaults as in the issue: SLO 2.0, cost 0.5)."""

    slo: float = 2.0
    cost: float = 0.5
    switch: float = 0.1
    """Per pool whose scaling direction reverses (see :class:`RLRewardCalculator`)."""
    magnitude: float = 0.05
    """Per pool, times ``|delta| / action_scale_step`` (in [0, 1])."""
    slo_target: float | None = None
    """SLO attainment an operator requires (None: no constraint). Set, each interval pays
    ``slo_penalty x (slo_target - attainment) x n / n_mean`` (``n``: requests completed or
    dropped in it, ``n_mean``: the episode's requests per interval): the Lagrangian of
    "minimise cost subject to attainment >= target" with a fixed multiplier
    (:data:`SLO_CONSTRAINED`)."""
    slo_penalty: float = 20.0
    """The multiplier: steep, so that no saving of cost is worth a miss (an episode 10 points
    below the target pays 2.0 per interval, four times the reference cluster's whole cost
    term)."""
    cost_penalty: float = 0.0
    """With a reference policy (the env's ``slo_reference``): the multiplier of the cost spent
    beyond the reference's by the same time on the same episode (the growth of ``max(0, own
    cost so far - the reference's)``, in the units of ``cost``); 0: none. The cost side of "at
    least the reference's attainment at no more than its cost"."""

    @staticmethod
    def coerce(value: ScalingRewardWeights | Mapping[str, float] | None) -> ScalingRewardWeights:
        if value is None:
            return ScalingRewardWeights()
        if isinstance(value, ScalingRewardWeights):
            return value
        _check_fields(ScalingRewardWeights, value, "reward weight(s)")
        return ScalingRewardWeights(
            **{k: (None if v is None else float(v)) for k, v in value.items()}
        )


def _check_fields(cls: type, value: Mapping[str, Any], what: str) -> None:
    """A :class:`ConfigError` naming the keys of ``value`` that are not fields of ``cls``."""
    known = {f.name for f in dataclasses.fields(cls)}
    unknown = set(value) - known
    if unknown:
        raise ConfigError(f"unknown {what} {sorted(unknown)}; known: {sorted(known)}")


def _hinge_growth(own: float, ref: float, before: float) -> tuple[float, float]:
    """``(growth, excess)``: the excess ``max(0, own - ref)`` and how much it grew from
    ``before`` (the reference hinges of :class:`RLRewardCalculator`)."""
    excess = max(0.0, own - ref)
    return excess - before, excess


def _so_far(per_interval: np.ndarray, intervals: int) -> float:
    """A reference's running total after ``intervals`` intervals (its last entry beyond)."""
    return float(per_interval[min(intervals, len(per_interval) - 1)])


@dataclass
class SLODual:
    """The SLO multiplier (``slo_penalty``) learned alongside the policy by dual ascent, one per
    kind of episode: the env's ``slo_dual``.

    One fixed multiplier trades the kinds of episode against each other: where misses are
    cheap to avoid it over-provisions, where they are dear it gives attainment up. Here each
    episode falls in a bucket by its load (``rate_scale`` against ``load_edges``) and request
    mix (the window's mean prompt tokens over mean output tokens against ``mix_edges``), the
    env charges that bucket's multiplier, and after the episode the bucket's multiplier moves
    by ``lr x violation``, clipped to ``[low, high]``; ``violation`` is how far the episode's
    attainment fell short of the constraint, ``reference's - own + margin`` with an
    ``slo_reference``, ``slo_target - own + margin`` without (negative when it held, so the
    multiplier falls where the constraint holds with room and rises where it does not). The
    training loop gathers every env's episodes into one table and hands it back to them
    (:class:`rlsched.train.trainer.DualAscent`); an env on its own keeps its start values, so
    evaluations score every episode with ``init`` (the ``slo_penalty`` weight) throughout.
    """

    lr: float = 50.0
    """Multiplier change per unit of violation (attainment as a fraction): 50 moves it by 1
    for an episode 2 points short."""
    margin: float = 0.0
    """Attainment the constraint asks beyond the reference's (or the target)."""
    low: float = 1.0
    """Smallest multiplier: misses always cost something."""
    high: float = 200.0
    """Largest multiplier."""
    load_edges: tuple[float, ...] = (1.5, 2.5)
    """Bucket edges of the episode's rate scale."""
    mix_edges: tuple[float, ...] = (10.0, 40.0)
    """Bucket edges of the episode's mean prompt over mean output tokens (conv about 8)."""
    init: float = 20.0
    """The multiplier of a bucket not yet updated (the env sets it to ``slo_penalty``)."""
    table: dict[str, float] = field(default_factory=dict)
    """Bucket -> multiplier, for the buckets updated so far."""

    def __post_init__(self) -> None:
        self.load_edges, self.mix_edges = tuple(self.load_edges), tuple(self.mix_edges)
        for name in ("load_edges", "mix_edges"):
            e = getattr(self, name)
            if list(e) != sorted(e) or any(not x > 0 for x in e):
                raise ConfigError(f"slo_dual {name} must be increasing and > 0, got {list(e)}")
        if not (self.lr >= 0 and 0 < self.low <= self.init <= self.high):
            raise ConfigError(
                f"slo_dual needs lr >= 0 and 0 < low <= init <= high, got lr={self.lr}, "
                f"low={self.low}, init={self.init}, high={self.high}"
            )

    @staticmethod
    def coerce(value: SLODual | Mapping[str, Any], init: float) -> SLODual:
        """An :class:`SLODual` from a mapping of its fields (``init`` unless given)."""
        if isinstance(value, SLODual):
            return value
        _check_fields(SLODual, value, "slo_dual field(s)")
        return SLODual(**{"init": init, **value})

    def bucket(self, load: float, mix: float) -> str:
        """The bucket of an episode at rate scale ``load`` with request mix ``mix``."""
        i = int(np.searchsorted(self.load_edges, load, side="right"))
        j = int(np.searchsorted(self.mix_edges, mix, side="right"))
        return f"load{i}-mix{j}"

    def multiplier(self, key: str) -> float:
        return self.table.get(key, self.init)

    def update(self, key: str, violation: float) -> float:
        """One dual-ascent step of bucket ``key``; returns its new multiplier."""
        new = float(np.clip(self.multiplier(key) + self.lr * violation, self.low, self.high))
        self.table[key] = new
        return new


#: The operators' objective (issue 13, item 3): cost minimised subject to SLO attainment of
#: at least 0.9, as a Lagrangian with a steep fixed multiplier (docs/llm_autoscaling.md,
#: "Objective").
#: ``reward_weights=SLO_CONSTRAINED`` or ``--env-arg reward_weights='{"slo": 0,
#: "slo_target": 0.9}'``.
SLO_CONSTRAINED: dict[str, float] = {"slo": 0.0, "slo_target": 0.9, "slo_penalty": 20.0}


class RLRewardCalculator:
    """``reward = w_slo x slo - w_cost x cost - w_switch x switches - w_magnitude x magnitude
    - w_penalty x gap`` (the last term only with a ``slo_target``).

    Over the decision interval that just passed (``stats`` = :meth:`LLMSimulator.window_stats`
    of it):

    - ``slo``: SLO attainment of the requests completed or dropped in the interval (fraction
      within the limits at ``SLOConfig.attainment_level``; dropped = missed), in [0, 1]. When
      none completed or was dropped, the previous interval's value is used (1.0 at the start of
      an episode): an interval without completions neither earns nor loses anything new, late
      requests are charged when they complete.
    - ``cost``: US$ spent on servers in the interval (every server alive, whatever its state,
      billed per second) divided by ``cost_reference x interval``, ``cost_reference`` being a
      reference cluster's US$ per second: 1.0 = spending what the reference cluster costs, 2.0
      = twice that. The env's default reference is the cluster the sizing rule
      (:func:`rlsched.core.llm.sizing.sizes_for_rates`) gives for the episode's *mean* demand,
      so the cost term means the same at every rate scale; :meth:`cost_rate` gives the start
      state's or any other cluster's.
    - ``switches`` (switch penalty, direction): the number of pools whose requested delta is
      non-zero and opposite in sign to that pool's last non-zero requested delta (scale up,
      then down, or down then up, even with idle intervals in between: thrashing).
    - ``magnitude`` (switch penalty, size): ``sum over pools of |requested delta| /
      action_scale_step``, in ``[0, len(pools)]``: every scaling action costs a little, big
      ones more, so doing nothing is preferred when it is as good.
    - ``gap`` (with ``slo_target``): ``(slo_target - attainment) x n / n_mean``, ``n`` the
      requests completed or dropped in the interval and ``n_mean`` the episode's requests per
      interval (``requests_per_interval``, which the env knows from its trace window; the mean
      so far when not given; 0 in an interval with none). Weighting by ``n`` makes the gaps
      of an episode whose requests all complete sum to ``(intervals) x (slo_target - the
      episode's attainment)``: the penalty follows the
      episode's attainment, which the verdicts judge, not a mean of per-interval
      attainments (clipping each interval at the target instead ranked the heuristics less
      like attainment, docs/llm_autoscaling.md). Above the target
      the term is a credit, as in a Lagrangian; :class:`SLODual` learns the multiplier
      alongside the policy (dual ascent), one per kind of episode.
    - ``gap`` against a reference (:attr:`reference_misses` set, the env's ``slo_reference``):
      instead of a target, the requests missed so far beyond what a reference policy (HPA)
      missed by the same time on the same episode, ``max(0, M_t - R_t)``, the term being its
      growth in the interval over ``n_mean``. It binds only while the policy is behind the
      reference: the gaps of an episode sum to its final excess, ``intervals x max(0, the
      reference's attainment - the episode's)`` when every request completes, so savings that
      keep the reference's attainment cost nothing (a linear target would only add a constant
      per episode).
    - ``cost_over`` (with :attr:`reference_costs`, the weight ``cost_penalty``): the growth in
      the interval of ``max(0, own cost so far - the reference's by the same time)``, the
      ``cost`` terms summed: the cost side of the same hinge, charged only while the policy
      has spent more than the reference.

    Default weights (:class:`ScalingRewardWeights`): SLO 2.0, cost 0.5, switch 0.1, magnitude
    0.05. So
    keeping every request within its SLO at the reference cluster's cost earns 1.5 per
    interval; doubling the cluster is worth it when it lifts attainment by more than 0.25.
    :attr:`components` holds the last call's terms.
    """

    def __init__(
        self,
        weights: ScalingRewardWeights | Mapping[str, float] | None = None,
        cost_reference: float = 1.0,
        action_scale_step: int = 5,
        pools: int = 2,
        requests_per_interval: float | None = None,
    ) -> None:
        if not cost_reference > 0:
            raise ConfigError("cost_reference must be > 0 (US$ per second)")
        self.weights = ScalingRewardWeights.coerce(weights)
        self.cost_reference = float(cost_reference)
        self.action_scale_step = int(action_scale_step)
        self.n_pools = int(pools)
        self.requests_per_interval = requests_per_interval
        self.reset()

    @staticmethod
    def cost_rate(start_state: Any, sizes: Mapping[str, int] | None = None) -> float:
        """US$ per second of a cluster of ``sizes[tag]`` servers per pool (default: the start
        state's; one server per pool when that is empty)."""
        if sizes is None:
            sizes = {t: p.num_instances for t, p in start_state.pools.items()}
            if not any(sizes.values()):
                sizes = dict.fromkeys(start_state.pools, 1)
        return cluster_cost_per_s(start_state, sizes)

    def reset(self) -> None:
        self._last_slo = 1.0
        self._n_seen = 0
        self._intervals = 0
        self._misses = 0.0
        self._excess = 0.0
        #: Requests the reference policy had missed after each interval of this episode
        #: (``[0]`` at its start; one more, the last, once its queue had drained); None: the
        #: gap is taken against ``slo_target``.
        self.reference_misses: np.ndarray | None = None
        #: The reference's cost so far after each interval (``[0]`` at its start), in the units
        #: of the ``cost`` term; None: no cost excess is charged.
        self.reference_costs: np.ndarray | None = None
        self._cost_sum = 0.0
        self._cost_excess = 0.0
        self._last_dir = [0] * self.n_pools
        self.components: dict[str, float] = {}

    def settle(self, missed: float) -> float:
        """The penalty owed at an episode's end for the requests still queued at its last
        decision, once they have drained (``missed``: the episode's misses, all requests
        counted), against the reference's last entry; added to the last interval's reward
        (and :attr:`components`). 0 without a reference: a target has no drained figure."""
        if self.reference_misses is None:
            return 0.0
        self._misses = float(missed)
        gap = self._excess_growth(float(self.reference_misses[-1]))
        extra = -self.weights.slo_penalty * gap
        if self.components:
            self.components["gap"] += gap
            self.components["reward"] += extra
        return extra

    @property
    def misses(self) -> float:
        """Requests missed (completed late or dropped) in the intervals so far."""
        return self._misses

    @property
    def cost_spent(self) -> float:
        """The ``cost`` terms of the intervals so far, summed."""
        return self._cost_sum

    def _n_mean(self) -> float:
        return self.requests_per_interval or self._n_seen / max(self._intervals, 1)

    def _excess_growth(self, ref: float) -> float:
        """The growth of ``max(0, misses - ref)`` since the last call, over ``n_mean``."""
        growth, self._excess = _hinge_growth(self._misses, ref, self._excess)
        return growth / max(self._n_mean(), 1e-9)

    def compute(self, stats: Mapping[str, Any], deltas: Sequence[int]) -> float:
        """The reward of one interval (see the class docstring); ``deltas``: the requested
        instance deltas per pool of the action taken at the start of the interval."""
        w = self.weights
        att = stats.get("slo_attainment", math.nan)
        completed = int(stats.get("completed", 0)) + int(stats.get("dropped", 0))
        if completed and att == att:
            self._last_slo = float(att)
        slo = self._last_slo
        span = float(stats["now"]) - float(stats["since"])
        cost = float(stats["cost"]) / (self.cost_reference * span) if span > 0 else 0.0
        switches = 0
        for k, d in enumerate(deltas):
            s = (d > 0) - (d < 0)
            if s:
                if self._last_dir[k] and s != self._last_dir[k]:
                    switches += 1
                self._last_dir[k] = s
        magnitude = sum(min(abs(int(d)), self.action_scale_step) for d in deltas) / max(
            self.action_scale_step, 1
        )
        self._n_seen += completed
        self._intervals += 1
        gap = 0.0
        if completed and att == att:
            self._misses += completed * (1.0 - float(att))
        if self.reference_misses is not None:
            gap = self._excess_growth(_so_far(self.reference_misses, self._intervals))
        elif w.slo_target is not None and completed and att == att:
            gap = (w.slo_target - float(att)) * completed / self._n_mean()
        self._cost_sum += cost
        over = 0.0
        if self.reference_costs is not None:
            ref_cost = _so_far(self.reference_costs, self._intervals)
            over, self._cost_excess = _hinge_growth(self._cost_sum, ref_cost, self._cost_excess)
        reward = (
            w.slo * slo
            - w.cost * cost
            - w.switch * switches
            - w.magnitude * magnitude
            - w.slo_penalty * gap
            - w.cost_penalty * over
        )
        self.components = {
            "slo": slo,
            "gap": gap,
            "cost": cost,
            "cost_over": over,
            "switches": float(switches),
            "magnitude": float(magnitude),
            "reward": float(reward),
        }
        return float(reward)
