"""ServerlessPlacement-v0: place function instances of workflows on heterogeneous edge nodes."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, ClassVar, Literal

import numpy as np
from gymnasium import spaces

from rlsched.core.cluster import CPU, NET, Billing, Cluster, NodeView
from rlsched.core.timeline import Timeline
from rlsched.core.workload import (
    INSTANCE_FIELDS,
    FunctionInstances,
    Workflow,
    type_table,
    workflow_instances,
)
from rlsched.envs import serverless_model as model
from rlsched.envs.base import Metric, RlschedEnv, load_named
from rlsched.envs.serverless_model import (
    BILLED,
    CAP,
    DEPLOYED,
    I32_MAX,
    NB_WIDTH,
    PRICE,
    REWARDS,
    WARM,
    PlacementOutcome,
    Reward,
    RewardWeights,
)
from rlsched.scenarios import check_scenario, with_presets


class ServerlessPlacementEnv(RlschedEnv):
    """
    ## Description

    An edge cluster of ``num_nodes`` heterogeneous nodes (capacities and prices drawn from public
    cloud list prices) receives function instances of workflows at their trace times. Each step
    the agent places the instance at the head of the queue on one node. Time is real: the clock
    jumps to the instance's arrival, instances run for their response time and then release
    their resources, and a node is billed from its first placement while idle until its last
    instance ends plus ``node_keepalive`` seconds. Response time, utilisation and cost follow
    from this state; nothing is random except the workload order and arrival process.

    Response time of an instance placed on node ``n`` (documented model, fixed at placement)::

        response = wait + cold + exec_time * S
        S        = (1 + k_cpu * min(u_cpu, 1)^2 + k_mem * min(u_mem, 1)^2)
                   * max(1, u_cpu, u_net, u_disk)
        cold     = cold_start + cold_start_per_gb * mem_request   if n ran no instance of the
                   function type within warm_keepalive seconds, else 0

    where ``u_r`` is node ``n``'s usage of resource ``r`` over its capacity including the new
    instance: the first factor models interference below saturation (shared caches, memory
    bandwidth), the second processor- and bandwidth-sharing above it. ``wait`` is the time the
    instance queued because no node could admit it. ``RFRT = response / exec_time``.

    ## Action Space

    ``Discrete(num_nodes)``: the node for the current instance. :meth:`action_masks` marks the
    valid nodes: active, with the instance's cpu and memory request unreserved.

    ## Observation Space

    A ``Dict`` with the design note's keys, plus three it needs for latency and cost:

    - ``node_utilization (N, 4)``: actual usage / capacity of cpu, memory, network, disk
      (above 1 means oversubscribed).
    - ``node_capacity (N, 2)``: cores and GB.
    - ``node_price (N,)``: dollars per hour while billed.
    - ``node_deployed (N, 2)``: sum of the cpu and memory requests of the instances running.
    - ``node_active (N,)``: 1 if the node accepts work.
    - ``current_function_request (2,)``: the instance's cpu (cores) and memory (GB) request.
    - ``current_function_io (2,)``: its network and disk bandwidth use, MB/s.
    - ``current_function_requests (1,)``: invocations it serves.
    - ``current_function_rart (1,)``: recent RFRT of its function type (moving average, 1 at
      start): how contended this type has been.
    - ``cluster_function_requests (F,)``: invocations in flight per function slot; the ``F - 1``
      most frequent types have a slot each and the rest share the last.
    - ``current_function_exec (1,)``: its standalone execution time in seconds (added: both
      the latency and the cost of a placement scale with it).
    - ``node_warm (N,)``: 1 where the node holds a warm container of its type (added: decides
      the cold start).
    - ``node_billed_time (N,)``: seconds of billing already committed per node, 0 when idle
      (added: decides the cost of a placement).

    ## Rewards

    Chosen by ``reward`` (see :data:`rlsched.envs.serverless_model.REWARDS`):

    - ``latency_cost`` (default, the note's formula):
      ``-(beta * norm(RFRT) + (1 - beta) * norm(cost change))`` with RFRT scaled over
      ``[1, rfrt_max]`` and the committed-cost change over ``[0, cost_ref]``, where
      ``cost_ref = max price * (exec_time * rfrt_max + node_keepalive)``.
    - ``slo_cost``: ``-(slo_penalty * [response > slo_factor * exec_time] + cost_weight *
      norm(cost change))``, for near-real-time functions.

    An invalid action ends the episode with reward ``-invalid_action_penalty`` (the rule of
    :mod:`rlsched.envs.base`); by default the penalty is the number of instances left, so ending
    early never pays. After the end :meth:`action_masks` is all True.

    The model (observation layout, per-instance constants, metrics, rewards) lives in
    :mod:`rlsched.envs.serverless_model`, shared with the batched env of
    :mod:`rlsched.vector`.

    ## Starting State

    An empty cluster (fixed by ``cluster_seed``, or redrawn each reset if ``randomize_cluster``)
    at time 0; the episode's workload is drawn with the reset seed.

    ## Episode End

    Terminated after ``episode_length`` instances are placed, when the dataset runs out with
    ``on_exhausted="end"``, or on an invalid action. The last step's ``info["metrics"]`` holds
    the episode's cost, mean / p95 RFRT, SLO violations, cold starts and invalid actions.

    ## Arguments

    ``num_nodes`` (10), ``num_functions`` (5), ``dataset`` (registry name, default
    ``"wfinstances:all"``), ``reward`` (``"latency_cost"``), ``beta`` (0.7),
    ``episode_length`` (200), ``load`` (0.6: target mean cpu load of Poisson workflow arrivals),
    ``arrival`` (``"auto"``: trace times when every workflow has one, else Poisson;
    ``"trace"``; ``"poisson"``), ``on_exhausted`` (``"cycle"`` | ``"end"``),
    ``invalid_action_penalty`` (None = instances left), ``node_keepalive`` (120 s),
    ``warm_keepalive`` (600 s), ``cold_start`` (1 s), ``cold_start_per_gb`` (0.5 s),
    ``interference`` ((1.0, 0.3)), ``slo_factor`` (2.0), ``rfrt_max`` (5.0),
    ``cluster_seed`` (0), ``randomize_cluster`` (False), ``scenario`` (None: the default preset;
    a preset name of :mod:`rlsched.scenarios`, docs/scenarios.md; explicit arguments win over
    the preset's), ``render_mode`` (``"ansi"``).

    ## Version History

    - v0: initial version.
    """

    oracle_base = "k8s_balanced"
    #: Replaced as a whole (per episode, cluster or resampled workload), never changed in
    #: place: snapshots share them instead of copying every per-instance column each time
    snapshot_static = (
        "_blocks", "_block_work", "_episode", "_req", "_use", "_exec", "_arrival", "_type",
        "_req_rows", "_use_rows", "_exec_l", "_arrival_l", "_type_l", "_slot_l", "_requests_l",
        "_cold_l", "_cref_l", "_slo_l", "_inst32", "_nreq32", "_inv_cap", "_inv_cap_rows",
    )  # fmt: skip
    #: Copied one level deep: their items (numbers, events of instance indices) are immutable
    snapshot_shallow = ("_node_of", "_timeline", "_rfrt", "_response")
    #: The episode return is the main metric: the chosen reward is the objective.
    METRICS: ClassVar[dict[str, Metric]] = model.METRICS

    @with_presets
    def __init__(
        self,
        num_nodes: int = 10,
        num_functions: int = 5,
        dataset: str | Any = "wfinstances:all",
        reward: str = "latency_cost",
        beta: float = 0.7,
        episode_length: int = 200,
        load: float = 0.6,
        arrival: Literal["auto", "trace", "poisson"] = "auto",
        on_exhausted: Literal["cycle", "end"] = "cycle",
        invalid_action_penalty: float | None = None,
        node_keepalive: float = 120.0,
        warm_keepalive: float = 600.0,
        cold_start: float = 1.0,
        cold_start_per_gb: float = 0.5,
        interference: tuple[float, float] = (1.0, 0.3),
        slo_factor: float = 2.0,
        rfrt_max: float = 5.0,
        slo_penalty: float = 1.0,
        cost_weight: float = 0.5,
        cluster_seed: int = 0,
        randomize_cluster: bool = False,
        scenario: str | None = None,
        render_mode: str | None = None,
    ) -> None:
        super().__init__()
        check_scenario(type(self).__name__, scenario)
        if num_nodes < 1 or num_functions < 1 or episode_length < 1:
            raise ValueError("num_nodes, num_functions and episode_length must be >= 1")
        if reward not in REWARDS:
            raise ValueError(f"unknown reward {reward!r}; choose one of {sorted(REWARDS)}")
        if arrival not in ("auto", "trace", "poisson"):
            raise ValueError("arrival must be 'auto', 'trace' or 'poisson'")
        if on_exhausted not in ("cycle", "end"):
            raise ValueError("on_exhausted must be 'cycle' or 'end'")
        if not 0.0 <= beta <= 1.0:
            raise ValueError("beta must be in [0, 1]")
        if load <= 0:
            raise ValueError("load must be positive")
        self._set_render_mode(render_mode)
        self.num_nodes = N = int(num_nodes)
        self.num_functions = F = int(num_functions)
        self.reward_name = reward
        #: The reward formula, scalar and batched (:data:`~rlsched.envs.serverless_model.REWARDS`).
        self.reward_formula: Reward = REWARDS[reward]
        self._reward_fn = self.reward_formula.scalar
        self.weights = RewardWeights(
            beta=beta, rfrt_max=rfrt_max, slo_penalty=slo_penalty, cost_weight=cost_weight
        )
        self.episode_length = int(episode_length)
        self.load = float(load)
        self.arrival = arrival
        self.on_exhausted = on_exhausted
        self.invalid_action_penalty = invalid_action_penalty
        self.node_keepalive = float(node_keepalive)
        self.warm_keepalive = float(warm_keepalive)
        self.cold_start = float(cold_start)
        self.cold_start_per_gb = float(cold_start_per_gb)
        self.k_cpu, self.k_mem = (float(x) for x in interference)
        self.slo_factor = float(slo_factor)
        self.cluster_seed = int(cluster_seed)
        self.randomize_cluster = bool(randomize_cluster)

        self.cluster = Cluster.sample(N, np.random.default_rng(self.cluster_seed))
        self._set_cluster_constants()

        self.action_space = spaces.Discrete(N)
        self.observation_space = model.observation_space(N, F)

        self._dataset_name: str | None = None
        self._blocks: list[FunctionInstances] = []
        self._block_work: np.ndarray = np.zeros(0)
        self._trace: FunctionInstances | None = None
        self._type_names: tuple[str, ...] = ()
        self._generator: Iterable[Mapping[str, float]] | None = None
        self._gen_iter: Any = None
        self._gen_cache: list[Mapping[str, float]] = []
        self._gen_replay = 0
        self.set_dataset(dataset)
        self._episode: FunctionInstances | None = None
        self._done = True

    # ------------------------------------------------------------------ dataset injection
    def set_dataset(self, source: str | Any) -> None:
        """Use a registry name, a :class:`~rlsched.data.Dataset`, a list of workflows, or an
        iterable / generator of instance dicts (the design note's ``task_generator``).
        A list of dicts replays from its start at every reset.

        Instance dicts need ``cpu_request`` and ``mem_request``; ``io_network``, ``io_disk``
        (0), ``requests`` (1), ``exec_time`` (1 s), ``type`` (0) and ``arrival_time`` (Poisson at
        ``load``) default. A generator continues across resets; when it runs out, the env
        replays what it drew (``on_exhausted="cycle"``) or ends the episode (``"end"``).
        Takes effect at the next reset.
        """
        self._generator = None
        self._trace = None
        if isinstance(source, str) or (
            hasattr(source, "workflows") and hasattr(source, "type_names")
        ):
            ds, self._dataset_name = load_named(source)
            workflows, names = ds.workflows, ds.type_names
        elif isinstance(source, list | tuple) and source and isinstance(source[0], Workflow):
            self._dataset_name = "workflows"
            workflows, names = list(source), type_table(source)
        else:
            self._dataset_name = "generator"
            self._generator = source
            self._gen_iter = iter(source)
            self._gen_cache = []
            self._gen_replay = 0
            self._type_names = ()
            self._blocks = []
            return
        if not workflows:
            raise ValueError(f"dataset {self._dataset_name!r} has no workflows")
        index = {n: i for i, n in enumerate(names)}
        self._type_names = tuple(names)
        self._blocks = [
            workflow_instances(w, 0.0, index, workflow_id=k) for k, w in enumerate(workflows)
        ]
        self._block_work = np.array([np.sum(b.cpu_usage * b.exec_time) for b in self._blocks])
        use_trace = self.arrival == "trace" or (
            self.arrival == "auto" and all(w.submit_time is not None for w in workflows)
        )
        if use_trace:
            starts = [w.submit_time or 0.0 for w in workflows]
            self._trace = FunctionInstances.concat(
                b.with_arrival_shift(s) for b, s in zip(self._blocks, starts, strict=True)
            ).sorted_by_arrival()

    @property
    def dataset_name(self) -> str | None:
        return self._dataset_name

    @property
    def type_names(self) -> tuple[str, ...]:
        """The dataset's function type names (empty for an instance generator)."""
        return self._type_names

    @property
    def streams_instances(self) -> bool:
        """True when the dataset is an instance generator: one stream that continues across
        resets (a list of instance dicts replays from its start and is not a stream)."""
        return self._generator is not None and not isinstance(self._generator, list | tuple)

    def _poisson_rate(self, mean_work: float, cluster: Cluster | None = None) -> float:
        """Workflow arrivals per second so that mean cpu demand is ``load`` of the cluster."""
        c = self.cluster if cluster is None else cluster
        total_cpu = float(c.capacity[c.active, CPU].sum())
        return self.load * total_cpu / max(mean_work, 1e-9)

    def draw_episode(
        self, rng: np.random.Generator, cluster: Cluster | None = None
    ) -> FunctionInstances:
        """The episode's instances, drawn with ``rng`` for ``cluster`` (default: this env's).

        Pure in ``rng`` for datasets and instance lists (the batched env, :mod:`rlsched.vector`,
        draws its sub-envs' episodes through it); a generator also advances the generator.
        """
        L = self.episode_length
        if self._generator is not None:
            return self._draw_from_generator(rng, cluster)
        if self._trace is not None:
            tr = self._trace
            n = len(tr)
            start = int(rng.integers(0, n))
            idx = np.arange(start, start + L)
            if self.on_exhausted == "end":
                idx = idx[idx < n]
            span = float(tr.arrival_time[-1] - tr.arrival_time[0]) + 1.0
            ep = tr[idx % n]
            # wrapped-around instances come one trace span later
            times = ep.arrival_time + (idx // n) * span
            return FunctionInstances(
                **{**_columns(ep), "arrival_time": times - times[0]}, type_names=tr.type_names
            )
        rate = self._poisson_rate(float(self._block_work.mean()), cluster)
        parts: list[FunctionInstances] = []
        total, t = 0, 0.0
        order = rng.permutation(len(self._blocks))
        k = 0
        while total < L:
            if k == len(order):
                if self.on_exhausted == "end":
                    break
                order, k = rng.permutation(len(self._blocks)), 0
            b = self._blocks[order[k]]
            k += 1
            parts.append(b.with_arrival_shift(t))
            total += len(b)
            t += float(rng.exponential(1.0 / rate))
        return FunctionInstances.concat(parts).sorted_by_arrival()[:L]

    def _draw_from_generator(
        self, rng: np.random.Generator, cluster: Cluster | None = None
    ) -> FunctionInstances:
        if isinstance(self._generator, list | tuple):
            # a sequence replays from its start every episode; a generator continues
            self._gen_iter, self._gen_cache, self._gen_replay = iter(self._generator), [], 0
        recs: list[Mapping[str, float]] = []
        while len(recs) < self.episode_length:
            try:
                r = next(self._gen_iter)
                self._gen_cache.append(r)
            except StopIteration:
                if self.on_exhausted == "end" or not self._gen_cache:
                    break
                r = self._gen_cache[self._gen_replay % len(self._gen_cache)]
                self._gen_replay += 1
            recs.append(r)
        if not recs:
            raise ValueError("the injected dataset yielded no instances")
        cols: dict[str, list[float]] = {}
        defaults = {"io_network": 0.0, "io_disk": 0.0, "requests": 1, "exec_time": 1.0, "type": 0}
        for key in ("cpu_request", "mem_request", *defaults):
            try:
                cols[key] = [float(r[key] if key in r else defaults[key]) for r in recs]
            except (KeyError, TypeError) as e:
                raise ValueError(f"injected instance lacks required field {key!r}") from e
        cols["cpu_usage"] = [float(r.get("cpu_usage", r["cpu_request"])) for r in recs]
        if all("arrival_time" in r for r in recs):
            cols["arrival_time"] = [float(r["arrival_time"]) for r in recs]
        else:
            work = np.multiply(cols["cpu_usage"], cols["exec_time"])
            rate = self._poisson_rate(float(work.mean()), cluster)
            gaps = rng.exponential(1.0 / rate, size=len(recs))
            cols["arrival_time"] = list(np.cumsum(gaps) - gaps[0])
        n_types = int(max(cols["type"])) + 1
        names = tuple(f"type-{i}" for i in range(n_types))
        return FunctionInstances.from_columns(cols, type_names=names).sorted_by_arrival()

    # ------------------------------------------------------------------ gymnasium API
    def _set_cluster_constants(self) -> None:
        c = self.cluster
        self._inv_cap = 1.0 / c.capacity
        self._inv_cap_rows = self._inv_cap.tolist()
        self._max_rate = float(c.price.max()) / 3600.0
        self.billing = Billing(c.price, self.node_keepalive)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        super().reset(seed=seed)
        rng = self.np_random
        if self.randomize_cluster:
            self.cluster = Cluster.sample(self.num_nodes, rng)
            self._set_cluster_constants()
        self.cluster.reset()
        self.billing.reset()
        self._active8 = self.cluster.active.astype(np.int8)
        # float32 node features, kept up to date row by row as nodes change; each observation
        # is one copy of it, split into views (one copy per step instead of one per key)
        nb = np.zeros((self.num_nodes, NB_WIDTH), dtype=np.float32)
        nb[:, CAP] = self.cluster.capacity[:, :2]
        nb[:, PRICE] = self.cluster.price
        self._nb = nb
        ep = self.draw_episode(rng)
        self._set_instances(ep)
        n = self._n
        n_types = max(len(ep.type_names), int(ep.type.max()) + 1 if n else 1)
        self._warm_until = np.full((n_types, self.num_nodes), -np.inf)
        self._billed64 = np.zeros(self.num_nodes)
        self._rart = [1.0] * n_types
        self._in_flight = np.zeros(self.num_functions, dtype=np.int64)
        self._timeline: Timeline[int] = Timeline()
        self._node_of = [-1] * n
        self._released = np.zeros(n, dtype=bool)
        self._rfrt: list[float] = []
        self._response: list[float] = []
        self._slo_count = 0
        self._cold_count = 0
        self._now = 0.0
        self._i = 0
        self._placed = 0
        self._unplaceable = 0
        self._invalid = 0
        self._total_reward = 0.0
        self._done = False
        self._advance()
        return self._observation(), {"time": self._now, "dataset": self._dataset_name}

    def _set_instances(self, ep: FunctionInstances) -> None:
        """Make ``ep`` the episode's instances (per-instance columns and constants)."""
        self._episode = ep
        self._n = len(ep)
        # per-instance columns: numpy for vector work, Python lists for the scalar hot path
        self._req = np.stack([ep.cpu_request, ep.mem_request], axis=1)
        self._use = np.stack([ep.cpu_usage, ep.mem_request, ep.io_network, ep.io_disk], axis=1)
        self._req_rows = [tuple(r) for r in self._req.tolist()]
        self._use_rows = [tuple(r) for r in self._use.tolist()]
        self._exec = ep.exec_time
        self._exec_l = ep.exec_time.tolist()
        self._arrival = ep.arrival_time
        self._arrival_l = ep.arrival_time.tolist()
        self._type = ep.type
        self._type_l = ep.type.tolist()
        self._slot_l = np.minimum(ep.type, self.num_functions - 1).tolist()
        self._requests_l = ep.requests.tolist()
        # per-instance constants of the model: cold-start time, cost normaliser, SLO bound
        self._cold_l = model.cold_start_time(
            self.cold_start, self.cold_start_per_gb, ep.mem_request
        ).tolist()
        self._cref_l = model.cost_reference(
            self._max_rate, ep.exec_time, self.weights.rfrt_max, self.node_keepalive
        ).tolist()
        self._slo_l = model.slo_bound(self.slo_factor, ep.exec_time).tolist()
        # per instance: cpu, mem request, net, disk io, exec time (float32 observation rows)
        self._inst32 = _frozen(
            np.column_stack([self._req, self._use[:, 2:], ep.exec_time]).astype(np.float32)
        )
        self._nreq32 = _frozen(np.minimum(ep.requests, I32_MAX).astype(np.int32)[:, None])

    def _resample_workload(self, rng: np.random.Generator, sampler: str | None = None) -> None:
        """Instances after the current one: a fresh draw of the episode's workload (trace
        window, workflow blocks or generator), its first instance set at the current one's
        arrival so the gaps after it are the draw's own; the episode keeps its length."""
        i = self._i
        if self._done or i + 1 >= self._n:
            return
        keep = self._n - i - 1
        assert self._episode is not None
        if self._generator is not None:
            # an injected generator cannot be rewound: resample the instances seen so far
            fresh = self._episode[np.sort(rng.integers(0, i + 1, size=keep + 1))]
            gaps = rng.choice(np.diff(self._arrival[: i + 1]), size=keep + 1) if i else (
                np.zeros(keep + 1))  # fmt: skip
            fresh = FunctionInstances(
                **{**_columns(fresh), "arrival_time": np.cumsum(gaps)},
                type_names=fresh.type_names,
            )
        else:
            fresh = self.draw_episode(rng)[: keep + 1]
        if len(fresh) < 2:
            return
        times = fresh.arrival_time - fresh.arrival_time[0] + self._arrival_l[i]
        tail = FunctionInstances(
            **{**_columns(fresh), "arrival_time": times}, type_names=fresh.type_names
        )[1:]
        self._set_instances(FunctionInstances.concat([self._episode[: i + 1], tail]))
        n = self._n  # a dataset that runs out may give fewer instances than before
        self._node_of = (self._node_of + [-1] * n)[:n]
        self._released = np.resize(self._released, n)
        self._released[i + 1 :] = False

    def action_masks(self) -> np.ndarray:
        """Valid nodes for the current instance: active with its cpu and memory unreserved."""
        if self._done:
            return np.ones(self.num_nodes, dtype=bool)
        return self._mask.copy()

    def node_view(self, observation: Mapping[str, np.ndarray]) -> NodeView:
        """The observation as the node-scoring heuristics see it."""
        return NodeView(
            capacity=observation["node_capacity"],
            requested=observation["node_deployed"],
            demand=observation["current_function_request"],
            price=observation["node_price"],
            load=observation["node_utilization"][:, :2].max(axis=1),
        )

    def step(self, action: int) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        if self._done:
            raise RuntimeError("step() called on a finished episode; call reset()")
        a = int(action)
        i = self._i
        if not (0 <= a < self.num_nodes and self._mask[a]):
            self._invalid += 1
            penalty = (
                float(self._n - self._placed)
                if self.invalid_action_penalty is None
                else float(self.invalid_action_penalty)
            )
            self._done = True
            self._total_reward -= penalty
            refused = self._invalid_action_info(self._now)
            return self._observation(), -penalty, True, False, refused

        now = self._now
        cpu, mem = self._req_rows[i]
        use = self._use_rows[i]
        self.cluster.place(a, cpu, mem, use)
        uc, um, un, ud = self._sync_node(a)
        share = max(1.0, uc, un, ud)
        uc1 = uc if uc < 1.0 else 1.0
        um1 = um if um < 1.0 else 1.0
        slowdown = (1.0 + self.k_cpu * uc1 * uc1 + self.k_mem * um1 * um1) * share
        t = self._type_l[i]
        warm = self._warm_until
        cold = float(warm[t, a]) < now
        cold_s = self._cold_l[i] if cold else 0.0
        exec_t = self._exec_l[i]
        run = cold_s + exec_t * slowdown
        finish = now + run
        response = (now - self._arrival_l[i]) + run
        rfrt = response / exec_t
        keep = finish + self.warm_keepalive
        if keep > warm[t, a]:
            warm[t, a] = keep
        cost_delta = self.billing.extend(a, now, finish)
        cost_ref = self._cref_l[i]
        slo_violated = response > self._slo_l[i]
        self._timeline.push(finish, i)
        self._in_flight[self._slot_l[i]] += self._requests_l[i]
        self._node_of[i] = a
        self._rfrt.append(rfrt)
        self._response.append(response)
        self._slo_count += slo_violated
        self._cold_count += cold
        self._rart[t] = 0.7 * self._rart[t] + 0.3 * rfrt
        self._placed += 1

        reward = self._reward_fn(
            PlacementOutcome(rfrt, cost_delta, cost_ref, slo_violated), self.weights
        )
        self._total_reward += reward
        self._i += 1
        self._advance()
        info: dict[str, Any] = {
            "node": a,
            "rfrt": rfrt,
            "response_time": response,
            "cold_start": cold,
            "cost_delta": cost_delta,
            "slo_violated": slo_violated,
            "time": now,
        }
        if self._done:
            info["metrics"] = self.metrics()
        return self._observation(), reward, self._done, False, info

    # ------------------------------------------------------------------ simulation core
    def _sync_node(self, a: int) -> list[float]:
        """Refresh node ``a``'s observation row; returns its utilisation (cpu, mem, net, disk)."""
        c, nb = self.cluster, self._nb
        inv = self._inv_cap_rows[a]
        u = c.usage[a].tolist()
        util = [u[0] * inv[0], u[1] * inv[1], u[2] * inv[2], u[3] * inv[3]]
        nb[a, 0:4] = util
        nb[a, DEPLOYED] = c.requested[a]
        return util

    def _release(self, j: int) -> None:
        cpu, mem = self._req_rows[j]
        node = self._node_of[j]
        self.cluster.release(node, cpu, mem, self._use_rows[j])
        self._sync_node(node)
        self._in_flight[self._slot_l[j]] -= self._requests_l[j]
        self._released[j] = True

    def _release_until(self, t: float) -> None:
        for _, j in self._timeline.pop_until(t):
            self._release(j)

    def drain(self) -> None:
        """Run the clock on until every placed instance has finished and released its node."""
        while len(self._timeline):
            t, j = self._timeline.pop()
            self._now = max(self._now, t)
            self._release(j)

    def _advance(self) -> None:
        """Move the clock to the next instance's arrival; wait for releases if nothing fits."""
        c = self.cluster
        timeline = self._timeline
        while self._i < self._n and self._placed < self.episode_length:
            i = self._i
            arrival = self._arrival_l[i]
            now = self._now if self._now > arrival else arrival
            if timeline.peek_time() <= now:
                self._release_until(now)
            cpu, mem = self._req_rows[i]
            mask = c.fits(cpu, mem)
            # mask[mask.argmax()] is "any" at a third of ndarray.any()'s call overhead
            while not mask[mask.argmax()] and len(timeline):
                t, j = timeline.pop()
                now = max(now, t)
                self._release(j)
                mask = c.fits(cpu, mem)
            self._now = now
            if mask[mask.argmax()]:
                self._mask = mask
                return
            self._unplaceable += 1  # larger than every active node: it can never run here
            self._i += 1
        self._done = True

    def _observation(self) -> dict[str, np.ndarray]:
        nb = self._nb
        now = self._now
        np.subtract(self.billing.billed_until, now, out=self._billed64)
        np.maximum(self._billed64, 0.0, out=nb[:, BILLED], casting="same_kind")
        if not self._done:
            i = self._i
            t = self._type_l[i]
            # warm_until is (types, nodes): one contiguous row per type
            np.greater_equal(self._warm_until[t], now, out=nb[:, WARM], casting="unsafe")
            inst = self._inst32[i].copy()
            nreq = self._nreq32[i].copy()
            rart = np.array([self._rart[t]], dtype=np.float32)
        else:
            nb[:, WARM] = 0.0
            inst = np.zeros(model.INST_WIDTH, np.float32)
            nreq = np.zeros(1, np.int32)
            rart = np.ones(1, np.float32)
        return model.observation(nb.copy(), self._active8.copy(), inst, nreq, rart, self._in_flight)

    # ------------------------------------------------------------------ reporting
    def metrics(self) -> dict[str, float]:
        """The episode so far: cost, latency, SLO and validity figures."""
        return model.episode_metrics(
            self._rfrt,
            self._response,
            self.billing.committed_cost(),
            self._slo_count,
            self._cold_count,
            self._invalid,
            self._unplaceable,
            self._now,
        )

    def render(self) -> str | None:
        if self.render_mode != "ansi":
            return None
        c = self.cluster
        util = c.utilization()
        billed = self.billing.remaining(self._now)
        lines = [
            f"t={self._now:9.1f}s  placed={self._placed}/{self._n}  "
            f"cost=${self.billing.committed_cost():.4f}  reward={self._total_reward:.3f}",
            f"{'node':<16}{'on':>3}{'cpu req/cap':>14}{'mem req/cap':>14}"
            f"{'cpu%':>7}{'net%':>7}{'$/h':>8}{'billed s':>10}",
        ]
        for n in range(self.num_nodes):
            lines.append(
                f"{c.names[n]:<16}{int(c.active[n]):>3}"
                f"{c.requested[n, 0]:>7.2f}/{c.capacity[n, 0]:<6.0f}"
                f"{c.requested[n, 1]:>7.2f}/{c.capacity[n, 1]:<6.0f}"
                f"{100 * util[n, CPU]:>7.1f}{100 * util[n, NET]:>7.1f}"
                f"{c.price[n]:>8.3f}{billed[n]:>10.1f}"
            )
        if not self._done:
            i = self._i
            name = (
                self._episode.type_names[self._type[i]]
                if self._episode is not None and self._type[i] < len(self._episode.type_names)
                else str(self._type[i])
            )
            lines.append(
                f"next: {name} cpu={self._req[i, 0]:.2f} mem={self._req[i, 1]:.2f}GB "
                f"exec={self._exec[i]:.2f}s arrival={self._arrival[i]:.1f}s"
            )
        return "\n".join(lines)


def _frozen(a: np.ndarray) -> np.ndarray:
    """Read-only, so that observation sources are never changed through a returned array."""
    a.flags.writeable = False
    return a


def _columns(fi: FunctionInstances) -> dict[str, np.ndarray]:
    return {k: getattr(fi, k) for k in (*INSTANCE_FIELDS, "workflow", "task")}
