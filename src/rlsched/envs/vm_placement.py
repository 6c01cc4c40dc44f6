"""VMPlacement-v0: place the VM requests of a replayed trace on the NUMA nodes of a cluster
(VMAgent's SchedGym scenarios, with its bugs fixed and its state in numpy arrays)."""

from __future__ import annotations

import math
from typing import Any, ClassVar, TypeVar

import numpy as np
from gymnasium import spaces

from rlsched.core.vm import CREATE, DELETE, VMRequests
from rlsched.envs.base import Metric, RlschedEnv, deprecated_attribute, load_named
from rlsched.scenarios import PRESETS, with_presets


def quantum(capacity: float) -> float:
    """The accounting grid for NUMA nodes of ``capacity`` (the larger of cores and GB): the
    smallest power of two ``q`` with ``capacity / q <= 2^24``, so every multiple of ``q`` up to
    the capacity is exact in float32 (``2^-17`` for 90 GB). Capacities are rounded to ``q`` and
    demands to ``2q`` (so a double VM's halves are on the grid too): placing and releasing VMs
    then never leaves rounding residue, and fits are exact comparisons."""
    return float(2.0 ** (math.ceil(math.log2(max(capacity, 2.0**-100))) - 24))


#: scenario -> (deletions release resources, VMAgent's double-NUMA threshold in cores)
SCENARIOS: dict[str, tuple[bool, float]] = {"fading": (False, 32.0), "recovering": (True, 10.0)}
REWARDS = ("count", "cpu", "fragmentation")
#: ``compat`` modes: reproduce a peer's code exactly (docs/fidelity.md)
COMPAT = ("vmagent",)


def _round_to(x: np.ndarray | float, q: float) -> np.ndarray:
    return np.round(np.asarray(x, dtype=np.float64) / q) * q


_Item = TypeVar("_Item", float, int, bool)


def _scalars(a: np.ndarray, item: type[_Item]) -> memoryview[_Item]:
    """A memoryview of the 1-D array ``a`` (``a.data``: what ``memoryview(a)`` gives, but typed
    by numpy's stubs, which declare the buffer protocol of arrays for Python >= 3.12 only):
    scalar reads and writes through it are 4x faster than numpy indexing. ``item`` is the Python
    type its elements read as (float, int or bool), for the type checker only."""
    view: memoryview[Any] = a.data
    return view


