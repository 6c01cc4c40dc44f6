"""PodRebalancing-v0: migrate pods between nodes so that fewer requests miss their resources."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces

from rlsched.core.pods import (
    MODES,
    PodWorkload,
    WindowResult,
    assigned_resources,
    draw_requests,
    greedy_candidates,
    node_load,
    simulate_window,
)
from rlsched.envs.base import Metric, RlschedEnv, deprecated_attribute, load_named
from rlsched.scenarios import check_scenario, with_presets

#: 5-minute windows in a day (the ``clock`` observation).
WINDOWS_PER_DAY = 288

#: Columns of the ``node_action`` observation (``action_features=True``), one row per action.
ACTION_FEATURES = (
    "is_noop",
    "pod_cpu_request",
    "pod_mem_request",
    "pod_violations",
    "pod_traffic",
    "pod_violation_rate",
    "pod_cpu_demand_mean",
    "pod_cpu_demand_peak",
    "src_violation_rate",
    "src_cpu_load_mean",
    "src_cpu_load_peak",
    "src_cpu_load_mean_after",
    "dst_violation_rate",
    "dst_cpu_load_mean",
    "dst_cpu_load_peak",
    "dst_cpu_load_mean_after",
    "dst_cpu_reserved_after",
    "dst_mem_reserved_after",
    "dst_cpu_capacity",
    "dst_pods",
)
HISTORY_FEATURES = (
    "src_day_excess",
    "src_day_excess_after",
    "dst_day_excess",
    "dst_day_excess_after",
    "day_excess_change",
)
"""Columns ``history_features=True`` appends to ``node_action``: the source's and the target's
cpu excess over a typical day of the data, before and after the move, and the move's net
change (:meth:`PodRebalancingEnv._history_rows`)."""
HISTORY_WINDOWS = 96
"""At most this many windows of the data's day (evenly strided) enter the history features."""


