"""LLMAutoscaling-v0: scale the prompt and token pools of a disaggregated LLM serving cluster."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, TypedDict

import numpy as np
from gymnasium import spaces

from rlsched.core.llm.scaling import StartState
from rlsched.core.llm.simulator import LLMSimulator
from rlsched.core.llm.sizing import mean_rates, pool_throughputs, sizes_for_rates
from rlsched.core.llm.slo import SLOConfig
from rlsched.core.llm.trace import LLMRequests
from rlsched.data.azure_llm import load_requests
from rlsched.envs.base import Metric, RlschedEnv
from rlsched.envs.llm_rl import (
    DEFAULT_POOLS,
    SLO_CONSTRAINED,
    RLActionExecutor,
    RLRewardCalculator,
    RLStateCollector,
    ScalingRewardWeights,
    SLODual,
    feature_bounds,
    feature_names,
    unit_actions,
)
from rlsched.scenarios import check_scenario, with_presets

#: Keys of ``info["metrics"]`` taken from :meth:`LLMSimulator.results`.
RESULT_METRICS = (
    "requests",
    "dropped",
    "ttft_p50",
    "ttft_p90",
    "ttft_p99",
    "tbt_p50",
    "tbt_p90",
    "tbt_p99",
    "e2e_p50",
    "e2e_p90",
    "e2e_p99",
    "slo_attainment",
    "slo_attainment_p50",
    "slo_attainment_p99",
    "slo_met",
    "cost",
    "gpu_hours",
    "energy_kwh",
    "scale_up_actions",
    "scale_down_actions",
    "blocked_actions",
    "preemptions",
    "duration",
)


def _coerce_slo(slo: SLOConfig | Mapping[str, Any] | None) -> SLOConfig:
    if slo is None:
        return SLOConfig()
    if isinstance(slo, SLOConfig):
        return slo
    # values as given (lists as tuples): SLOConfig checks them
    fields: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in slo.items()}
    return SLOConfig(**fields)


class SimSettings(TypedDict):
    """The :class:`LLMSimulator` arguments an env fixes for all its episodes
    (:attr:`LLMAutoscalingEnv.sim_kwargs`)."""

    min_instances_per_pool: int
    max_total_instances: int
    scale_up_delay: float
    drain_check_interval: float
    compat: str | None


def _scale_range(
    name: str, value: float | Sequence[float], zero: bool = False
) -> tuple[float, float]:
    """A positive factor (``zero``: or 0), or ``[lo, hi]`` drawn per episode, as ``(lo, hi)``."""
    try:
        if isinstance(value, int | float):
            lo = hi = float(value)
        else:
            lo, hi = (float(x) for x in value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number or [lo, hi], got {value!r}") from None
    if not (lo >= 0 if zero else lo > 0) or not lo <= hi or not np.isfinite(hi):
        ge, le = (">=", "<=") if zero else (">", "<")
        raise ValueError(f"{name} must be {ge} 0 (or [lo, hi] with 0 {le} lo <= hi): {value!r}")
    return lo, hi


#: The policies an ``slo_reference`` can name: ``name -> factory(env)`` of an object with
#: ``act(observation, mask)``. The heuristics of :mod:`rlsched.policies.llm` register here when
#: that module is imported, so the env plays them without importing the layer above it.
REFERENCE_POLICIES: dict[str, Callable[[Any], Any]] = {}


#: How a ``[lo, hi]`` rate scale is drawn per episode (``rate_scale_draw``).
SCALE_DRAWS = ("uniform", "log")


def _draw(rng: np.random.Generator, bounds: tuple[float, float], how: str = "uniform") -> float:
    """A factor drawn from ``(lo, hi)``, uniformly or log-uniformly (``"log"``: as often in
    0.5-1x as in 2-4x); a fixed one (lo == hi) draws nothing, so fixed settings replay the
    episodes they always did. Both draw one number, so the draws after it are the same."""
    lo, hi = bounds
    if not hi > lo:
        return lo
    if how == "log":
        return float(np.exp(rng.uniform(np.log(lo), np.log(hi))))
    return float(rng.uniform(lo, hi))


class LLMAutoscalingEnv(RlschedEnv):
    """
    ## Description

    A disaggregated (Splitwise-style) LLM serving cluster, simulated by
    :class:`~rlsched.core.llm.simulator.LLMSimulator` over a real request trace (the Azure LLM
    inference trace 2023: ``azure-llm:conv`` or ``azure-llm:code``): prompt instances prefill,
    token instances decode, each instance a whole 8-GPU server billed from creation to removal.
    Every ``decision_interval`` seconds of simulated time (2 s) the agent scales each pool
    (``pools``, default ``("prompt", "token")``); new instances serve after ``scale_up_delay``
    s (10), removed ones drain their work first. The aim: keep requests within their latency
    SLOs (slowdowns against an unloaded run, Splitwise's limits) at the lowest server cost.

    The pieces follow the design note on the RL autoscaling manager (see
    ``docs/llm_autoscaling.md``): :class:`~rlsched.envs.llm_rl.RLActionExecutor` acts through the
    scaling manager, :class:`~rlsched.envs.llm_rl.RLStateCollector` observes the ACTIVE instances,
    :class:`~rlsched.envs.llm_rl.RLRewardCalculator` rewards.

    ## Action Space

    ``Box(-1, 1, (len(pools),), float32)``: per pool, the fraction of ``action_scale_step`` (5)
    instances to add (> 0) or drain (< 0); ``delta = round_half_away(a x action_scale_step)``,
    so ``|a| < 0.1`` does nothing. A scalar is applied to every pool. Scale-ups copy the start
    state's pool settings; a scale-down drains the least loaded ACTIVE instance (fewest pending
    prompt tokens / least committed KV). Actions the limits refuse (``max_total_instances``,
    ``min_instances_per_pool`` active per pool) are logged and ignored, never an error.
    :meth:`action_masks` is all True (one entry per pool; nothing is ever invalid, so the
    invalid-action rule of :mod:`rlsched.envs.base` never applies), for callers that pass
    masks to every policy.

    ## Observation Space

    ``Box(low, high, (len(FEATURES),), float32)``, the collector's vector, names in
    :attr:`feature_names` (for the default pools :data:`rlsched.envs.llm_rl.FEATURES`): per pool
    the active / scaling-up / draining counts, utilisation, KV use, committed memory, prefill
    backlog, queue, running batch and demand in instances' worth; cluster-wide the arrival
    rates, token mix, router queue, last interval's SLO attainment and P90 slowdowns over their
    limits, drop rate; and the previous action. Every entry is documented and normalised in
    :class:`~rlsched.envs.llm_rl.RLStateCollector`.

    ## Rewards

    Per interval (:class:`~rlsched.envs.llm_rl.RLRewardCalculator`): ``2.0 x SLO attainment of the
    requests completed in it - 0.5 x server cost / the reference cluster's cost - 0.1 x
    direction reversals - 0.05 x sum |delta| / action_scale_step`` (weights:
    ``reward_weights``). The reference cluster (``cost_reference``): ``"sized"`` (default) is
    the cluster the sizing rule (:func:`rlsched.policies.llm.sizes_for_rates`) gives for the
    episode's mean demand, so the cost term weighs the same at every rate scale (1.0 = as
    expensive as a static cluster sized for the average load; the start state's cluster when it
    has a mixed pool); ``"start"`` the start state's cluster; a number, that many US$ per hour.

    ## Starting State

    The start state's cluster (``start_state``: a YAML path, a dict or a
    :class:`~rlsched.core.llm.scaling.StartState`; default 2 prompt DGX-H100 + 2 token DGX-A100
    instances of llama2-70b, TP 8), idle, at time 0 of the episode's window. The trace is
    ``dataset`` with arrival times divided by ``rate_scale`` (a number, or ``[lo, hi]``: drawn
    per episode from the reset seed, uniformly or, with ``rate_scale_draw="log"``,
    log-uniformly); the window is ``episode_duration`` s (600)
    starting at ``episode_start`` (None: drawn uniformly from the reset seed among the starts
    that fit in the trace), or the whole trace when ``episode_duration`` is None or longer.
    Routing ties in the simulator are seeded from the reset seed too, so an episode replays
    exactly under its seed.

    ## Episode End

    Truncated (a time limit on a continuing task) when the window's time is over: after
    ``ceil(episode_duration / decision_interval)`` steps, the last arrival of the whole trace
    in whole-trace mode. Then, with ``drain_at_end`` (default), the simulator runs on without
    decisions until every request in the window has completed (the cluster kept as it is), and
    ``info["metrics"]`` holds the episode's results: ``requests`` (completed), ``dropped``,
    P50 / P90 / P99 of TTFT, TBT and E2E (s), ``slo_attainment`` (P90 limits; also ``_p50``,
    ``_p99``), ``slo_met`` (Splitwise's nine percentile checks, 0/1), ``cost`` (US$),
    ``gpu_hours``, ``energy_kwh``, ``scale_up_actions``, ``scale_down_actions``,
    ``blocked_actions``, ``preemptions``, ``duration`` (s simulated), ``mean_instances`` and
    ``mean_{pool}_instances`` (time-averaged ACTIVE instances over the decisions),
    ``rate_scale``, ``episode_start``, ``arrivals`` (requests in the window).

    ## Arguments

    ``dataset`` (``"azure-llm:conv"``; any :func:`~rlsched.data.azure_llm.load_requests` name or an
    :class:`~rlsched.core.llm.trace.LLMRequests`), ``rate_scale`` (1.0), ``rate_scale_draw``
    (``"uniform"``; ``"log"``: a ``[lo, hi]`` rate scale drawn log-uniformly, so that low loads
    are trained on as much as high ones), ``poisson`` (False:
    re-draw arrivals as a Poisson process of the same mean rate, seeded by the reset seed),
    ``burst`` (0: none; ``sigma`` > 0: re-draw them as a bursty Cox process instead, the mean
    rate times a log-normal factor of that sigma per ``burst_window`` seconds of the trace, 30;
    :meth:`~rlsched.core.llm.trace.LLMRequests.resample_bursty`; ``[lo, hi]`` with
    ``0 <= lo < hi``: sigma drawn uniformly per episode, arrivals of every burstiness),
    ``prompt_scale`` and ``output_scale`` (1.0: every request's prompt / output tokens
    multiplied by it, rounded, at least 1; ``[lo, hi]``: drawn uniformly per episode, another
    request mix each episode),
    ``episode_duration`` (600 s), ``episode_start`` (None), ``decision_interval`` (2 s),
    ``pools`` (``("prompt", "token")``), ``start_state`` (None: the default), ``slo`` (an
    :class:`~rlsched.core.llm.slo.SLOConfig` or a dict of its fields), ``action_scale_step`` (5),
    ``min_instances_per_pool`` (1), ``max_total_instances`` (100), ``scale_up_delay`` (10 s),
    ``drain_check_interval`` (1 s), ``reward_weights`` (dict: ``slo``, ``cost``, ``switch``,
    ``magnitude``, ``slo_target``, ``slo_penalty``, ``cost_penalty``), ``slo_reference`` (None;
    a heuristic's name, e.g. ``"hpa"``: the SLO penalty counts only the requests missed beyond
    what that heuristic missed by the same time on the same episode, played to its end in a
    snapshot at reset, and ``cost_penalty`` only the cost spent beyond its;
    :class:`~rlsched.envs.llm_rl.RLRewardCalculator`), ``slo_dual`` (None; a dict of
    :class:`~rlsched.envs.llm_rl.SLODual`'s fields, ``{}`` for its defaults: the SLO penalty's
    multiplier learned by dual ascent during training, one per bucket of load and request mix;
    each finished episode's ``info["slo_dual"]`` gives its bucket and constraint violation),
    ``cost_reference`` (``"sized"``),
    ``history`` (30 s: the collector's longer
    window), ``future_sampler`` (``"poisson"``; ``"blocks"``: how sampled futures draw the
    requests to come, :attr:`FUTURE_SAMPLERS`), ``future_history`` (300 s: the recent
    arrivals sampled futures are drawn from), ``future_block`` (30 s: the length of one of
    ``"blocks"``' blocks; equal to ``future_history``, every future repeats the last
    ``future_history`` seconds as they came), ``oracle_steps`` (None: one full scale step;
    e.g. ``[1, 5]``: the instance steps of the oracle's and the search's candidates,
    :meth:`oracle_candidates`), ``drain_at_end`` (True), ``compat`` (None |
    ``"splitwise-sim"``: the simulator reproduces splitwise-sim's performance-model readings
    and TBT, see :mod:`rlsched.core.llm.simulator`), ``scenario`` (None: the default preset;
    a preset name of :mod:`rlsched.scenarios`, docs/scenarios.md; explicit arguments win over
    the preset's),
    ``render_mode`` (None | ``"ansi"``).

    ## Version History

    - v0: initial version.
    """

    oracle_base = "threshold"
    #: The trace and the episode's scaled copy of it: snapshots share them
    snapshot_static = ("_base", "_reqs")
    #: The decision log: a record is replaced, never changed in place, once appended
    snapshot_shallow = ("history",)
    #: 30 decisions (60 s): instances take tens of seconds to start, so a shorter rollout
    #: sees a scale-down's savings and not the SLO misses that follow (10 decisions: SLO
    #: attainment 0.84 vs threshold's 0.95 in a 2-episode screen on the code trace; 30: 0.97)
    rollout_options: ClassVar[dict[str, Any]] = {
        "horizon": 30, "score": "return", "reward": "slo_constrained"
    }
    #: Seconds of history the sampled futures are drawn from (``future_history``'s default)
    FUTURE_HISTORY_S: ClassVar[float] = 300.0
    #: How :meth:`resample_future` draws the requests to come (``future_sampler``):
    #: ``"poisson"``, a Poisson process at the recent rate; ``"blocks"``, blocks of the recent
    #: arrivals as they came (their bursts kept)
    FUTURE_SAMPLERS: ClassVar[tuple[str, ...]] = ("poisson", "blocks")
    #: Seconds of recent history in one block of ``future_sampler="blocks"``
    #: (``future_block``'s default)
    FUTURE_BLOCK_S: ClassVar[float] = 30.0
    oracle_horizon: ClassVar[int | None] = 10
    METRICS: ClassVar[dict[str, Metric]] = {
        "slo_attainment": Metric(
            "slo_attainment", "fraction", higher_is_better=True, leaderboard=True, main=True
        ),
        "cost": Metric("cost $", "$", higher_is_better=False, leaderboard=True),
        "ttft_p99": Metric("ttft_p99", "s", higher_is_better=False, leaderboard=True),
        "tbt_p99": Metric("tbt_p99", "s", higher_is_better=False, leaderboard=True),
        "e2e_p99": Metric("e2e_p99", "s", higher_is_better=False, leaderboard=True),
        "gpu_hours": Metric("gpu_hours", "GPU h", higher_is_better=False, leaderboard=True),
        "mean_instances": Metric("mean_instances", "instances", leaderboard=True),
        "scale_up_actions": Metric("scale_up_actions", "actions", leaderboard=True),
        "scale_down_actions": Metric("scale_down_actions", "actions", leaderboard=True),
        "dropped": Metric("dropped", "requests", higher_is_better=False, leaderboard=True),
        "requests": Metric("requests", "requests"),
        "ttft_p50": Metric("ttft_p50", "s"),
        "ttft_p90": Metric("ttft_p90", "s"),
        "tbt_p50": Metric("tbt_p50", "s"),
        "tbt_p90": Metric("tbt_p90", "s"),
        "e2e_p50": Metric("e2e_p50", "s"),
        "e2e_p90": Metric("e2e_p90", "s"),
        "slo_attainment_p50": Metric("slo_attainment_p50", "fraction"),
        "slo_attainment_p99": Metric("slo_attainment_p99", "fraction"),
        "slo_met": Metric("slo_met", "requests"),
        "energy_kwh": Metric("energy_kwh", "kWh", higher_is_better=False),
        "blocked_actions": Metric("blocked_actions", "actions"),
        "preemptions": Metric("preemptions", "requests", higher_is_better=False),
        "duration": Metric("duration", "s"),
        "mean_prompt_instances": Metric("mean_prompt_instances", "instances"),
        "mean_token_instances": Metric("mean_token_instances", "instances"),
        "rate_scale": Metric("rate_scale", "x"),
        "episode_start": Metric("episode_start", "s"),
        "arrivals": Metric("arrivals", "requests"),
    }

    @with_presets
    def __init__(
        self,
        dataset: str | LLMRequests = "azure-llm:conv",
        rate_scale: float | Sequence[float] = 1.0,
        rate_scale_draw: str = "uniform",
        poisson: bool = False,
        burst: float | Sequence[float] = 0.0,
        burst_window: float = 30.0,
        prompt_scale: float | Sequence[float] = 1.0,
        output_scale: float | Sequence[float] = 1.0,
        episode_duration: float | None = 600.0,
        episode_start: float | None = None,
        decision_interval: float = 2.0,
        pools: Sequence[str] = DEFAULT_POOLS,
        start_state: StartState | str | Path | Mapping[str, Any] | None = None,
        slo: SLOConfig | Mapping[str, Any] | None = None,
        action_scale_step: int = 5,
        min_instances_per_pool: int = 1,
        max_total_instances: int = 100,
        scale_up_delay: float = 10.0,
        drain_check_interval: float = 1.0,
        reward_weights: Mapping[str, float] | None = None,
        slo_reference: str | None = None,
        slo_dual: SLODual | Mapping[str, Any] | None = None,
        cost_reference: float | str = "sized",
        history: float = 30.0,
        future_sampler: str = "poisson",
        future_history: float = FUTURE_HISTORY_S,
        future_block: float = FUTURE_BLOCK_S,
        oracle_steps: Sequence[int] | None = None,
        drain_at_end: bool = True,
        compat: str | None = None,
        scenario: str | None = None,
        render_mode: str | None = None,
    ) -> None:
        super().__init__()
        check_scenario(type(self).__name__, scenario)
        self._set_render_mode(render_mode)
        if not decision_interval > 0:
            raise ValueError("decision_interval must be > 0")
        if compat not in (None, "splitwise-sim"):
            raise ValueError(f"compat must be None or 'splitwise-sim', got {compat!r}")
        if episode_duration is not None and not episode_duration > 0:
            raise ValueError("episode_duration must be > 0 or None (the whole trace)")
        self.rate_scale_range = _scale_range("rate_scale", rate_scale)
        if rate_scale_draw not in SCALE_DRAWS:
            raise ValueError(
                f"rate_scale_draw must be one of {SCALE_DRAWS}, got {rate_scale_draw!r}"
            )
        self.rate_scale_draw = rate_scale_draw
        # the request mix: token counts scaled per episode (trace mixes for generalisation)
        self.prompt_scale_range = _scale_range("prompt_scale", prompt_scale)
        self.output_scale_range = _scale_range("output_scale", output_scale)
        if isinstance(dataset, LLMRequests):
            self._base = dataset.shifted_to_zero()
            self._dataset_name = "requests"
        else:
            self._base = load_requests(dataset)
            self._dataset_name = str(dataset)
        self.poisson = bool(poisson)
        self.check_future_sampler(future_sampler, "future_sampler")
        self.future_sampler = future_sampler
        for name, v in (("future_history", future_history), ("future_block", future_block)):
            if isinstance(v, bool) or not isinstance(v, int | float) or not 0 < v < np.inf:
                raise ValueError(f"{name} must be a number of seconds > 0, not {v!r}")
        #: Seconds of recent arrivals sampled futures are drawn from
        self.future_history = float(future_history)
        #: Seconds in one block of ``future_sampler="blocks"``
        self.future_block = float(future_block)
        self.burst_range = _scale_range("burst", burst, zero=True)
        if not burst_window > 0:
            raise ValueError(f"burst_window must be > 0, got {burst_window!r}")
        self.burst, self.burst_window = self.burst_range[0], float(burst_window)
        self.episode_duration = None if episode_duration is None else float(episode_duration)
        self.episode_start = None if episode_start is None else float(episode_start)
        self.decision_interval = float(decision_interval)
        self.pools = tuple(pools)
        self._all_valid = np.ones(len(self.pools), dtype=bool)  # what action_masks copies
        self.start_state = StartState.coerce(start_state)
        for tag in self.pools:
            self.start_state.pool(tag)
        self.slo = _coerce_slo(slo)
        self.action_scale_step = int(action_scale_step)
        steps = (self.action_scale_step,) if oracle_steps is None else tuple(oracle_steps)
        if not steps or any(
            isinstance(k, bool) or not isinstance(k, (int, np.integer))
            or not 1 <= k <= self.action_scale_step for k in steps
        ):  # fmt: skip
            raise ValueError(
                f"oracle_steps must be whole numbers of instances from 1 to action_scale_step "
                f"({self.action_scale_step}), not {oracle_steps!r}"
            )
        #: The instance steps the oracle's and the search's candidates take in one pool
        self.oracle_steps = tuple(sorted({int(k) for k in steps}))
        self.sim_kwargs: SimSettings = {
            "min_instances_per_pool": int(min_instances_per_pool),
            "max_total_instances": int(max_total_instances),
            "scale_up_delay": float(scale_up_delay),
            "drain_check_interval": float(drain_check_interval),
            "compat": compat,
        }
        self.reward_weights = dict(reward_weights or {})
        self.slo_reference = slo_reference
        if slo_reference is not None and REFERENCE_POLICIES:
            self._reference_factory()  # a bad name fails here once the heuristics are known
        w = ScalingRewardWeights.coerce(self.reward_weights)
        if w.cost_penalty and slo_reference is None:
            raise ValueError("reward_weights' cost_penalty charges the cost spent beyond a "
                             "reference policy's: set slo_reference")  # fmt: skip
        self.slo_dual: SLODual | None = None
        if slo_dual is not None:
            if w.slo_target is None and slo_reference is None:
                raise ValueError("slo_dual learns the SLO penalty's multiplier: set "
                                 "reward_weights' slo_target or an slo_reference")  # fmt: skip
            self.slo_dual = SLODual.coerce(slo_dual, w.slo_penalty)
        self._dual_key = ""
        if not (
            cost_reference in ("sized", "start")
            or (isinstance(cost_reference, int | float) and cost_reference > 0)
        ):
            raise ValueError("cost_reference must be 'sized', 'start' or a US$/h amount > 0")
        self.cost_reference = cost_reference
        self.history_window = float(history)
        self.drain_at_end = bool(drain_at_end)
        self.feature_names = feature_names(self.pools)
        low, high = feature_bounds(self.pools)
        self.observation_space = spaces.Box(low, high, (len(low),), np.float32)
        self.action_space = spaces.Box(-1.0, 1.0, (len(self.pools),), np.float32)
        self.episode = 0
        self.sim: Any = None
        self._done = True
        self._unrewarded = False
        # checked once here: a bad start state / pools / weights fail at construction
        RLRewardCalculator(self.reward_weights)

    # ------------------------------------------------------------------ properties
    @property
    def dataset_name(self) -> str:
        return self._dataset_name

    @property
    def reward_name(self) -> str:
        """``"slo_constrained"`` when the reward weights are :data:`SLO_CONSTRAINED`, else
        ``"weighted"``; setting ``"slo_constrained"`` switches the reward to it from the next
        interval on (rollouts score with the operators' objective this way)."""
        w = RLRewardCalculator(self.reward_weights).weights
        same = w == RLRewardCalculator(SLO_CONSTRAINED).weights
        return "slo_constrained" if same else "weighted"

    @reward_name.setter
    def reward_name(self, name: str) -> None:
        if name != "slo_constrained":
            raise ValueError(f"reward_name can only be set to 'slo_constrained', not {name!r}")
        self.reward_weights = dict(SLO_CONSTRAINED)
        if self.sim is not None:
            self.reward_calc.weights = RLRewardCalculator(SLO_CONSTRAINED).weights

    @property
    def requests(self) -> LLMRequests:
        """The requests of the current episode (window times, from 0)."""
        return self.sim.requests

    @property
    def throughput(self) -> dict[str, Any]:
        """Per pool, one instance's throughput by the sizing rule
        (:func:`rlsched.policies.llm.pool_throughput`)."""
        return self.collector.throughput

    def action_masks(self) -> np.ndarray:
        """All True, one per pool: no action is invalid (blocked ones are ignored)."""
        return self._all_valid.copy()  # a copy: the caller may change its mask

    def oracle_candidates(self) -> list[np.ndarray]:
        """The clairvoyant oracle's (and the rollout search's) candidate actions: hold, or
        one of ``oracle_steps`` instances up or down in a single pool, largest drain first
        (1 + 2 x steps x pools actions; by default one full scale step; the search adds the
        base's own)."""
        out = [self.delta_to_action([0] * len(self.pools))]
        signed = [-k for k in reversed(self.oracle_steps)] + list(self.oracle_steps)
        for k in range(len(self.pools)):
            for step in signed:
                d = [0] * len(self.pools)
                d[k] = step
                out.append(self.delta_to_action(d))
        return out

    def _resample_workload(self, rng: np.random.Generator, sampler: str | None = None) -> None:
        """Resampled history: requests still to come this episode drawn from the last
        ``future_history`` seconds of the trace (before the episode too); with no request
        in them, none comes. ``future_sampler="poisson"``: a Poisson process at their rate,
        each request with the sizes of one drawn from them; ``"blocks"``: the time to come
        filled with blocks of ``future_block`` seconds of them, each from a random start, as
        they came (arrival offsets and sizes), so that bursts stay bursts. ``sampler`` (None:
        ``future_sampler``) draws this future another way."""
        sim = self.sim
        now = float(sim.now)
        end = self.steps_total * self.decision_interval
        a = self._reqs.arrival
        t = self.window_start + now
        t0 = max(t - self.future_history, float(a[0]) if len(a) else t)
        i0 = int(np.searchsorted(a, t0, side="left"))
        i1 = int(np.searchsorted(a, t, side="right"))
        if (sampler or self.future_sampler) == "blocks" and i1 > i0 and t > t0:
            arrival, pick = self._blocks(rng, t0, t, end - now)
            arrival = arrival + now
        else:
            n = int(rng.poisson((i1 - i0) / (t - t0) * (end - now))) if i1 > i0 and t > t0 else 0
            pick = rng.integers(i0, i1, size=n) if n else np.zeros(0, dtype=np.int64)
            arrival = np.sort(rng.uniform(now, end, size=n))
        tail = LLMRequests(
            arrival,
            self._reqs.prompt_tokens[pick],
            self._reqs.output_tokens[pick],
            -1 - np.arange(len(pick)),  # not the trace's requests
        )
        sim.replace_future(tail)

    def _blocks(
        self, rng: np.random.Generator, t0: float, t: float, length: float
    ) -> tuple[np.ndarray, np.ndarray]:
        """``length`` seconds of blocks of the trace's arrivals in ``[t0, t)``: arrival times
        from 0 (sorted) and the trace index of each request."""
        a = self._reqs.arrival
        block = min(self.future_block, t - t0)
        count = int(np.ceil(length / block)) if length > 0 else 0
        starts = rng.uniform(t0, t - block, size=count) if t - block > t0 else np.full(count, t0)
        lo = np.searchsorted(a, starts, side="left")
        hi = np.searchsorted(a, starts + block, side="left")
        sizes = hi - lo
        # each request of each block: its trace index and its time from the block's start
        first = np.repeat(lo - np.cumsum(sizes) + sizes, sizes)
        pick = first + np.arange(int(sizes.sum()))
        arrival = a[pick] - np.repeat(starts, sizes) + np.repeat(np.arange(count) * block, sizes)
        keep = arrival < length
        return arrival[keep], pick[keep]

    def delta_to_action(self, deltas: Sequence[int]) -> np.ndarray:
        """Instance deltas per pool -> an action (``clip(delta / action_scale_step, -1, 1)``)."""
        step = self.action_scale_step  # numpy's clip of the float64 quotients, then float32
        d = np.asarray(deltas, dtype=np.float64).reshape(-1).tolist()
        return np.array([min(max(x / step, -1.0), 1.0) for x in d], dtype=np.float32)

    # ------------------------------------------------------------------ gymnasium API
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        rng = self.np_random
        self.rate_scale = _draw(rng, self.rate_scale_range, self.rate_scale_draw)
        reqs = self._base
        self.burst = _draw(rng, self.burst_range)  # a fixed sigma draws nothing
        if self.burst > 0:  # a Cox process: Poisson arrivals with a bursty rate
            reqs = reqs.resample_bursty(int(rng.integers(2**31)), self.burst, self.burst_window)
        elif self.poisson:
            reqs = reqs.resample_poisson(int(rng.integers(2**31)))
        self.prompt_scale = _draw(rng, self.prompt_scale_range)
        self.output_scale = _draw(rng, self.output_scale_range)
        reqs = reqs.scale_sizes(self.prompt_scale, self.output_scale)
        reqs = reqs.scale_rate(self.rate_scale).shifted_to_zero()
        self._reqs = reqs
        span = reqs.span
        dur = self.episode_duration
        if dur is None or dur >= span:
            start, end = 0.0, span
            window = reqs
        else:
            if self.episode_start is not None:
                start = min(max(0.0, self.episode_start), span - dur)
            else:
                start = float(rng.uniform(0.0, span - dur))
            end = dur
            a = reqs.arrival
            i0 = int(np.searchsorted(a, start, side="left"))
            i1 = int(np.searchsorted(a, start + dur, side="left"))
            w = reqs.take(slice(i0, i1))
            window = LLMRequests(w.arrival - start, w.prompt_tokens, w.output_tokens, w.request_id)
        self.window_start = start
        self.steps_total = max(1, math.ceil(end / self.decision_interval - 1e-9))
        self.sim = LLMSimulator(
            window,
            self.start_state,
            slo=self.slo,
            seed=int(rng.integers(2**31)),
            **self.sim_kwargs,
        )
        self.executor = RLActionExecutor(self.sim, self.pools, self.action_scale_step)
        self.collector = RLStateCollector(self.sim, self.pools, history=self.history_window)
        self.reward_calc = RLRewardCalculator(
            self.reward_weights,
            cost_reference=self._cost_reference(window),
            action_scale_step=self.action_scale_step,
            pools=len(self.pools),
            requests_per_interval=len(window.arrival) / self.steps_total,
        )
        self.episode += 1
        self.step_count = 0
        self.history: list[dict[str, Any]] = []
        self._record(0.0, {"arrivals": 0, "completed": 0, "dropped": 0, "cost": 0.0}, 0.0, [])
        self._active_sum = dict.fromkeys(self.pools, 0.0)
        self._last_action = np.zeros(len(self.pools), dtype=np.float32)
        self._done = False
        self._unrewarded = False  # stepped with rewards (see ``advance``)
        obs = self.collector.collect(self._last_action)
        info: dict[str, Any] = {
            "time": 0.0,
            "rate_scale": self.rate_scale,
            "burst": self.burst,
            "prompt_scale": self.prompt_scale,
            "output_scale": self.output_scale,
            "episode_start": start,
            "arrivals": len(window),
        }
        if self.slo_dual is not None:  # this kind of episode's multiplier
            p, o = window.prompt_tokens, window.output_tokens
            mix = float(np.mean(p)) / max(float(np.mean(o)), 1e-9) if len(p) else 0.0
            self._dual_key = self.slo_dual.bucket(self.rate_scale, mix)
            info["slo_dual_bucket"] = self._dual_key
        if self.slo_reference is not None:
            misses, costs = self._play_reference(obs)  # restores the env: calc afterwards
            calc = self.reward_calc
            calc.reference_misses = misses
            calc.reference_costs = costs if calc.weights.cost_penalty else None
        return obs, info

    def set_slo_dual_table(self, table: Mapping[str, float]) -> None:
        """Put the training loop's multipliers (bucket -> multiplier, :class:`SLODual`) in
        place; an episode pays its bucket's multiplier as it is at its first decision (a
        vector env resets a finished env before the loop sees its last step)."""
        if self.slo_dual is None:
            raise ValueError("this env has no slo_dual")
        self.slo_dual.table = {str(k): float(v) for k, v in table.items()}

    def _dual_outcome(self) -> dict[str, Any] | None:
        """The finished episode's bucket, multiplier and constraint violation for
        :meth:`SLODual.update` (None while the reference itself is being played at reset)."""
        dual, calc = self.slo_dual, self.reward_calc
        assert dual is not None
        ref = calc.reference_misses
        if self.slo_reference is not None and ref is None:
            return None
        r = self.sim.results()
        own = self._missed_all(r) if self.drain_at_end else calc.misses
        total = max(float(r["total_requests"]), 1.0)
        if ref is not None:
            short = (own - float(ref[-1])) / total
        else:
            short = float(calc.weights.slo_target or 0.0) - (1.0 - own / total)
        return {"bucket": self._dual_key, "violation": short + dual.margin,
                "multiplier": calc.weights.slo_penalty}  # fmt: skip

    def _play_reference(self, obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Requests missed and cost spent (the reward's ``cost`` terms summed) after each
        interval (``[0]``: none yet) when ``slo_reference`` plays this episode from its start:
        played in a snapshot, which is then restored."""
        snap = self.snapshot()
        pol = self._reference_factory()(self)
        mask = self.action_masks()
        out, costs = [0.0], [0.0]
        for _ in range(self.steps_total):
            obs, *_ = self.step(pol.act(obs, mask))
            out.append(self.reward_calc.misses)
            costs.append(self.reward_calc.cost_spent)
        if self.drain_at_end:  # the last step drained the queue: every request counted
            out.append(self._missed_all())
        self.restore(snap)
        return np.asarray(out), np.asarray(costs)

    def _reference_factory(self) -> Callable[[Any], Any]:
        factory = REFERENCE_POLICIES.get(str(self.slo_reference))
        if factory is None:
            known = sorted(REFERENCE_POLICIES) or "none yet: import rlsched.policies"
            raise ValueError(f"slo_reference must name a heuristic ({known}), got "
                             f"{self.slo_reference!r}")  # fmt: skip
        return factory

    def _missed_all(self, results: Mapping[str, Any] | None = None) -> float:
        """Requests missed or dropped so far, of all the episode's requests (from ``results``,
        the simulator's, when the caller has them already)."""
        r = self.sim.results() if results is None else results
        return float(r["total_requests"]) * (1.0 - float(r["slo_attainment"]))

    def same_effect(self, a: Any, b: Any) -> bool:
        """Actions with the same instance deltas per pool change the cluster alike; only the
        observation's last-action entries (the raw values) tell them apart."""
        return self.executor.deltas(a) == self.executor.deltas(b)

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self._step(action, observe=True)
        assert obs is not None
        return obs, reward, terminated, truncated, info

    def advance(
        self, action: Any, rewarded: bool = True
    ) -> tuple[float, bool, bool, dict[str, Any]]:
        """``step(action)`` without the observation, for policies that read the simulator
        (the heuristics' rollouts in a search or a trial): the same reward, metrics and
        simulator, the collector's vector not built (about a quarter of a step). Its running
        state (busy times, the last SLO figures) then stays where the last observed step left
        it, so an episode advanced this way is restored or reset before it is observed again,
        as a search does.

        ``rewarded=False`` (a trial's rollouts, scored by the episode's metrics alone): the
        interval's latencies, reward and :attr:`history` record are skipped too, the reward is
        NaN and the simulator and metrics are the same (without ``slo_dual``, whose update
        reads the rewards' misses: rewarded then). The episode is then restored or reset
        before it is stepped with rewards again (a RuntimeError otherwise)."""
        lean = not rewarded and self.slo_dual is None
        _, reward, terminated, truncated, info = self._step(action, observe=False, lean=lean)
        return reward, terminated, truncated, info

    def _step(
        self, action: Any, observe: bool, lean: bool = False
    ) -> tuple[np.ndarray | None, float, bool, bool, dict[str, Any]]:
        if self._done:
            raise RuntimeError("step() called on a finished episode; call reset()")
        if self._unrewarded and not lean:
            raise RuntimeError("advanced without rewards: restore a snapshot or reset() before "
                               "stepping with them")  # fmt: skip
        if lean:
            return self._lean_step(action)
        sim = self.sim
        a, deltas = self._clipped(action)
        outcomes = self.executor.execute(a, deltas)
        since = sim.now
        if self.step_count == 0 and self.slo_dual is not None:
            lam = self.slo_dual.multiplier(self._dual_key)
            self.reward_calc.weights = dataclasses.replace(self.reward_calc.weights,
                                                           slo_penalty=lam)  # fmt: skip
        self.step_count += 1
        t_next = self.step_count * self.decision_interval
        sim.run_until(t_next)
        stats = sim.window_stats(since)
        reward = self.reward_calc.compute(stats, deltas)
        self._last_action = a.astype(np.float32)
        obs = self.collector.collect(self._last_action, window=stats) if observe else None
        sizes = self._record(sim.now, stats, reward, deltas)
        for t in self.pools:
            self._active_sum[t] += sizes[t]["active"]
        truncated = self.step_count >= self.steps_total
        info = self._scaling_info(outcomes)
        info["reward_components"] = dict(self.reward_calc.components)
        if truncated:
            self._done = True
            if self.drain_at_end:
                sim.run()
                if self.reward_calc.reference_misses is not None:
                    # the queue left at the last decision is charged now that it has drained
                    reward += self.reward_calc.settle(self._missed_all())
                    info["reward_components"] = dict(self.reward_calc.components)
                    self.history[-1] = {**self.history[-1], "reward": float(reward)}
            info["metrics"] = self.metrics()
            if self.slo_dual is not None and (outcome := self._dual_outcome()) is not None:
                info["slo_dual"] = outcome
        return obs, float(reward), False, truncated, info

    def _clipped(self, action: Any) -> tuple[np.ndarray, list[int]]:
        """The action per pool in [-1, 1] (one number: every pool's; not finite: 0) and its
        instance deltas, clipped once."""
        units = unit_actions(action, len(self.pools))
        return np.array(units), self.executor.unit_deltas(units)

    def _scaling_info(self, outcomes: Sequence[Any]) -> dict[str, Any]:
        """A step's ``info``: the time and what each pool's scaling asked, did and was blocked."""
        return {
            "time": self.sim.now,
            "scaling": {o.tag: o.requested for o in outcomes},
            "scaling_done": {o.tag: o.done for o in outcomes},
            "scaling_blocked": {o.tag: o.blocked for o in outcomes},
        }

    def _lean_step(self, action: Any) -> tuple[None, float, bool, bool, dict[str, Any]]:
        """:meth:`_step` of ``advance(action, rewarded=False)``: the same simulator, pool
        sizes and metrics; no interval statistics, reward or history record."""
        self._unrewarded = True
        sim = self.sim
        a, deltas = self._clipped(action)
        outcomes = self.executor.execute(a, deltas)
        self.step_count += 1
        sim.run_until(self.step_count * self.decision_interval)
        self._last_action = a.astype(np.float32)
        for t in self.pools:  # pool_sizes(t)["active"], without a scan of the cluster
            self._active_sum[t] += len(sim.active(t))
        truncated = self.step_count >= self.steps_total
        info = self._scaling_info(outcomes)
        if truncated:
            self._done = True
            if self.drain_at_end:
                sim.run()
            info["metrics"] = self.metrics()
        return None, math.nan, False, truncated, info

    def _cost_reference(self, window: LLMRequests) -> float:
        """US$/s of the reward's reference cluster (see ``cost_reference``)."""
        ref = self.cost_reference
        tags = tuple(self.start_state.pools)
        if ref == "sized" and set(tags) <= {"prompt", "token"}:
            sim = self.sim
            tps = pool_throughputs(window, sim.start_state, sim.perf_model, sim.slo, tags)
            least = max(1, self.sim_kwargs["min_instances_per_pool"])
            sizes = sizes_for_rates(mean_rates(window), tps, None, least)
            return RLRewardCalculator.cost_rate(self.start_state, sizes)
        if ref in ("start", "sized"):  # "sized" with a mixed pool: the start state's cluster
            return RLRewardCalculator.cost_rate(self.start_state)
        return float(ref) / 3600.0

    def _record(
        self, now: float, stats: Mapping[str, Any], reward: float, deltas: Sequence[int]
    ) -> dict[str, dict[str, int]]:
        """Append one :attr:`history` record (at reset and after every decision): time, pool
        sizes by state, the interval's arrivals / completions / drops / SLO attainment / cost,
        requests queued on instances now, the reward and the requested deltas."""
        sim = self.sim
        sizes = {t: sim.scaling_manager.pool_sizes(t) for t in self.pools}
        self.history.append(
            {
                "time": now,
                "pools": sizes,
                "arrivals": int(stats["arrivals"]),
                "completed": int(stats["completed"]),
                "dropped": int(stats["dropped"]),
                "slo_attainment": float(stats.get("slo_attainment", math.nan)),
                "queue": int(sum(i.queue_len for i in sim.instances)),
                "cost": float(stats["cost"]),
                "reward": float(reward),
                "deltas": list(deltas),
            }
        )
        return sizes

    # ------------------------------------------------------------------ reporting
    def metrics(self) -> dict[str, float]:
        """The episode's results so far (see "Episode End"); all floats."""
        r = self.sim.results()
        out = {k: float(r[k]) for k in RESULT_METRICS}
        n = max(self.step_count, 1)
        for t in self.pools:
            out[f"mean_{t}_instances"] = self._active_sum[t] / n
        out["mean_instances"] = sum(self._active_sum.values()) / n
        out["rate_scale"] = float(self.rate_scale)
        out["episode_start"] = float(self.window_start)
        out["arrivals"] = float(len(self.sim.requests))
        return out

    def render(self) -> str | None:
        if self.render_mode != "ansi":
            return None
        if self.sim is None:
            return "not reset"
        sim = self.sim
        lines = [
            f"t={sim.now:.1f}s step {self.step_count}/{self.steps_total} "
            f"rate x{self.rate_scale:.2f} arrived={sim.snapshot()['arrived']}/{len(sim.requests)}"
        ]
        for t in self.pools:
            s = sim.scaling_manager.pool_sizes(t)
            lines.append(
                f"{t:<7} active={s['active']:<3} scaling_up={s['scaling_up']:<3} "
                f"draining={s['draining']:<3}"
            )
        if self.history:
            h = self.history[-1]
            lines.append(
                f"last interval: arrivals={h['arrivals']} completed={h['completed']} "
                f"slo={h['slo_attainment']:.3f} reward={h['reward']:.3f}"
            )
        return "\n".join(lines)