class VMPlacementEnv(RlschedEnv):
    """
    ## Description

    A cluster of ``num_nodes`` identical servers, each with two NUMA nodes of ``numa_cpu``
    cores and ``numa_mem`` GB (the published scenarios: 40 cores and 90 GB per NUMA), receives
    the VM requests of a trace (``vmid,cpu,memory,time,type``, see :mod:`rlsched.core.vm`) in
    time order. Each step places the next creation; the deletions between two creations are
    replayed before the next decision and, in the ``recovering`` scenario, free exactly what
    their VM took (``fading``: deletions are ignored, the cluster only fills up). Deletions of
    VMs created before the episode started, or of VMs the trace never created, are ignored.

    A request is **double-NUMA** when its cpu is at least ``double_threshold`` (VMAgent: 32 for
    ``fading``, 10 for ``recovering``), or, with ``double_by="cpu_or_mem"``, also when its
    memory is at least ``double_mem_threshold`` (default: the same share of a NUMA,
    ``double_threshold * numa_mem / numa_cpu``). A double request takes half its cpu and half its
    memory on each NUMA of one server; a single one takes all of it on one NUMA. It fits a NUMA
    when the NUMA's remaining cpu and memory are both at least what it takes there.

    Creations that fit no empty server (e.g. a 48-core single-NUMA VM on 40-core NUMAs) are
    dropped when the env is built (``self.oversized`` counts them), so every episode starts
    with a request that fits.

    ``compat="vmagent"`` does what VMAgent's SchedGym code does (mail-ecnu/VMAgent,
    ``schedgym/sched_env.py``), where it differs from the above: a VM is double-NUMA when its
    **memory** in GB is strictly greater than ``double_threshold`` (its code; its docs say
    cpu), cpu is truncated to an integer as its loader does, oversized creations are kept
    (one ends the episode, as it fits nowhere), and the episode ends when the next creation
    is the trace's last event (its ``t >= len(requests) - 1``: that request is never placed).
    With it, first fit reproduces the peer's recorded action sequences exactly
    (``tests/envs/test_vm_placement_fidelity.py``).

    ## Action Space

    ``Discrete(2 * num_nodes)``: server ``a // 2``, NUMA ``a % 2``; for a double request the
    NUMA bit is ignored. :meth:`action_masks` is VMAgent's ``avail`` flattened from
    ``(N, 2)``: bit ``2s + k`` is set when the request fits NUMA ``k`` of server ``s``; for a
    double request both bits of a server are set when half of it fits on each of its NUMAs.

    ## Observation Space

    A ``Dict`` (float32). The arrays are made for this step (views, not all C-contiguous, of
    two arrays computed per step); later steps never change them, so a caller may keep them.

    - ``obs (N, 2, 2)``: remaining (cpu, mem) per server and NUMA, raw (cores, GB): VMAgent's
      ``obs``. Left out with ``grid_obs=False``: then every key but ``feat`` and ``request``
      has one row per NUMA, so a node-scoring network trained at one server count runs at any
      other (``node_free`` holds the same numbers, over the capacity).
    - ``feat (2, 2, 2)``: the request as VMAgent builds it: double
      ``[[[c/2, m/2], [c/2, m/2]], [[c/2, m/2], [c/2, m/2]]]``, single
      ``[[[c, m], [0, 0]], [[0, 0], [c, m]]]`` (row ``k``: the request placed on NUMA ``k``).
    - ``node_free (2N, 2)``: row ``2s + k``: remaining (cpu, mem) of NUMA ``k`` of server ``s``
      over the NUMA capacity, in [0, 1].
    - ``node_sibling (2N, 2)``: the same for the other NUMA of that server (row ``2s + k``
      holds ``node_free[2s + 1 - k]``).
    - ``node_after (2N, 2)``: remaining (cpu, mem) fraction of that NUMA after placing the
      request there (a double request: after its half), in [-1, 1]; a column is negative
      exactly where that NUMA lacks the resource (a double VM also needs the sibling's row).
    - ``request (3,)``: cpu / ``numa_cpu``, mem / ``numa_mem`` (the whole VM, up to 2 for a
      double one) and ``is_double``.
    - ``node_position (2N,)``: the row's server index / N (constant), so a node-scoring network
      can learn index-order rules such as ``first_fit``.

    ``node_*`` keys have one row per action (per NUMA), as the node-scoring network of
    :mod:`rlsched.agents.networks` needs. After the last request of the trace the request keys
    are zeros.

    ## Rewards

    By ``reward``: ``"count"`` (default, VMAgent's): +1 per VM placed; ``"cpu"``: the placed
    VM's cpu / ``numa_cpu``; ``"fragmentation"``: ``1 - (F_after - F_before)``, where ``F`` is
    the cluster's fragmentation (see :meth:`fragmentation`) just before and just after the
    placement (the deletions replayed afterwards do not count). An invalid action (outside the
    mask) ends the episode with reward ``-invalid_action_penalty`` (default 0, VMAgent's rule:
    the episode's remaining placements are forfeited; the rule of :mod:`rlsched.envs.base`).

    ## Starting State

    An empty cluster. The episode starts at trace event ``start``, or, with ``start=None``, at an
    event index drawn with the reset seed uniformly from ``[lo * E, hi * E)`` for
    ``start_range = (lo, hi)`` and ``E`` trace events (``reset(options={"start": i})``
    overrides both); leading deletions are skipped, so the first request is the first creation
    at or after that event. ``start_range`` can hold out the end of a trace for evaluation (it
    bounds where episodes start, not where they run: combine with ``episode_length``).

    ## Episode End

    Terminated when the next request fits nowhere (VMAgent's end), when the trace has no more
    creations, or on an invalid action (``info["invalid_action"] = True``). After the end
    :meth:`action_masks` is all True (the rule of :mod:`rlsched.envs.base`).
    Truncated after ``episode_length`` placements (None: never). The last step's
    ``info["metrics"]``: ``placed`` (VMs placed this episode), ``cpu_util`` and ``mem_util``
    (allocated / cluster capacity at the end), ``fragmentation``, ``invalid_actions``,
    ``alive`` (VMs of this episode still placed). ``reset`` returns ``info["start"]`` (the
    event index drawn) and ``info["vmid"]`` (the first request's VM). ``info["time"]`` is the
    trace time, in seconds, of the request the decision places (reset: of the first request).

    ## Arguments

    ``num_nodes`` (5 servers), ``scenario`` (``"fading"`` | ``"recovering"`` (5 servers unless
    given), or a preset of :mod:`rlsched.scenarios` such as ``"fading-20"``; None: the default
    preset ``recovering-5``), ``dataset`` (registry name, :class:`~rlsched.data.Dataset` of kind
    ``vm-requests`` or :class:`~rlsched.core.vm.VMRequests`; default ``"synthetic:vm"``),
    ``double_threshold`` (None: the scenario's), ``double_by`` (``"cpu"`` | ``"cpu_or_mem"``),
    ``double_mem_threshold`` (None: see above), ``numa_cpu`` (40), ``numa_mem`` (90),
    ``start`` (None), ``start_range`` ((0, 1)), ``reward`` (``"count"``), ``episode_length``
    (None), ``frag_cores`` (16, see :meth:`fragmentation`), ``invalid_action_penalty`` (0),
    ``compat`` (None | ``"vmagent"``, see the description), ``grid_obs`` (True: the ``obs``
    key, see the observation space), ``render_mode`` (``"ansi"``).
    ``num_servers`` and ``max_steps``, the old names of ``num_nodes`` and ``episode_length``,
    are accepted until rlsched 0.3 with a DeprecationWarning.
    Demands and capacities are rounded to multiples of 1/1024 core or GB, which keeps the
    float64 accounting exact.

    ## Version History

    - v0: initial version.
    """

    #: Per-dataset arrays, never written during an episode: snapshots share them.
    snapshot_static = (
        "_trace", "_event", "_vmid", "_c", "_m", "_dbl", "_need4", "_feat", "_req",
        "_del_tgt", "_del_ptr", "_del_pos", "_by_shape", "_shape",
    )
    oracle_base = "best_fit"
    observation_args: ClassVar[tuple[str, ...]] = ("grid_obs",)
    #: 2N actions: the oracle tries the base's, the first valid and 6 others per decision
    oracle_top_k = 8
    #: Above this many servers the oracle searches at ORACLE_DECISIONS decisions per episode:
    #: a full search over 3,000 (fading) to 24,000 (recovering) placements of 100 servers is
    #: about top_k x N^2 / 2 steps, minutes to hours per episode.
    ORACLE_FULL_NODES: ClassVar[int] = 20
    ORACLE_DECISIONS: ClassVar[int] = 100
    renamed_arguments: ClassVar[dict[str, str]] = {
        "num_servers": "num_nodes",
        "max_steps": "episode_length",
    }
    METRICS: ClassVar[dict[str, Metric]] = {
        "placed": Metric("placed", "VMs", higher_is_better=True, leaderboard=True, main=True),
        "cpu_util": Metric("cpu_util", "fraction", higher_is_better=True, leaderboard=True),
        "mem_util": Metric("mem_util", "fraction", higher_is_better=True, leaderboard=True),
        "fragmentation": Metric("fragmentation", "", higher_is_better=False, leaderboard=True),
        "invalid_actions": Metric("invalid", "actions", higher_is_better=False, leaderboard=True),
        "alive": Metric("alive", "VMs"),
    }

    @with_presets
    def __init__(
        self,
        num_nodes: int = 5,
        scenario: str = "fading",
        dataset: str | Any = "synthetic:vm",
        double_threshold: float | None = None,
        double_by: str = "cpu",
        double_mem_threshold: float | None = None,
        numa_cpu: float = 40.0,
        numa_mem: float = 90.0,
        start: int | None = None,
        start_range: tuple[float, float] = (0.0, 1.0),
        reward: str = "count",
        episode_length: int | None = None,
        frag_cores: float = 16.0,
        invalid_action_penalty: float = 0.0,
        compat: str | None = None,
        grid_obs: bool = True,
        render_mode: str | None = None,
    ) -> None:
        super().__init__()
        if compat is not None and compat not in COMPAT:
            raise ValueError(f"compat must be None or one of {COMPAT}, got {compat!r}")
        self.compat = compat
        if compat == "vmagent" and (double_by != "cpu" or double_mem_threshold is not None):
            raise ValueError(
                "compat='vmagent' decides double-NUMA by memory > double_threshold: "
                "double_by and double_mem_threshold do not apply"
            )
        if num_nodes < 1:
            raise ValueError("num_nodes must be >= 1")
        if scenario not in SCENARIOS:
            names = sorted(SCENARIOS) + sorted(PRESETS["VMPlacementEnv"])
            raise ValueError(f"scenario must be one of {names}, got {scenario!r}")
        if reward not in REWARDS:
            raise ValueError(f"reward must be one of {REWARDS}, got {reward!r}")
        if double_by not in ("cpu", "cpu_or_mem"):
            raise ValueError("double_by must be 'cpu' or 'cpu_or_mem'")
        if numa_cpu <= 0 or numa_mem <= 0:
            raise ValueError("numa_cpu and numa_mem must be positive")
        lo, hi = (float(x) for x in start_range)
        if not 0.0 <= lo < hi <= 1.0:
            raise ValueError("start_range must be (lo, hi) with 0 <= lo < hi <= 1")
        if episode_length is not None and episode_length < 1:
            raise ValueError("episode_length must be >= 1 or None")
        self._set_render_mode(render_mode)
        self.num_nodes = N = int(num_nodes)
        if N > self.ORACLE_FULL_NODES:
            self.oracle_decisions = self.ORACLE_DECISIONS
        self.scenario = scenario
        self.release, default_thr = SCENARIOS[scenario]
        self.double_threshold = float(default_thr if double_threshold is None else double_threshold)
        self.double_by = double_by
        self._q = quantum(max(float(numa_cpu), float(numa_mem)))
        self.numa_cpu = float(_round_to(numa_cpu, self._q))
        self.numa_mem = float(_round_to(numa_mem, self._q))
        if self.numa_cpu <= 0 or self.numa_mem <= 0:
            raise ValueError("numa_cpu and numa_mem are too far apart in scale")
        self.double_mem_threshold = float(
            self.double_threshold * self.numa_mem / self.numa_cpu
            if double_mem_threshold is None
            else double_mem_threshold
        )
        self.start = None if start is None else int(start)
        self.start_range = (lo, hi)
        self.reward_name = reward
        self.episode_length = None if episode_length is None else int(episode_length)
        self.frag_cores = float(frag_cores)
        self.invalid_action_penalty = float(invalid_action_penalty)

        self.action_space = spaces.Discrete(2 * N)
        f32 = np.float32
        cap = np.array([self.numa_cpu, self.numa_mem], dtype=f32)
        self.grid_obs = bool(grid_obs)
        grid = {"obs": spaces.Box(0.0, np.broadcast_to(cap, (N, 2, 2)).copy(), dtype=f32)}
        self.observation_space = spaces.Dict(
            {
                **(grid if self.grid_obs else {}),
                "feat": spaces.Box(0.0, np.broadcast_to(cap, (2, 2, 2)).copy(), dtype=f32),
                "node_free": spaces.Box(0.0, 1.0, (2 * N, 2), f32),
                "node_sibling": spaces.Box(0.0, 1.0, (2 * N, 2), f32),
                "node_after": spaces.Box(-1.0, 1.0, (2 * N, 2), f32),
                "request": spaces.Box(0.0, np.array([2.0, 2.0, 1.0], dtype=f32), dtype=f32),
                "node_position": spaces.Box(0.0, 1.0, (2 * N,), f32),
            }
        )
        # server index / N per action row: lets a node-scoring network express index-order
        # rules such as first_fit (VMAgent's strongest heuristic)
        self._position = (np.arange(2 * N, dtype=f32) // 2) / f32(N)
        # The state: remaining cpu, mem of each NUMA (column 2s + k), then of its sibling
        # (column 2s + k holds NUMA 1 - k), exact in float32 on the accounting grid. Each step
        # subtracts the request from a stride-0 double view of it: Z[0] is the state, Z[1] the
        # state minus the request's per-NUMA demand; Z / capacity gives the normalised keys,
        # Z[1] >= 0 the mask. All observation arrays are views of those two fresh arrays.
        self._S = np.empty((4, 2 * N), dtype=f32)
        self._V = np.broadcast_to(self._S, (2, 4, 2 * N))
        self._cap = np.empty((2, 4, 2 * N), dtype=f32)  # full size: no broadcasting
        self._cap[:, 0::2] = self.numa_cpu
        self._cap[:, 1::2] = self.numa_mem
        self._n_actions = 2 * N
        # scalar reads and writes go through memoryviews (4x faster than numpy indexing);
        # flat index of row r, column a: r * 2N + a
        self._sv = _scalars(self._S.reshape(-1), float)
        self._G = np.empty((4, 2 * N), dtype=bool)
        self._G01 = self._G[:2]
        self._Grows = tuple(self._G)
        self._mask = np.zeros(2 * N, dtype=bool)
        self._Z = np.zeros((2, 4, 2 * N), dtype=f32)

        self._dataset_name: str = ""
        self._prepare(self._load(dataset))
        self._done = True
        self._j = self._k_end
        self._S[0::2] = self.numa_cpu
        self._S[1::2] = self.numa_mem
        self._placed: dict[int, tuple[int, float, float, bool]] = {}
        self._steps = 0
        self._invalid = 0
        self._start_event = 0
        self._alloc_c = self._alloc_m = 0.0

    # ------------------------------------------------------------------ trace preparation
    def _load(self, dataset: str | Any) -> VMRequests:
        if isinstance(dataset, VMRequests):
            self._dataset_name = "vm-requests"
            return dataset
        ds, name = load_named(dataset, "vm-requests")
        trace = getattr(ds, "trace", None)
        if not isinstance(trace, VMRequests):
            raise ValueError(
                f"dataset {getattr(ds, 'name', dataset)!r} is not a VM request trace "
                "(use huawei-vm:PATH or synthetic:vm)"
            )
        self._dataset_name = name
        return trace

    def _prepare(self, tr: VMRequests) -> None:
        """Per-request arrays, the deletion schedule and the start range, once per env."""
        cre = np.flatnonzero(tr.type == CREATE)
        vmagent = self.compat == "vmagent"
        cpu = np.trunc(tr.cpu[cre]) if vmagent else tr.cpu[cre]  # its loader: int(cpu)
        c, m = _round_to(cpu, 2 * self._q), _round_to(tr.mem[cre], 2 * self._q)
        if vmagent:  # SchedGym's getData: mem > double_thr
            dbl = tr.mem[cre] > self.double_threshold
        else:
            dbl = c >= self.double_threshold
            if self.double_by == "cpu_or_mem":
                dbl |= m >= self.double_mem_threshold
        nc, nm = np.where(dbl, c / 2, c), np.where(dbl, m / 2, m)
        fits = (nc <= self.numa_cpu) & (nm <= self.numa_mem)
        self.oversized = int(np.count_nonzero(~fits))
        if vmagent:  # SchedGym keeps them: such a request ends the episode
            fits[:] = True
        keep = cre[fits]
        c, m, dbl, nc, nm = c[fits], m[fits], dbl[fits], nc[fits], nm[fits]
        K = len(keep)
        if K == 0:
            raise ValueError(f"dataset {self._dataset_name!r} has no creation that fits a server")
        self._k_end = K
        # SchedGym ends the episode when the next creation is the trace's last event
        self._k_stop = K - 1 if vmagent and keep[-1] >= len(tr) - 1 else K
        self._trace = tr
        self._event = keep
        self._vmid = tr.vmid[keep]
        # per request, with a zero row K for "no request"; scalars are read via memoryviews
        z = np.zeros(1)
        self._c = np.concatenate([c, z])
        self._m = np.concatenate([m, z])
        self._dbl = np.concatenate([dbl, [False]])
        self._cv, self._mv = _scalars(self._c, float), _scalars(self._m, float)
        self._dv = _scalars(self._dbl, bool)
        # what the request takes on each NUMA it uses, as the state's four rows subtract it
        need = np.stack([np.append(nc, 0.0), np.append(nm, 0.0)], axis=1)
        need4 = np.zeros((K + 1, 2, 4, 1), dtype=np.float32)
        need4[:, 1, :, 0] = np.concatenate([need, need], axis=1)
        self._need4 = need4
        feat = np.zeros((K + 1, 2, 2, 2), dtype=np.float32)
        feat[:, 0, 0] = need
        feat[:, 1, 1] = need
        feat[self._dbl, 0, 1] = need[self._dbl]
        feat[self._dbl, 1, 0] = need[self._dbl]
        self._feat = feat
        req = np.zeros((K + 1, 3), dtype=np.float32)
        req[:, 0] = self._c / self.numa_cpu
        req[:, 1] = self._m / self.numa_mem
        req[:, 2] = self._dbl
        self._req = req
        # deletions of kept VMs, and for each request where its following deletions begin
        ordinal = np.full(len(tr), -1, dtype=np.int64)
        ordinal[keep] = np.arange(K)
        dels = np.flatnonzero(tr.type == DELETE)
        tgt_event = tr.targets[dels]
        tgt = np.where(tgt_event >= 0, ordinal[np.maximum(tgt_event, 0)], -1)
        live = tgt >= 0
        self._del_tgt = tgt[live]
        self._del_ptr = np.append(np.searchsorted(dels[live], keep), len(self._del_tgt))
        self._tgtv, self._ptrv = _scalars(self._del_tgt, int), _scalars(self._del_ptr, int)
        # for sampled futures: where each kept VM is deleted (len(_del_tgt): never), and the
        # requests of each shape (cpu, mem, double) in trace order
        self._del_pos = np.full(K, len(self._del_tgt), dtype=np.int64)
        self._del_pos[self._del_tgt] = np.arange(len(self._del_tgt))
        _, shape = np.unique(np.stack([c, m, dbl]), axis=1, return_inverse=True)
        self._shape = shape.reshape(-1)
        self._by_shape = [np.flatnonzero(self._shape == k) for k in range(self._shape.max() + 1)]
        # episode starts: event indices whose first creation at or after them exists
        E = len(tr)
        lo = int(np.floor(self.start_range[0] * E))
        hi = min(int(np.ceil(self.start_range[1] * E)), int(keep[-1]) + 1)
        if lo >= hi:
            raise ValueError(f"start_range {self.start_range} holds no creation of the trace")
        self._start_lo, self._start_hi = lo, hi

    def _after_restore(self) -> None:
        # copies lose views: rebuild the views of the restored state arrays
        self._sv = _scalars(self._S.reshape(-1), float)
        self._V = np.broadcast_to(self._S, self._V.shape)
        self._G01 = self._G[:2]
        self._Grows = tuple(self._G)
        self._cv, self._mv = _scalars(self._c, float), _scalars(self._m, float)
        self._dv = _scalars(self._dbl, bool)
        self._tgtv, self._ptrv = _scalars(self._del_tgt, int), _scalars(self._del_ptr, int)

    @property
    def dataset_name(self) -> str:
        return self._dataset_name

    @property
    def trace(self) -> VMRequests:
        return self._trace

    @property
    def num_servers(self) -> int:
        """Deprecated name of :attr:`num_nodes` (until rlsched 0.3)."""
        deprecated_attribute(self, "num_servers", "num_nodes")
        return self.num_nodes

    @property
    def max_steps(self) -> int | None:
        """Deprecated name of :attr:`episode_length` (until rlsched 0.3)."""
        deprecated_attribute(self, "max_steps", "episode_length")
        return self.episode_length

    # ------------------------------------------------------------------ gymnasium API
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        super().reset(seed=seed)
        start = (options or {}).get("start", self.start)
        if start is None:
            start = int(self.np_random.integers(self._start_lo, self._start_hi))
        start = int(start)
        j = int(np.searchsorted(self._event, start))
        if not 0 <= start < len(self._trace) or j >= self._k_end:
            raise ValueError(f"start {start}: no creation at or after this trace event")
        self._start_event = start
        self._S[0::2] = self.numa_cpu
        self._S[1::2] = self.numa_mem
        self._alloc_c = self._alloc_m = 0.0
        self._placed = {}
        self._steps = 0
        self._invalid = 0
        self._j = j
        self._done = False
        self._advance(j)
        return self._observation(), {
            "start": start,
            "vmid": int(self._vmid[j]),
            "time": self._time(),
        }

    def _resample_workload(self, rng: np.random.Generator, sampler: str | None = None) -> None:
        """Resampled history: the future becomes the trace after an earlier request of the
        current request's shape (cpu, memory, double; a later one where none came before),
        and the VMs placed this episode take the places of the VMs alive there, so they
        leave when those did (residual lifetimes of the past); placed VMs beyond that count
        stay."""
        j = self._j
        if self._done:
            return
        same = self._by_shape[self._shape[j]]
        same = same[same < self._k_stop - 1]
        earlier = same[same < j]
        pool = earlier if len(earlier) else same[same != j]
        if len(pool) == 0:
            return
        k = int(pool[rng.integers(len(pool))])
        alive = np.flatnonzero(self._del_pos[:k] >= self._del_ptr[k])
        placed = list(self._placed.values())
        order = rng.permutation(len(placed))
        take = alive[rng.permutation(len(alive))[: len(placed)]]
        new = {int(t): placed[int(i)] for t, i in zip(take, order, strict=False)}
        for n, i in enumerate(order[len(take) :]):
            new[-1 - n] = placed[int(i)]  # never deleted
        self._placed = new
        self._advance(k)

    def _time(self) -> float:
        """The trace time of the request to place (of the last one after the end)."""
        return float(self._trace.time[self._event[min(self._j, self._k_end - 1)]])

    def _advance(self, j: int) -> bool:
        """Make request ``j`` current: its state arrays and mask; whether it fits anywhere."""
        self._j = j
        Z = self._Z = np.subtract(self._V, self._need4[j])
        g0, g1, g2, g3 = self._Grows
        mask = self._mask
        if self._dv[j]:  # half on each NUMA: this one and its sibling must both fit
            np.greater_equal(Z[1], 0.0, self._G)
            np.logical_and(g0, g1, mask)
            np.logical_and(mask, g2, mask)
            np.logical_and(mask, g3, mask)
        else:
            np.greater_equal(Z[1, :2], 0.0, self._G01)
            np.logical_and(g0, g1, mask)
        return bool(mask[mask.argmax()])

    def action_masks(self) -> np.ndarray:
        """Valid actions for the current request (all True once the episode is over)."""
        if self._done:
            return np.ones(self._n_actions, dtype=bool)
        return self._mask.copy()

    def step(self, action: int) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        if self._done:
            raise RuntimeError("step() called on a finished episode; call reset()")
        a = int(action)
        t = self._time()
        if not (0 <= a < self._n_actions) or not self._mask[a]:
            self._invalid += 1
            self._done = True
            self._mask[:] = False
            refused = self._invalid_action_info(t)
            return self._observation(), 0.0 - self.invalid_action_penalty, True, False, refused
        j = self._j
        c, m = self._cv[j], self._mv[j]
        dbl = self._dv[j]
        frag = self.reward_name == "fragmentation"
        if frag:
            f_before = self.fragmentation()
        if dbl:
            a &= ~1
        self._take(a, -c, -m, dbl)
        self._alloc_c += c
        self._alloc_m += m
        self._placed[j] = (a, c, m, dbl)
        self._steps += 1
        if self.reward_name == "count":
            reward = 1.0
        elif frag:
            reward = 1.0 - (self.fragmentation() - f_before)
        else:
            reward = c / self.numa_cpu
        # replay the deletions up to the next creation, then look at it
        if self.release:
            lo, hi = self._ptrv[j], self._ptrv[j + 1]
            if hi > lo:
                self._release(lo, hi)
        j += 1
        if j >= self._k_stop:
            terminated = True
            self._j = j
            self._Z = np.subtract(self._V, self._need4[j])
            self._mask[:] = False
        else:
            terminated = not self._advance(j)
        L = self.episode_length
        truncated = not terminated and L is not None and self._steps >= L
        info: dict[str, Any] = {"time": t}
        if terminated or truncated:
            self._done = True
            info["metrics"] = self.metrics()
        return self._observation(), reward, terminated, truncated, info

    def _take(self, a: int, dc: float, dm: float, dbl: bool) -> None:
        """Add ``(dc, dm)`` to the remaining cpu, mem of NUMA ``a`` (a double VM: half to each
        NUMA of server ``a // 2``, ``a`` even), in the state's own and sibling rows."""
        sv, n = self._sv, self._n_actions
        if dbl:
            dc, dm = dc / 2, dm / 2
            for col in (a, a + 1):
                sv[col] += dc
                sv[n + col] += dm
                sv[2 * n + col] += dc
                sv[3 * n + col] += dm
        else:
            sv[a] += dc
            sv[n + a] += dm
            b = a ^ 1
            sv[2 * n + b] += dc
            sv[3 * n + b] += dm

    def _release(self, lo: int, hi: int) -> None:
        """Replay deletions ``lo:hi``: free the VMs of this episode (others were created before
        the episode started)."""
        placed, take = self._placed, self._take
        for t in self._tgtv[lo:hi].tolist():
            vm = placed.pop(t, None)
            if vm is None:
                continue
            b, c, m, dbl = vm
            take(b, c, m, dbl)
            self._alloc_c -= c
            self._alloc_m -= m

    def _observation(self) -> dict[str, np.ndarray]:
        j = self._j
        Z = self._Z
        Y = np.divide(Z, self._cap)
        grid = {"obs": Z[0, :2].T.reshape(self.num_nodes, 2, 2)} if self.grid_obs else {}
        return {
            **grid,
            "feat": self._feat[j].copy(),
            "node_free": Y[0, :2].T,
            "node_sibling": Y[0, 2:].T,
            "node_after": Y[1, :2].T,
            "request": self._req[j].copy(),
            "node_position": self._position.copy(),
        }

    # ------------------------------------------------------------------ reporting
    def fragmentation(self) -> float:
        """Share of the cluster's free cpu stranded on NUMA nodes with fewer than
        ``frag_cores`` free cores (0 when no cpu is free). Such a NUMA can no longer host a VM
        of ``frag_cores`` cores, nor half of a double VM of twice that: packing VMs onto few
        NUMA nodes keeps it low, spreading them thinly raises it."""
        rc = self._S[0]
        total = float(rc.sum())
        if total <= 0.0:
            return 0.0
        return float(rc[rc < self.frag_cores].sum()) / total

    def metrics(self) -> dict[str, float]:
        cap_c = 2 * self.num_nodes * self.numa_cpu
        cap_m = 2 * self.num_nodes * self.numa_mem
        return {
            "placed": float(self._steps),
            "cpu_util": self._alloc_c / cap_c,
            "mem_util": self._alloc_m / cap_m,
            "fragmentation": self.fragmentation(),
            "invalid_actions": float(self._invalid),
            "alive": float(len(self._placed)),
        }

    @property
    def current_request(self) -> dict[str, float | int | bool] | None:
        """The request to place: trace event, vmid, cpu, mem, is_double (None at the end)."""
        j = self._j
        if j >= self._k_end:
            return None
        return {
            "event": int(self._event[j]),
            "vmid": int(self._vmid[j]),
            "cpu": self._c.item(j),
            "mem": self._m.item(j),
            "is_double": bool(self._dbl.item(j)),
        }

    def placements(self) -> dict[int, tuple[int, int]]:
        """Live VMs of this episode: vmid -> (server, NUMA), NUMA -1 for a double VM."""
        vmid = self._vmid
        return {
            int(vmid[j]): (b // 2, -1 if d else b % 2) for j, (b, _, _, d) in self._placed.items()
        }

    def render(self) -> str | None:
        if self.render_mode != "ansi":
            return None
        req = self.current_request
        head = f"{self.scenario} N={self.num_nodes} placed={self._steps}"
        if req is None:
            head += " | no more requests"
        else:
            kind = "double" if req["is_double"] else "single"
            head += f" | next: vm {req['vmid']} cpu {req['cpu']:g} mem {req['mem']:g} ({kind})"
        lines = [head, "server  numa0 cpu/mem      numa1 cpu/mem"]
        S = self._S
        for s in range(self.num_nodes):
            a, b = 2 * s, 2 * s + 1
            lines.append(f"{s:<7d} {S[0, a]:>6g}/{S[1, a]:<10g} {S[0, b]:>6g}/{S[1, b]:<10g}")
        return "\n".join(lines)