class PodRebalancingEnv(RlschedEnv):
    """
    ## Description

    A Kubernetes cluster of ``N`` nodes runs ``P`` pods (the design note's DeployEnv). Time
    moves in 5-minute windows; in each window every pod handles the requests the data gives it
    (dispatched round-robin), each request asking for some cpu and memory. Pods share their
    node BestEffort-style: the node's allocatable cpu is split in proportion to the pods' cpu
    requests, memory is given as requested; a request that does not get its cpu or memory is a
    *violation*. Once per window the agent may migrate one pod to another node.

    The window model is :mod:`rlsched.core.pods` (:func:`~rlsched.core.pods.simulate_window`):

    - ``serial`` mode: a pod runs its requests one after another; the note's time axis per
      node is the request index (the ``k``-th request of every pod at position ``k``, pods
      with fewer requests idle at the end), the busiest pod setting the axis length.
    - ``parallel`` mode: the window is ``slots`` slots, a pod's requests arrive evenly spread
      and each runs one slot; requests of a pod in the same slot add their demand.
    - per node and position, for cpu and memory separately: each pod serves its requests from
      its own assignment shortest first, then the node's unused capacity goes to the remaining
      requests of all pods shortest first (shortest job first under contention). Without
      contention nothing is violated.

    Request sizes are the data's per-window mean times a mean-one lognormal factor drawn from
    the env's seeded rng (the same draws whatever the policy does).

    ## Action Space

    ``Discrete(1 + N * max_pods_per_node * N)``. Every node has ``K = max_pods_per_node`` pod
    slots; a pod keeps its slot while it stays on its node and takes the lowest free slot of the
    node it moves to. Action ``0`` does nothing; action ``a > 0`` moves the pod in slot
    ``j`` of node ``src`` to node ``dst``, where ``a - 1 = (src * K + j) * N + dst``
    (:meth:`encode_action` / :meth:`decode_action`). :meth:`action_masks` marks ``0`` and the
    feasible moves: a pod in the slot, ``dst != src``, a free slot on ``dst`` and the pod's cpu
    *and* memory requests within what ``dst`` has not yet given to its pods' requests
    (kube-scheduler's NodeResourcesFit: requests may not overcommit a node; BestEffort sharing
    only decides who gets idle or contended cpu at run time).

    With ``candidates=k`` the mask keeps ``0`` and only the ``k`` feasible moves
    ``greedy_migration`` tries first (:func:`~rlsched.core.pods.greedy_candidates`: pods with
    more violations in the last window first, each to less loaded nodes first), its own move
    first among them. A policy trained so is anchored to the heuristic: it picks among a few
    moves at any cluster size (``greedy_migration`` plays the same moves as without it).

    ## Observation Space

    A ``Dict`` describing the window just played (float32). No key starts with ``node_``: the
    node axis is not the action axis, so ``policy_net: auto`` picks the flat MLP.

    - ``load (N, slots, 2)``: each node's cpu / memory demand over its allocatable, averaged over
      each of ``slots`` equal parts of the window (above 1: contention).
    - ``violations (N,)``: violated requests / requests on each node.
    - ``capacity (N, 2)``: allocatable cpu / memory over the largest node's.
    - ``reserved (N, 2)``: the node's pods' requests over its allocatable (what the mask checks).
    - ``pod_series (N, K, slots, 2)``: each pod's cpu / memory demand per slot over the largest
      node's allocatable (zero in empty slots).
    - ``pod_request (N, K, 2)``: each pod's cpu / memory request over the largest node's
      allocatable.
    - ``pod_violations (N, K)``, ``pod_traffic (N, K)``: the pod's violated requests and
      requests in the window, over the dataset's mean requests per pod per window (a constant,
      so both are proportional to counts; their ratio is the pod's violation rate).
    - ``pod_mask (N, K)``: 1 where a pod is.
    - ``clock (2,)``: sine and cosine of the window's time of day.
    - with ``action_features=True`` also ``node_action (1 + N*K*N, 20)``: one row per action
      (row 0: do nothing) with the moved pod's, its source node's and its target node's
      features (:data:`ACTION_FEATURES`: requests, violations and traffic, cpu demand mean and
      peak, node violation rates, cpu load mean / peak before and after the move, the target's
      reserved fraction after it, capacity, pod count). The ``node_`` prefix makes the action
      axis the "node" axis of :mod:`rlsched.agents.networks`, so one small MLP scores every
      (pod, target) pair (Decima-style), whatever the cluster size. Rows of impossible moves
      are zero and masked. With ``history_features=True`` the rows have 25 columns: the 5 of
      :data:`HISTORY_FEATURES` follow, the source's and the target's cpu excess over their
      allocatable on a typical day of the data (the pods' per-window demand in the dataset,
      never the episode's own draws), before and after the move, and its net change.
    - with ``greedy_rank=True`` also ``node_greedy_rank (1 + N*K*N,)``: each valid action's
      place in greedy_migration's order of preference (0: its own choice; moves of pods with
      violations, then doing nothing, then the other moves), the number of valid actions for
      the others.

    ## Rewards

    After the action the next window is played: ``reward = -violations / requests`` of that
    window ``- migration_cost`` if a pod was moved. The episode return is minus the sum of the
    windows' violation rates minus the migration costs.

    An invalid action (one :meth:`action_masks` marks False) moves nothing, plays no window and
    ends the episode with reward ``-invalid_action_penalty`` (the rule of
    :mod:`rlsched.envs.base`); by default the most the windows left could cost,
    ``windows left * (1 + migration_cost)``, so ending early never pays.

    ## Starting State

    The pods on their data's initial nodes, at a window drawn uniformly from the dataset with the
    reset seed (``options={"start_window": w}`` fixes it); that window is played with no action
    and observed. Windows wrap around the end of the data (a day of data repeats).

    ## Episode End

    Truncated after ``episode_length`` steps (one action per window); terminated by an invalid
    action. After the end :meth:`action_masks` is all True. The last step's
    ``info["metrics"]``: ``violations`` (violated requests in the stepped windows),
    ``violation_rate`` (over ``requests``), ``migrations``, ``requests``, ``invalid_actions``.
    Every step's ``info`` has the window's ``window``, ``violations``, ``requests``, ``moved``
    (``(pod, src, dst)`` names or None) and ``invalid_action``; ``info["time"]`` (reset and
    every step) is the start of the window the decision is taken after, in seconds since the
    episode's first window (``window_s`` of the workload per window).

    ## Arguments

    ``dataset`` (``"synthetic:pods"``; a registry name of kind ``pod-requests``, a
    :class:`~rlsched.data.Dataset` or a :class:`~rlsched.core.pods.PodWorkload`), ``mode``
    (None: the dataset's; ``"serial"`` | ``"parallel"``), ``num_nodes`` (None: the dataset's;
    more adds empty nodes of the dataset's median allocatable), ``max_pods_per_node`` (100),
    ``slots`` (10), ``episode_length`` (24 windows = 2 hours), ``migration_cost`` (0.05 per move),
    ``invalid_action_penalty`` (None: windows left * (1 + migration_cost)); ``episode_windows``,
    the old name of ``episode_length``, is accepted until rlsched 0.3 with a DeprecationWarning;
    ``action_features`` (False), ``candidates`` (None: every feasible move is valid; ``k``:
    only greedy_migration's first ``k``, "Action Space"), ``greedy_rank`` (False: True adds
    ``node_greedy_rank``, each valid action's place in greedy_migration's order of preference,
    0 for its own choice: the key of a residual policy over it, ``node_prior_key``),
    ``scenario`` (None: the default
    preset; a preset name of :mod:`rlsched.scenarios`, docs/scenarios.md; explicit arguments
    win over the preset's), ``render_mode`` (None | ``"ansi"``).

    ## Version History

    - v0: initial version.
    """

    oracle_base = "greedy_migration"
    observation_args: ClassVar[tuple[str, ...]] = ("action_features", "history_features")
    action_space: spaces.Discrete
    renamed_arguments: ClassVar[dict[str, str]] = {"episode_windows": "episode_length"}
    METRICS: ClassVar[dict[str, Metric]] = {
        "violations": Metric(
            "violations", "requests", higher_is_better=False, leaderboard=True, main=True
        ),
        "violation_rate": Metric(
            "violation_rate", "fraction", higher_is_better=False, leaderboard=True
        ),
        "migrations": Metric("migrations", "pods", higher_is_better=False, leaderboard=True),
        "requests": Metric("requests", "requests", leaderboard=True),
        "invalid_actions": Metric("invalid", "actions", higher_is_better=False),
    }

    @with_presets
    def __init__(
        self,
        dataset: str | Any = "synthetic:pods",
        mode: str | None = None,
        num_nodes: int | None = None,
        max_pods_per_node: int = 100,
        slots: int = 10,
        episode_length: int = 24,
        migration_cost: float = 0.05,
        invalid_action_penalty: float | None = None,
        action_features: bool = False,
        candidates: int | None = None,
        greedy_rank: bool = False,
        history_features: bool = False,
        scenario: str | None = None,
        render_mode: str | None = None,
    ) -> None:
        super().__init__()
        check_scenario(type(self).__name__, scenario)
        self._set_render_mode(render_mode)
        if mode is not None and mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}")
        if max_pods_per_node < 1 or slots < 1 or episode_length < 1:
            raise ValueError("max_pods_per_node, slots and episode_length must be >= 1")
        if migration_cost < 0:
            raise ValueError("migration_cost must be >= 0")
        self.max_pods_per_node = K = int(max_pods_per_node)
        self.slots = S = int(slots)
        self.episode_length = int(episode_length)
        self.migration_cost = float(migration_cost)
        self.invalid_action_penalty = invalid_action_penalty
        self.action_features = bool(action_features)
        if candidates is not None and (isinstance(candidates, bool) or int(candidates) < 1):
            raise ValueError(f"candidates must be None or an integer >= 1, not {candidates!r}")
        self.candidates = None if candidates is None else int(candidates)
        self.greedy_rank = bool(greedy_rank)
        self.history_features = bool(history_features)
        if self.history_features and not self.action_features:
            raise ValueError("history_features=True needs action_features=True")

        wl, self._dataset_name = _workload(dataset)
        self.mode = mode or wl.mode
        node_cpu, node_mem, node_names = wl.node_cpu, wl.node_mem, list(wl.node_names)
        if num_nodes is not None:
            if num_nodes < wl.num_nodes:
                raise ValueError(
                    f"num_nodes={num_nodes} is less than the dataset's {wl.num_nodes} nodes"
                )
            extra = int(num_nodes) - wl.num_nodes
            node_cpu = np.concatenate([node_cpu, np.full(extra, np.median(wl.node_cpu))])
            node_mem = np.concatenate([node_mem, np.full(extra, np.median(wl.node_mem))])
            taken = set(node_names)
            k = wl.num_nodes
            while len(node_names) < num_nodes:
                k += 1
                if f"node{k}" not in taken:
                    node_names.append(f"node{k}")
        self.workload = wl
        self.node_names = tuple(node_names)
        self.num_nodes = N = len(node_names)
        self.num_pods = P = wl.num_pods
        self.node_cpu = np.asarray(node_cpu, dtype=float)
        self.node_mem = np.asarray(node_mem, dtype=float)
        per_node = np.bincount(wl.pod_node, minlength=N)
        if per_node.max() > K:
            raise ValueError(
                f"node {self.node_names[int(per_node.argmax())]} starts with {per_node.max()} "
                f"pods, more than max_pods_per_node={K}"
            )
        self._rc = wl.request_cpu.astype(float)
        self._rm = wl.request_mem.astype(float)
        self._unit = np.array([self.node_cpu.max(), self.node_mem.max()])
        self._inv_cap = 1.0 / np.stack([self.node_cpu, self.node_mem], axis=1)
        mean_req = float(wl.requests.mean())
        self._traffic_unit = 1.0 / max(mean_req, 1e-9)
        # initial slots: a node's pods in pod order take its slots 0, 1, ...
        order = np.argsort(wl.pod_node, kind="stable")
        first = np.cumsum(per_node) - per_node
        slot0 = np.empty(P, dtype=np.int64)
        slot0[order] = wl.pod_node[order] * K + np.arange(P) - first[wl.pod_node[order]]
        self._slot0 = slot0
        # a pod's cpu demand per window of a typical day (history, never the episode's draws):
        # serial, one request's size while it has any; parallel, its mean concurrency's
        stride = -(-wl.num_windows // HISTORY_WINDOWS)
        per = wl.demand_cpu[::stride].astype(float)
        reqs = wl.requests[::stride].astype(float)
        self._day_cpu = per * (reqs > 0) if self.mode == "serial" else per * reqs / S

        f32, inf = np.float32, np.inf
        self.action_space = spaces.Discrete(1 + N * K * N)
        self.observation_space = spaces.Dict(
            {
                "load": spaces.Box(0.0, inf, (N, S, 2), f32),
                "violations": spaces.Box(0.0, 1.0, (N,), f32),
                "capacity": spaces.Box(0.0, 1.0, (N, 2), f32),
                "reserved": spaces.Box(0.0, inf, (N, 2), f32),
                "pod_series": spaces.Box(0.0, inf, (N, K, S, 2), f32),
                "pod_request": spaces.Box(0.0, inf, (N, K, 2), f32),
                "pod_violations": spaces.Box(0.0, inf, (N, K), f32),
                "pod_traffic": spaces.Box(0.0, inf, (N, K), f32),
                "pod_mask": spaces.Box(0.0, 1.0, (N, K), f32),
                "clock": spaces.Box(-1.0, 1.0, (2,), f32),
            }
        )
        if self.action_features:
            self.observation_space.spaces["node_action"] = spaces.Box(
                -inf, inf, (1 + N * K * N, self.num_action_features), f32
            )
        if self.greedy_rank:
            self.observation_space.spaces["node_greedy_rank"] = spaces.Box(
                0.0, inf, (1 + N * K * N,), f32
            )
        self._done = True
        self._last: WindowResult | None = None

    # ------------------------------------------------------------------ helpers
    @property
    def num_action_features(self) -> int:
        """Columns of ``node_action``: :data:`ACTION_FEATURES`, then
        :data:`HISTORY_FEATURES` with ``history_features=True``."""
        return len(ACTION_FEATURES) + (len(HISTORY_FEATURES) if self.history_features else 0)

    @property
    def dataset_name(self) -> str:
        return self._dataset_name

    @property
    def episode_windows(self) -> int:
        """Deprecated name of :attr:`episode_length` (until rlsched 0.3)."""
        deprecated_attribute(self, "episode_windows", "episode_length")
        return self.episode_length

    def encode_action(self, src: int, slot: int, dst: int) -> int:
        """The action moving the pod in ``slot`` of node ``src`` to node ``dst``."""
        N, K = self.num_nodes, self.max_pods_per_node
        return 1 + (int(src) * K + int(slot)) * N + int(dst)

    def decode_action(self, action: int) -> tuple[int, int, int] | None:
        """``(src, slot, dst)`` of a move, or None for action 0."""
        a = int(action)
        return None if a == 0 else self._move_of(a)

    def _move_of(self, a: int) -> tuple[int, int, int]:
        """``(src, slot, dst)`` of move action ``a`` (``a >= 1``)."""
        s, dst = divmod(a - 1, self.num_nodes)
        src, slot = divmod(s, self.max_pods_per_node)
        return src, slot, dst

    @property
    def pod_node(self) -> np.ndarray:
        """``(P,)`` current node of each pod (a copy)."""
        return self._node_of.copy()

    def _window(self, t: int) -> int:
        shift = self._shift if t >= self._shift_from else 0
        return (self._start + t + shift) % self.workload.num_windows

    def _resample_workload(self, rng: np.random.Generator, sampler: str | None = None) -> None:
        """Resampled history: the windows after the current one come from the same hours of
        a random other day of the trace (a random other window where it spans under two
        days); the requests within them are drawn with the env's redrawn generator."""
        W = self.workload.num_windows
        days = W // WINDOWS_PER_DAY
        if days >= 2:
            shift = -int(rng.integers(1, days)) * WINDOWS_PER_DAY
        elif W > 1:
            shift = int(rng.integers(1, W))
        else:
            return
        self._shift, self._shift_from = shift, self._t + 1

    def _play(self, t: int) -> WindowResult:
        wl = self.workload
        w = self._window(t)
        reqs = draw_requests(
            wl.requests[w], wl.demand_cpu[w], wl.demand_mem[w], wl.spread, self.np_random
        )
        return simulate_window(
            self._node_of,
            self._rc,
            self._rm,
            self.node_cpu,
            self.node_mem,
            reqs,
            self.mode,
            self.slots,
        )

    # ------------------------------------------------------------------ gymnasium API
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        super().reset(seed=seed)
        W = self.workload.num_windows
        start = (options or {}).get("start_window")
        self._start = int(start) % W if start is not None else int(self.np_random.integers(W))
        self._shift, self._shift_from = 0, 2**62  # sampled futures only (_resample_workload)
        N, K = self.num_nodes, self.max_pods_per_node
        self._node_of = self.workload.pod_node.astype(np.int64).copy()
        self._slot_of = self._slot0.copy()
        self._pod_at = np.full(N * K, -1, dtype=np.int64)
        self._pod_at[self._slot_of] = np.arange(self.num_pods)
        self._res_cpu = np.bincount(self._node_of, weights=self._rc, minlength=N)
        self._res_mem = np.bincount(self._node_of, weights=self._rm, minlength=N)
        self._count = np.bincount(self._node_of, minlength=N)
        self._set_day_load()
        self._t: int = 0
        self._violations = 0
        self._requests = 0
        self._migrations = 0
        self._invalid = 0
        self._total_reward = 0.0
        self._last_move: tuple[str, str, str] | None = None
        self._done = False
        self._last = self._play(0)
        return self._observation(), {
            "window": self._window(0),
            "time": 0.0,
            "dataset": self._dataset_name,
        }

    def action_masks(self) -> np.ndarray:
        """Action 0 and every feasible move (class docstring, "Action Space")."""
        N, K = self.num_nodes, self.max_pods_per_node
        if self._done:
            return np.ones(1 + N * K * N, dtype=bool)
        mask = np.zeros(1 + N * K * N, dtype=bool)
        mask[0] = True
        slots = np.flatnonzero(self._pod_at >= 0)
        pods = self._pod_at[slots]
        src = slots // K
        fit = (
            (self._res_cpu[None, :] + self._rc[pods, None] <= self.node_cpu * (1 + 1e-9))
            & (self._res_mem[None, :] + self._rm[pods, None] <= self.node_mem * (1 + 1e-9))
            & (self._count < K)[None, :]
        )
        fit[np.arange(len(slots)), src] = False
        moves = mask[1:].reshape(N * K, N)
        if self.candidates is None:
            moves[slots] = fit
            return mask
        # greedy_migration's first choices only (its own move among them): a learned policy
        # anchored to them picks among a few moves, whatever the cluster size
        res = self._last
        assert res is not None
        load = node_load(self._slot_loads(res))  # what greedy reads from the observation
        best = greedy_candidates(res.pod_violations[pods], load, fit, self.candidates)
        moves[slots[best // N], best % N] = True
        return mask

    def _slot_loads(self, res: WindowResult) -> np.ndarray:
        """``(N, slots, 2)`` float32: each node's cpu / memory demand over its allocatable per
        slot of the window (the ``load`` observation)."""
        return (res.node_series * self._inv_cap[:, None, :]).astype(np.float32)

    def _move(self, p: int, dst: int) -> None:
        K, N = self.max_pods_per_node, self.num_nodes
        self._pod_at[self._slot_of[p]] = -1
        free = int(np.argmax(self._pod_at[dst * K : (dst + 1) * K] < 0))
        self._slot_of[p] = dst * K + free
        self._pod_at[dst * K + free] = p
        self._node_of[p] = dst
        # recomputed, not updated in place: no drift from repeated += / -=
        self._res_cpu = np.bincount(self._node_of, weights=self._rc, minlength=N)
        self._res_mem = np.bincount(self._node_of, weights=self._rm, minlength=N)
        self._count = np.bincount(self._node_of, minlength=N)
        self._set_day_load()

    def _set_day_load(self) -> None:
        """Each node's cpu demand over its allocatable in every window of the typical day
        (``(D, N)``), its day excess and the action rows' history columns: they change only
        when a pod moves."""
        if not self.history_features:
            return
        N = self.num_nodes
        node_day = np.zeros((N, self._day_cpu.shape[0]))
        np.add.at(node_day, self._node_of, self._day_cpu.T)  # recomputed: no drift
        self._day_load = node_day.T / self.node_cpu
        self._day_excess = np.maximum(self._day_load - 1.0, 0.0).mean(0)
        # the action rows' history columns read nothing else that changes: computed here, once
        # per placement, not at every observation (most decisions move nothing)
        slots = np.flatnonzero(self._pod_at >= 0)
        K = self.max_pods_per_node
        self._history_cols = self._history_rows(self._pod_at[slots], slots // K)

    def step(self, action: int) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        if self._done:
            raise RuntimeError("step() called on a finished episode; call reset()")
        a = int(action)
        moved: tuple[str, str, str] | None = None
        now = self._t * self.workload.window_s
        if a != 0:
            if not (0 < a < self.action_space.n and self.action_masks()[a]):
                return self._invalid_step(now)
            src, slot, dst = self._move_of(a)
            p = int(self._pod_at[src * self.max_pods_per_node + slot])
            self._move(p, dst)
            moved = (
                self.workload.pod_names[p],
                self.node_names[src],
                self.node_names[dst],
            )
            self._migrations += 1
        self._last_move = moved
        self._t += 1
        res = self._last = self._play(self._t)
        n_req, n_viol = res.requests, res.violations
        self._requests += n_req
        self._violations += n_viol
        rate = n_viol / n_req if n_req else 0.0
        reward = -rate - (self.migration_cost if moved else 0.0)
        self._total_reward += reward
        truncated = self._t >= self.episode_length
        self._done = truncated
        info: dict[str, Any] = {
            "window": self._window(self._t),
            "violations": n_viol,
            "requests": n_req,
            "moved": moved,
            "invalid_action": False,
            "time": now,
        }
        if truncated:
            info["metrics"] = self.metrics()
        return self._observation(), float(reward), False, truncated, info

    def _invalid_step(
        self, now: float
    ) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        """The contract's invalid action: nothing moves, no window is played, the episode
        ends with reward ``-invalid_action_penalty``."""
        self._invalid += 1
        if self.invalid_action_penalty is None:
            penalty = (self.episode_length - self._t) * (1.0 + self.migration_cost)
        else:
            penalty = float(self.invalid_action_penalty)
        self._last_move = None
        self._total_reward -= penalty
        self._done = True
        info: dict[str, Any] = {
            "window": self._window(self._t),
            "violations": 0,
            "requests": 0,
            "moved": None,
            **self._invalid_action_info(now),
        }
        return self._observation(), -float(penalty), True, False, info

    # ------------------------------------------------------------------ observation
    def _observation(self) -> dict[str, np.ndarray]:
        res = self._last
        assert res is not None
        N, K, S = self.num_nodes, self.max_pods_per_node, self.slots
        f32 = np.float32
        slot = self._slot_of
        pod_series = np.zeros((N * K, S, 2), f32)
        pod_series[slot] = res.pod_series / self._unit
        pod_request = np.zeros((N * K, 2), f32)
        pod_request[slot, 0] = self._rc / self._unit[0]
        pod_request[slot, 1] = self._rm / self._unit[1]
        pod_viol = np.zeros(N * K, f32)
        pod_viol[slot] = res.pod_violations * self._traffic_unit
        traffic = np.zeros(N * K, f32)
        traffic[slot] = res.pod_requests * self._traffic_unit
        mask = (self._pod_at >= 0).astype(f32)
        with np.errstate(invalid="ignore", divide="ignore"):
            node_rate = np.where(
                res.node_requests > 0, res.node_violations / np.maximum(res.node_requests, 1), 0.0
            )
        phase = 2 * np.pi * (self._window(self._t) % WINDOWS_PER_DAY) / WINDOWS_PER_DAY
        obs = {
            "load": self._slot_loads(res),
            "violations": node_rate.astype(f32),
            "capacity": (np.stack([self.node_cpu, self.node_mem], 1) / self._unit).astype(f32),
            "reserved": (np.stack([self._res_cpu, self._res_mem], 1) * self._inv_cap)
            .clip(0.0, None)
            .astype(f32),
            "pod_series": pod_series.reshape(N, K, S, 2),
            "pod_request": pod_request.reshape(N, K, 2),
            "pod_violations": pod_viol.reshape(N, K),
            "pod_traffic": traffic.reshape(N, K),
            "pod_mask": mask.reshape(N, K),
            "clock": np.array([np.sin(phase), np.cos(phase)], f32),
        }
        if self.action_features:
            obs["node_action"] = self._action_rows(res, node_rate)
        if self.greedy_rank:
            obs["node_greedy_rank"] = self._greedy_ranks(obs)
        return obs

    def _greedy_ranks(self, obs: dict[str, np.ndarray]) -> np.ndarray:
        """``(1 + N*K*N,)`` float32: each valid action's place in greedy_migration's order of
        preference (0: its own choice), and the number of valid actions for the invalid ones.
        That order: moves of pods with violations (more violations first, each to less loaded
        nodes first: :func:`~rlsched.core.pods.greedy_candidates`), then noop, then the other
        moves in the same order."""
        N, K = self.num_nodes, self.max_pods_per_node
        mask = self.action_masks()
        moves = mask[1:].reshape(N * K, N)
        v = (obs["pod_violations"] * obs["pod_mask"]).ravel().astype(float)
        order = greedy_candidates(v, node_load(obs["load"]), moves, int(moves.sum()))
        first = int((v[order // N] > 0).sum())  # moves of pods with violations: the first
        ranked = np.concatenate([1 + order[:first], [0], 1 + order[first:]])
        out = np.full(1 + N * K * N, float(len(ranked)), np.float32)
        out[ranked] = np.arange(len(ranked), dtype=np.float32)
        return out

    def _action_rows(self, res: WindowResult, node_rate: np.ndarray) -> np.ndarray:
        """``(1 + N*K*N, F)`` per-action features (columns: :data:`ACTION_FEATURES`)."""
        N, K = self.num_nodes, self.max_pods_per_node
        rows = np.zeros((1 + N * K * N, self.num_action_features), np.float32)
        rows[0, 0] = 1.0
        slots = np.flatnonzero(self._pod_at >= 0)
        pods = self._pod_at[slots]
        src = slots // K
        cpu_cap = self.node_cpu
        node_load = res.node_series[:, :, 0] / cpu_cap[:, None]  # (N, S)
        load_mean, load_peak = node_load.mean(1), node_load.max(1)
        pod_cpu = res.pod_series[pods, :, 0]  # (M, S) demand of the pods in `slots`
        pod_mean, pod_peak = pod_cpu.mean(1), pod_cpu.max(1)
        reqs = res.pod_requests[pods]
        viol = res.pod_violations[pods]
        rate = np.where(reqs > 0, viol / np.maximum(reqs, 1), 0.0)
        M = len(slots)
        f = np.zeros((M, N, self.num_action_features))
        f[:, :, 1] = (self._rc[pods] / self._unit[0])[:, None]
        f[:, :, 2] = (self._rm[pods] / self._unit[1])[:, None]
        f[:, :, 3] = (viol * self._traffic_unit)[:, None]
        f[:, :, 4] = (reqs * self._traffic_unit)[:, None]
        f[:, :, 5] = rate[:, None]
        f[:, :, 6] = (pod_mean / self._unit[0])[:, None]
        f[:, :, 7] = (pod_peak / self._unit[0])[:, None]
        f[:, :, 8] = node_rate[src][:, None]
        f[:, :, 9] = load_mean[src][:, None]
        f[:, :, 10] = load_peak[src][:, None]
        f[:, :, 11] = (load_mean[src] - pod_mean / cpu_cap[src])[:, None]
        f[:, :, 12] = node_rate[None, :]
        f[:, :, 13] = load_mean[None, :]
        f[:, :, 14] = load_peak[None, :]
        f[:, :, 15] = load_mean[None, :] + pod_mean[:, None] / cpu_cap[None, :]
        f[:, :, 16] = (self._res_cpu[None, :] + self._rc[pods, None]) / cpu_cap[None, :]
        f[:, :, 17] = (self._res_mem[None, :] + self._rm[pods, None]) / self.node_mem[None, :]
        f[:, :, 18] = (cpu_cap / self._unit[0])[None, :]
        f[:, :, 19] = (self._count / K)[None, :]
        if self.history_features:
            f[:, :, len(ACTION_FEATURES) :] = self._history_cols  # of these pods: _set_day_load
        rows[1:].reshape(N * K, N, -1)[slots] = f
        return rows

    def _history_rows(self, pods: np.ndarray, src: np.ndarray) -> np.ndarray:
        """``(M, N, 5)``: :data:`HISTORY_FEATURES` of moving each pod in ``pods`` (now on
        ``src``) to each node. A node's *day excess* is its cpu demand over its allocatable,
        above 1, averaged over the windows of a typical day of the data (the pods' per-window
        demand in history, :attr:`_day_cpu`): the structural overload that the search teacher's
        sampled futures see and the last window alone does not show."""
        N = self.num_nodes
        cap = self.node_cpu
        load, before = self._day_load, self._day_excess  # (D, N), (N,): :meth:`_set_day_load`
        pod_day = self._day_cpu[:, pods]  # (D, M)
        dst_after = np.maximum(load[:, None, :] + pod_day[:, :, None] / cap - 1.0, 0.0).mean(0)
        src_load = load[:, src] - pod_day / cap[src]  # (D, M)
        src_after = np.maximum(src_load - 1.0, 0.0).mean(0)  # (M,)
        out = np.empty((len(pods), N, len(HISTORY_FEATURES)))
        out[:, :, 0] = before[src][:, None]
        out[:, :, 1] = src_after[:, None]
        out[:, :, 2] = before[None, :]
        out[:, :, 3] = dst_after
        change = src_after[:, None] + dst_after - before[src][:, None] - before[None, :]
        # a move to its own node is masked; keep its row at "no change" for tidiness
        out[:, :, 4] = np.where(src[:, None] == np.arange(N)[None, :], 0.0, change)
        return out

    # ------------------------------------------------------------------ reporting
    def metrics(self) -> dict[str, float]:
        """The episode so far (the windows after the first step)."""
        return {
            "violations": float(self._violations),
            "violation_rate": self._violations / self._requests if self._requests else 0.0,
            "migrations": float(self._migrations),
            "requests": float(self._requests),
            "invalid_actions": float(self._invalid),
        }

    def cluster_state(self) -> dict[str, dict[str, Any]]:
        """The design note's cluster dict, from the current placement::

            {"node1": {"total_cpu", "total_mem", "remain_cpu", "remain_mem",
                       "pods": [{"pod_name", "request_cpu", "request_mem",
                                 "assigned_cpu", "assigned_mem"}, ...]}, ...}

        ``assigned_*`` is the BestEffort assignment
        (:func:`~rlsched.core.pods.assigned_resources`), ``remain_*`` the allocatable minus
        what is assigned (cpu: 0 on any node with pods). Pods are listed in slot order.
        """
        a_cpu, a_mem = assigned_resources(
            self._node_of, self._rc, self._rm, self.node_cpu, self.node_mem
        )
        N = self.num_nodes
        used_cpu = np.bincount(self._node_of, weights=a_cpu, minlength=N)
        used_mem = np.bincount(self._node_of, weights=a_mem, minlength=N)
        names = self.workload.pod_names
        out: dict[str, dict[str, Any]] = {}
        K = self.max_pods_per_node
        for n, node in enumerate(self.node_names):  # reporting only, not in step()
            pods = self._pod_at[n * K : (n + 1) * K]
            out[node] = {
                "total_cpu": float(self.node_cpu[n]),
                "total_mem": float(self.node_mem[n]),
                "remain_cpu": max(0.0, float(self.node_cpu[n] - used_cpu[n])),
                "remain_mem": max(0.0, float(self.node_mem[n] - used_mem[n])),
                "pods": [
                    {
                        "pod_name": names[p],
                        "request_cpu": float(self._rc[p]),
                        "request_mem": float(self._rm[p]),
                        "assigned_cpu": float(a_cpu[p]),
                        "assigned_mem": float(a_mem[p]),
                    }
                    for p in pods[pods >= 0].tolist()
                ],
            }
        return out

    def render(self) -> str | None:
        if self.render_mode != "ansi":
            return None
        res = self._last
        if res is None:
            return "(reset() not called)"
        lines = [
            f"window {self._window(self._t)} (step {self._t}/{self.episode_length}, "
            f"{self.mode})  violations {self._violations}/{self._requests}  "
            f"migrations {self._migrations}  reward {self._total_reward:.3f}",
            f"{'node':<10}{'pods':>5}{'cpu req/alloc':>16}{'mem req/alloc':>16}"
            f"{'cpu load':>10}{'peak':>7}{'viol':>12}",
        ]
        load = res.node_series[:, :, 0] / self.node_cpu[:, None]
        for n, node in enumerate(self.node_names):
            lines.append(
                f"{node:<10}{int(self._count[n]):>5}"
                f"{self._res_cpu[n]:>8.2f}/{self.node_cpu[n]:<7.0f}"
                f"{self._res_mem[n]:>8.2f}/{self.node_mem[n]:<7.0f}"
                f"{load[n].mean():>10.2f}{load[n].max():>7.2f}"
                f"{int(res.node_violations[n]):>6}/{int(res.node_requests[n]):<5}"
            )
        if self._last_move is not None:
            pod, src, dst = self._last_move
            lines.append(f"moved {pod}: {src} -> {dst}")
        return "\n".join(lines)


def _workload(dataset: str | Any) -> tuple[PodWorkload, str]:
    """``(workload, name)`` from a registry name, a Dataset or a PodWorkload."""
    if isinstance(dataset, PodWorkload):
        return dataset, "pod-workload"
    ds, name = load_named(dataset)
    trace = getattr(ds, "trace", None)
    if not isinstance(trace, PodWorkload):
        raise ValueError(
            f"PodRebalancing-v0 needs a pod-requests dataset (synthetic:pods, "
            f"pod-requests:PATH); {name!r} is of kind {getattr(ds, 'kind', type(ds).__name__)!r}"
        )
    return trace, name
