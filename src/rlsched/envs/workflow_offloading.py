"""WorkflowOffloading-v0: offload workflow tasks to heterogeneous edge servers or a cloud."""

from __future__ import annotations

import copy
import hashlib
import pickle
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, TypedDict, TypeVar

import numpy as np
from gymnasium import spaces

from rlsched.core.offloading import (
    OffloadInstance,
    OffloadTask,
    Server,
    ServerState,
    eft_order,
    patent_example,
    ready_time,
)
from rlsched.core.optimal import solve
from rlsched.core.timeline import Timeline
from rlsched.core.workload import Workflow, derive_task_fields
from rlsched.envs.base import Metric, RlschedEnv, load_named
from rlsched.envs.offloading_fast import OffloadingRollouts, fast_rollouts
from rlsched.envs.offloading_fast import available as fast_available
from rlsched.scenarios import PRESETS, with_presets

_TASK_FEATURES = (
    "work",
    "cpu",
    "mem",
    "data_in",
    "data_out",
    "upward_rank",
    "depth",
    "remaining_fraction",
)
#: columns of the ``dag_tasks`` observation (class docstring)
_DAG_FEATURES = 12


def workflow_tasks(wf: Workflow) -> tuple[OffloadTask, ...]:
    """Registry workflow -> offloading tasks. image = task type; work = runtime x instances;
    cpu / mem = the derived cpu request / memory (GB) x instances
    (:func:`~rlsched.core.workload.derive_task_fields`); data = written bytes / 1e6 (MB)."""
    out = []
    for t in wf.tasks:
        d = derive_task_fields(t)
        k = max(1, t.instances)
        out.append(
            OffloadTask(
                t.name,
                t.type,
                d["cpu_request"] * k,
                d["mem_request"] * k,
                float(t.runtime) * k,
                float(t.write_bytes or 0.0) / 1e6,
                tuple(t.parents),
            )
        )
    return tuple(out)


def workflow_input_data(wf: Workflow) -> float:
    """MB each source task of ``wf`` receives from the origin: the mean over its source tasks
    (no parents) of the bytes they read / 1e6 (0 when the trace has no read bytes)."""
    src = [t for t in wf.tasks if not t.parents]
    if not src:
        return 0.0
    return float(np.mean([float(t.read_bytes or 0.0) for t in src])) / 1e6


class Estimate(TypedDict):
    """What placing the current task on a server gives (:meth:`WorkflowOffloadingEnv.estimate`):
    times in seconds, ``pulled`` whether its image is pulled first."""

    t_trans: float
    t_in: float
    t_out: float
    t_exec: float
    ready: float
    start: float
    finish: float
    done: float
    pulled: bool


def _eft_keys(ests: Sequence[Estimate | None]) -> tuple[np.ndarray, np.ndarray]:
    """``eft_order``'s keys from per-server estimates (None: not a candidate, ``inf``): the
    finish plus a sink's return, rounded to 1e-9 s, and the transfer time."""
    done = np.array([np.inf if e is None else round(e["done"], 9) for e in ests])
    trans = np.array([np.inf if e is None else e["t_trans"] for e in ests])
    return done, trans


_T = TypeVar("_T")


def _cached(cache: dict[Any, _T], key: Any, build: Callable[[], _T]) -> _T:
    """``cache[key]``, built by ``build()`` the first time."""
    if key not in cache:
        cache[key] = build()
    return cache[key]


#: isolated optima by (instance digest, limits): one CP-SAT solve per workflow per process
_OPTIMA: dict[tuple[str, float, float | None], float] = {}


def _isolated_optimum(inst: OffloadInstance, time_limit: float, work_limit: float | None) -> float:
    """The best makespan CP-SAT finds for ``inst`` within the limits, solved once per process:
    envs of the same dataset and servers (each row of a ``compare``) build equal instances."""
    key = (hashlib.sha1(pickle.dumps(inst)).hexdigest(), time_limit, work_limit)
    if key not in _OPTIMA:
        res = solve(inst, time_limit=time_limit, work_limit=work_limit)
        _OPTIMA[key] = float(min(res.makespan, res.sim_makespan))
    return _OPTIMA[key]


class WorkflowOffloadingEnv(RlschedEnv):
    """
    ## Description

    Workflows (DAGs of tasks) arrive at edge servers as a Poisson process (rate
    ``arrival_rate`` per second; the origin edge server is drawn uniformly). A workflow's input
    is at its origin and its results must get back there: each source task first receives
    ``input_data`` MB from the origin and each sink task's output (``data``) returns to it, so
    running far from the origin (the cloud) costs transfer time. The agent offloads every
    task of a workflow to an edge server or the cloud, one task per step, following the MDP of
    the patent "a workflow task offloading method based on a Markov decision process":

    - per workflow a predecessor table, the decided (``comp``) and waiting (``wait``) sets, and
      the candidate set ``cand`` = undecided tasks whose predecessors are all decided;
    - the next task (b8.1, ``task_order="patent"``): a candidate whose image the previous
      decision's server holds (or has cached), else any candidate, ties drawn with the env rng;
      ``task_order="rank"`` takes the candidate with the highest HEFT upward rank;
    - a workflow's tasks are all decided when it arrives (decisions take no time); the clock then
      jumps to the next arrival. Decided tasks run by the timing model of
      :mod:`rlsched.core.offloading` (transfers ``d_p * adj / b``, source inputs from and sink
      outputs to the origin, cold-start image pulls, resource-feasible earliest start), so a
      workflow's schedule and completion equal
      :func:`~rlsched.core.offloading.simulate` of the same decisions in decision order (with the
      env's bounded LRU image cache, ``cache_size``). An event heap replays starts (c1: the
      task's cpu / memory are taken) and finishes (c2: released; completed workflows reported)
      as the clock moves; a workflow is reported when its last sink output reaches the origin.

    Data: a task's ``data`` (its output, sent to each child and, for a sink, back to the
    origin) is its trace's written bytes / 1e6 (MB); the workflow's ``input_data`` is the mean
    over its source tasks of their read bytes / 1e6 (:func:`workflow_input_data`).

    Network: ``trans = MB * adj[i][j] / bandwidth`` (+ ``cloud_rtt`` on a link to or from the
    cloud). Defaults: ``bandwidth`` 10 MB/s per unit
    of distance, edge-edge distances in ``edge_distance`` = [1, 2] (links of 5-10 MB/s, a metro
    network) and ``cloud_distance`` 10 to the cloud (1 MB/s, a shared WAN uplink). With these,
    earliest-finish policies keep data-heavy workflows (1000genome, epigenomics) at the edge and
    send compute-heavy, data-light ones to the cloud, and ``all_cloud`` is clearly worse.

    Servers: ``num_nodes`` edge servers (default drawn in 3..5 from ``server_seed``) with cpu in
    {4, 8, 16} cores, memory in {8, 16, 32} GB, speed in [0.7, 1.3] and 1..3 of the dataset's
    images preinstalled; edge distances uniform in ``edge_distance``. The optional cloud has
    unlimited cpu and
    memory, every image, speed ``cloud_speed`` (2.0) and distance ``cloud_distance`` (10) to every
    edge. Dataset tasks keep their trace demands (about 1 core, < 1 GB for WfInstances) so every
    edge server can host them; a task larger than every edge server can run only on the cloud
    (without a cloud it is shrunk to the largest edge server, documented in ``info``).

    ``scenario="patent-example"``: the worked example of
    :func:`~rlsched.core.offloading.patent_example` (one workflow arriving at es1, three edge
    servers, no cloud).

    ## Action Space

    ``Discrete(num_nodes + cloud)``: the server for the current task (the cloud is last).
    :meth:`action_masks` marks the servers that can ever host it (capacity >= demand).

    ## Observation Space

    A ``Dict``; ``node_*`` keys have one row per server (fixed size across DAG sizes, so the
    node-scoring network of :mod:`rlsched.agents.networks` applies). Times are in ``time_unit``.

    - ``node_free (N, 2)``: free cpu / memory fraction on the server when the task is ready.
    - ``node_speed (N,)``, ``node_is_cloud (N,)``, ``node_origin (N,)`` (the workflow's origin).
    - ``node_image (N,)``: 1 if the server holds or has cached the task's image.
    - ``node_transfer (N,)``: transfer time if placed there: from the predecessors
      (``d_p * adj / b`` summed) or, for a source, of the input from the origin; plus, for a
      sink, its output's return to the origin.
    - ``node_start (N,)``, ``node_finish (N,)``: estimated start / finish if placed there,
      relative to now.
    - ``node_done (N,)``: ``node_finish`` plus, for a sink, its output's return to the origin
      (what earliest-finish policies minimise).
    - ``node_busy (N,)``: reserved cpu-time after now over the server's cores (0 for the cloud).
    - ``node_queue (N,)``: tasks placed and not yet finished.
    - ``node_child_done (N,)`` (only with ``lookahead=True``): if the task goes to the server,
      the earliest finish, over the servers that can host it, of its most critical child (the
      highest upward rank), its input from this task counted and from undecided other parents
      not; plus, for a sink child, its output's return to the origin; for a sink task,
      ``node_done``. Relative to now. One step of what a rollout sees: where this task's
      placement leaves the critical path's next task.
    - ``node_done_gap (N,)`` (only with ``finish_gap=True``): ``node_done`` minus the earliest
      ``node_done`` among the servers that can host the task (0 where it cannot), so the
      server of earliest finish reads 0 however long the queues are: a network reading
      squashed inputs tells 300 from 305 time units apart poorly, 0 from 5 well.
    - ``node_oct (N,)`` and ``node_peft_gap (N,)`` (only with ``optimistic_cost=True``): PEFT's
      optimistic cost of the task on the server (:meth:`OffloadInstance.optimistic_cost
      <rlsched.core.offloading.OffloadInstance.optimistic_cost>`: the rest of its longest path
      after it, each later task on its best server, nothing queued), and ``node_done +
      node_oct`` minus its least value among the servers that can host the task (0 there and
      where it cannot): what ``peft`` minimises, as ``node_done_gap`` is HEFT's. The table is
      computed once per workflow, so the step reads one row of it.
    - ``node_subtree (N,)``, ``node_width (N,)`` and ``subtree (3,)`` (only with
      ``contention=True``; :meth:`OffloadInstance.descendant_load
      <rlsched.core.offloading.OffloadInstance.descendant_load>`): the cpu-work of the task's
      descendants over the server's cores times its speed (the least time they take if they all
      follow the task there; 0 on the cloud), the server's cores over the task's cpu times the
      most descendants at one depth (capped at 1; 1 on the cloud: how much of the subtree's
      widest level it runs at once), and the descendants' cpu-work, number and widest level.
      What the optimistic cost leaves out: the workflow's own tasks queueing behind each other.
    - ``dag_tasks (T, 12)``, ``dag_placed (T,)``, ``dag_links (T, T)`` and ``dag_oct (T, N)``
      (only with ``dag=True``; ``T = dag_max_tasks``, rows past the workflow's tasks are
      zero): the whole current workflow, for a model that reads its graph
      (:mod:`rlsched.agents.dag_net`). Per task: work, cpu, mem, data out, upward rank (work
      and rank in ``time_unit``), depth, decided, current, sink, source, finish relative to
      now (decided tasks; may be negative) and 1 (a real task); the server of each decided
      task (-1: undecided); ``dag_links[c, p]``: the data task ``p`` sends its child ``c``
      (0: no link); PEFT's optimistic cost table (:meth:`optimistic_costs`, in ``time_unit``).
    - ``dag_plan (T, 2)`` and ``dag_plan_servers (N, 2)`` (only with ``dag_plan=True``): PEFT's
      schedule of the rest of the current workflow from this decision, the current task
      included (the compiled rollouts, :meth:`OffloadingRollouts.plan
      <rlsched.envs.offloading_fast.OffloadingRollouts.plan>`; needs numba; kept while the
      decisions follow it, :meth:`_plan`). Per task: its server in that schedule (a decided
      task's own; -1 past the workflow's tasks) and its finish relative to now in
      ``time_unit``; per server: the latest such finish of the undecided tasks the schedule
      gives it (0: none) and how many it gives it. What a
      departure from PEFT's choice would change: where the rest of the workflow goes and
      when it ends.
    - ``task (8,)``: work, cpu, mem, data in (sum over predecessors; a source: ``input_data``),
      data out, upward rank,
      depth (longest chain of predecessors), fraction of the workflow's tasks still undecided.

    ## Rewards

    Divided by ``time_unit`` (default: the dataset's mean task work; 1 s for the example):

    - ``patent`` (default): ``-(t_trans + t_exec)``, ``t_trans`` = sum of transfer times from
      predecessors on other servers (a source: its input from the origin; a sink: plus its
      output back to the origin), ``t_exec`` = execution time including a pull.
    - ``makespan``: minus the increase of the workflow's projected completion (the latest
      ``finish`` (+ return to the origin for sinks) among its decided tasks, the arrival at
      first); the sum over a workflow is minus its completion time.

    ``info["completed_workflows"]`` lists the completion times (last sink output back at the
    origin - arrival) of the workflows that completed while the clock moved this step.

    ## Starting State

    Empty servers at time 0; the workflows (drawn from ``dataset``) and their arrivals and
    origins are drawn with the reset seed.

    ## Episode End

    Terminated once every task of the ``num_workflows`` workflows is decided. The last step's
    ``info["metrics"]``: ``mean_completion`` / ``p95_completion`` (workflow completion -
    arrival, s), ``makespan`` (last completion - first arrival), ``cloud_share`` (fraction of
    tasks on the cloud), ``cost`` (``cloud_price`` $ per second of cloud run time +
    ``edge_price`` $ per second of edge run time), ``tasks``, ``pulls`` and
    ``optimality_gap``: with ``optimality_reference=True``, the mean over the completed
    workflows of at most ``optimal_max_tasks`` tasks of ``completion / optimum - 1``, the
    optimum being that workflow's *isolated* optimum (its static instance alone on empty
    servers from its origin, CP-SAT stopped by ``optimal_work_limit`` units of its
    deterministic time, so the same on a busy machine as on an idle one, cached per workflow
    instance; see :meth:`optimality_gap`): contention with other workflows counts against
    the policy. NaN when off (the default) or when no such workflow completed. An invalid
    action ends the episode with reward ``-invalid_action_penalty`` (the rule of
    :mod:`rlsched.envs.base`), by default minus the number of undecided tasks; after the end
    :meth:`action_masks` is all True.

    ## Arguments

    ``num_nodes`` (None: 3..5 edge servers; ``num_edge``, its old name, is accepted until rlsched
    0.3 with a DeprecationWarning), ``cloud`` (True), ``dataset`` (``"wfinstances:all"``),
    ``scenario`` (``"patent-example"`` or a preset of :mod:`rlsched.scenarios`: ``patent``,
    ``cloud-dominant`` (the values below), ``edge-cloud``, ``congested``; None: the default
    preset ``congested``; explicit arguments win), ``num_workflows`` (4), ``arrival_rate``
    (None: one workflow per mean standalone critical path), ``load`` (None; when set, in place
    of ``arrival_rate``: workflows arrive at ``load`` times the edge servers' capacity,
    ``load * sum(cores * speed) / mean(sum over tasks of cpu * work)`` per second),
    ``reward`` (``"patent"``),
    ``task_order`` (``"patent"``), ``bandwidth`` (10 MB/s per unit distance), ``pull_time`` (5 s),
    ``cache_size`` (3 images per edge server), ``cloud_speed`` (2.0), ``cloud_distance`` (10),
    ``cloud_rtt`` (0 s: the WAN's round-trip time, paid once by every transfer to or from the
    cloud), ``edge_distance`` ((1, 2)), ``cloud_price`` (2e-4 $/s), ``edge_price`` (5e-5 $/s),
    ``max_tasks`` (200: larger workflows are skipped), ``time_unit`` (None), ``server_seed``
    (0), ``optimality_reference`` (False), ``optimal_max_tasks`` (20), ``optimal_work_limit``
    (2.0: CP-SAT's deterministic time per isolated optimum), ``optimal_time_limit`` (60 s of
    wall clock, a cap for very slow machines; before 2026-11-29 the only limit, 2 s),
    ``invalid_action_penalty`` (None: the undecided tasks), ``lookahead`` (False: adds
    ``node_child_done``), ``candidates`` (None; k: the mask keeps the k valid servers of
    earliest estimated finish, HEFT's choice first among them, so a policy trained so is
    anchored to HEFT: k=1 is HEFT itself), ``finish_gap`` (False: adds ``node_done_gap``),
    ``optimistic_cost`` (False: adds ``node_oct`` and ``node_peft_gap``), ``contention``
    (False: adds ``node_subtree``, ``node_width`` and ``subtree``), ``dag`` (False: adds the
    ``dag_*`` keys; every workflow of the dataset must then have at most ``dag_max_tasks``
    tasks, default 20), ``dag_plan`` (False: adds ``dag_plan`` and ``dag_plan_servers``; needs
    ``dag=True`` and numba), ``render_mode``.

    ## Version History

    - v0: initial version.
    """

    #: Built per dataset or episode and never written in a step: snapshots share them (the
    #: caches too: pure functions of a workflow template, which grow over a long run and
    #: would otherwise be copied by every snapshot a search takes)
    snapshot_static = (
        "_pool", "_wf", "_ranks", "_children", "_obs_shapes",
        "_opt_cache", "_oct_cache", "_load_cache", "_dag_cache",
        "servers", "_pool_names", "_pool_input", "_edges", "adj", "_is_cloud", "_cores",
        "_speeds", "_capacity", "_template_cache", "_fast_cache",
    )  # fmt: skip
    #: Copied one level deep: the records, events and per-workflow entries in them are
    #: replaced, never changed in place
    snapshot_shallow = (
        "_log", "_log_index", "_timeline", "_completion", "_reported", "_pending_done",
        "_running", "_cand", "_picks", "_origin", "_is_sink", "_depth",
    )  # fmt: skip
    oracle_base = "heft"
    #: the per-server features from the compiled kernels where they apply (numba installed,
    #: no ``candidates`` mask); False: always in Python (the tests compare the two)
    compiled_observation = True
    # ``dag_max_tasks`` only pads the ``dag_*`` keys (a workflow larger than it is refused
    # with a clear error, so a model that reads 64 tasks plays where every workflow fits)
    observation_args: ClassVar[tuple[str, ...]] = (
        "lookahead", "finish_gap", "optimistic_cost", "contention", "dag", "dag_max_tasks",
        "dag_plan",
    )
    renamed_arguments: ClassVar[dict[str, str]] = {"num_edge": "num_nodes"}
    METRICS: ClassVar[dict[str, Metric]] = {
        "mean_completion": Metric(
            "mean_completion", "s", higher_is_better=False, leaderboard=True, main=True
        ),
        "p95_completion": Metric("p95_completion", "s", higher_is_better=False, leaderboard=True),
        "optimality_gap": Metric(
            "optimality_gap", "fraction", higher_is_better=False, leaderboard=True
        ),
        "cloud_share": Metric("cloud_share", "fraction", leaderboard=True),
        "cost": Metric("cost $", "$", higher_is_better=False, leaderboard=True),
        "makespan": Metric("makespan", "s", higher_is_better=False),
        "tasks": Metric("tasks", "tasks"),
        "workflows": Metric("workflows", "workflows"),
        "pulls": Metric("pulls", "pulls"),
        "invalid_actions": Metric("invalid", "actions", higher_is_better=False),
    }

    def policy_applies(self, name: str) -> bool:
        """``all_cloud`` needs a cloud (without one it would be earliest finish by another
        name)."""
        return name != "all_cloud" or any(s.is_cloud for s in self.servers)

    @with_presets
    def __init__(
        self,
        num_nodes: int | None = None,
        cloud: bool = True,
        dataset: str | Any = "wfinstances:all",
        scenario: str | None = None,
        num_workflows: int = 4,
        arrival_rate: float | None = None,
        load: float | None = None,
        reward: str = "patent",
        task_order: str = "patent",
        bandwidth: float = 10.0,
        pull_time: float = 5.0,
        cache_size: int | None = 3,
        cloud_speed: float = 2.0,
        cloud_distance: float = 10.0,
        cloud_rtt: float = 0.0,
        edge_distance: tuple[float, float] = (1.0, 2.0),
        cloud_price: float = 2e-4,
        edge_price: float = 5e-5,
        max_tasks: int = 200,
        time_unit: float | None = None,
        server_seed: int = 0,
        optimality_reference: bool = False,
        optimal_max_tasks: int = 20,
        optimal_time_limit: float = 60.0,
        optimal_work_limit: float | None = 2.0,
        invalid_action_penalty: float | None = None,
        lookahead: bool = False,
        candidates: int | None = None,
        finish_gap: bool = False,
        optimistic_cost: bool = False,
        contention: bool = False,
        dag: bool = False,
        dag_max_tasks: int = 20,
        dag_plan: bool = False,
        render_mode: str | None = None,
    ) -> None:
        super().__init__()
        if reward not in ("patent", "makespan"):
            raise ValueError("reward must be 'patent' or 'makespan'")
        if task_order not in ("patent", "rank"):
            raise ValueError("task_order must be 'patent' or 'rank'")
        if scenario not in (None, "patent-example"):
            names = ["patent-example", *sorted(PRESETS["WorkflowOffloadingEnv"])]
            raise ValueError(f"scenario must be None or one of {names}, got {scenario!r}")
        if num_workflows < 1:
            raise ValueError("num_workflows must be >= 1")
        if bandwidth <= 0:  # checked here too: a given arrival_rate builds no instance now
            raise ValueError("bandwidth must be positive")
        if cloud_rtt < 0:
            raise ValueError("cloud_rtt must be >= 0")
        self._set_render_mode(render_mode)
        self.invalid_action_penalty = invalid_action_penalty
        self.lookahead = bool(lookahead)
        if candidates is not None and int(candidates) < 1:
            raise ValueError(f"candidates must be None or >= 1, got {candidates!r}")
        self.candidates = None if candidates is None else int(candidates)
        self.finish_gap = bool(finish_gap)
        self.optimistic_cost = bool(optimistic_cost)
        self._oct_cache: dict[tuple[int, int], np.ndarray] = {}
        self.contention = bool(contention)
        self._load_cache: dict[int, np.ndarray] = {}
        self.dag = bool(dag)
        self.dag_max_tasks = int(dag_max_tasks)
        if self.dag_max_tasks < 1:
            raise ValueError(f"dag_max_tasks must be >= 1, got {dag_max_tasks!r}")
        self.dag_plan = bool(dag_plan)
        if self.dag_plan and not self.dag:
            raise ValueError("dag_plan=True adds to the dag_* keys: it needs dag=True")
        if self.dag_plan and candidates is not None:
            raise ValueError("dag_plan=True plays PEFT over every server: it needs candidates=None")
        if self.dag_plan and not fast_available():
            raise ValueError(
                "dag_plan=True computes PEFT's schedule with the compiled rollouts, which need "
                "numba: pip install 'rlsched[fast]'"
            )
        # per workflow template: the dag_* rows that no decision changes
        self._dag_cache: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self._template_cache: dict[int, tuple[Any, np.ndarray, np.ndarray]] = {}
        self._fast_cache: dict[Any, Any] = {}  # rlsched.envs.offloading_fast
        # the anchored mask of the current decision, kept by _observation (which estimates
        # every server anyway) so that action_masks need not estimate them again
        self._anchor_mask: np.ndarray | None = None
        self.reward_name = reward
        self.task_order = task_order
        self.scenario = scenario
        self.cloud_price, self.edge_price = float(cloud_price), float(edge_price)
        self.cache_size = cache_size
        self.optimality_reference = bool(optimality_reference)
        self.optimal_max_tasks = int(optimal_max_tasks)
        self.optimal_time_limit = float(optimal_time_limit)
        self.optimal_work_limit = None if optimal_work_limit is None else float(optimal_work_limit)
        self._opt_cache: dict[tuple[int, int], float] = {}
        rng = np.random.default_rng(server_seed)
        if scenario == "patent-example":
            ex = patent_example()
            self._pool: list[tuple[OffloadTask, ...]] = [ex.tasks]
            self._pool_names = [ex.name]
            self._pool_input = [ex.input_data]
            self._example_origin = ex.origin
            self._dataset_name = "patent-example"
            self.servers = ex.servers
            self.adj = np.asarray(ex.adj, dtype=float)
            self.bandwidth, self.pull_time = ex.bandwidth, ex.pull_time
            self._latency: np.ndarray | None = None
            self.num_workflows = 1
            self.cache_size = None
        else:
            if isinstance(dataset, str) or hasattr(dataset, "workflows"):
                ds, self._dataset_name = load_named(dataset)
                workflows = list(ds.workflows)
            else:
                self._dataset_name = "workflows"
                workflows = list(dataset)
            workflows = [w for w in workflows if 0 < len(w.tasks) <= max_tasks]
            if not workflows:
                raise ValueError("the dataset has no workflow with 1..max_tasks tasks")
            self._pool = [workflow_tasks(w) for w in workflows]
            self._pool_names = [w.name for w in workflows]
            self._pool_input = [workflow_input_data(w) for w in workflows]
            images = sorted({t.image for tasks in self._pool for t in tasks})
            n = int(rng.integers(3, 6)) if num_nodes is None else int(num_nodes)
            if n < 1:
                raise ValueError("num_nodes must be >= 1")
            servers = []
            for k in range(n):
                held = rng.choice(len(images), size=min(len(images), int(rng.integers(1, 4))))
                servers.append(
                    Server(
                        f"es{k + 1}",
                        float(rng.choice([4.0, 8.0, 16.0])),
                        float(rng.choice([8.0, 16.0, 32.0])),
                        float(np.round(rng.uniform(0.7, 1.3), 2)),
                        frozenset(images[int(i)] for i in held),
                    )
                )
            lo, hi = (float(x) for x in edge_distance)
            d = rng.uniform(lo, hi, size=(n, n))
            adj = np.triu(d, 1) + np.triu(d, 1).T
            if cloud:
                servers.append(
                    Server("cloud", np.inf, np.inf, float(cloud_speed), frozenset(), True)
                )
                adj = np.pad(adj, ((0, 1), (0, 1)), constant_values=float(cloud_distance))
                adj[n, n] = 0.0
                # a transfer to or from the cloud pays the WAN's round trip before its data flows
                latency = np.zeros_like(adj)
                latency[n, :n] = latency[:n, n] = float(cloud_rtt)
                self._latency = latency if cloud_rtt > 0 else None
            else:
                self._latency = None
                big_cpu = max(s.cpu for s in servers)
                big_mem = max(s.mem for s in servers)
                self._pool = [
                    tuple(
                        OffloadTask(
                            t.name,
                            t.image,
                            min(t.cpu, big_cpu),
                            min(t.mem, big_mem),
                            t.work,
                            t.data,
                            t.parents,
                        )
                        for t in tasks
                    )
                    for tasks in self._pool
                ]
            self.servers = tuple(servers)
            self.adj = adj
            self.bandwidth, self.pull_time = float(bandwidth), float(pull_time)
            self.num_workflows = int(num_workflows)
        #: Servers an action may name: the edge servers, then the cloud (if any).
        self.num_servers = N = len(self.servers)
        self._edges = [k for k, s in enumerate(self.servers) if not s.is_cloud]
        #: Edge servers (the ``num_nodes`` argument, or the patent example's three).
        self.num_nodes = len(self._edges)
        self._is_cloud = np.array([s.is_cloud for s in self.servers])
        self._cores = np.array([0.0 if s.is_cloud else s.cpu for s in self.servers])
        self._speeds = np.array([s.speed for s in self.servers])
        self._capacity = np.where(self._is_cloud, 1.0, self._cores * self._speeds)
        all_work = np.array([t.work for tasks in self._pool for t in tasks])
        self.time_unit = float(
            time_unit
            if time_unit is not None
            else (1.0 if scenario else max(float(all_work.mean()), 1e-6))
        )
        if load is not None:  # wins over arrival_rate (a preset may set that one)
            # the edge servers' bounded capacity (core-seconds of unit-speed work per second)
            # against the mean workflow's work: arrivals at ``load`` times that capacity
            if load <= 0:
                raise ValueError("load must be positive")
            cap = sum(s.cpu * s.speed for s in self.servers if not s.is_cloud)
            work = float(np.mean([sum(t.cpu * t.work for t in tasks) for tasks in self._pool]))
            arrival_rate = float(load) * cap / max(work, 1e-9)
        if arrival_rate is None:
            cps = [self._static(k, 0.0, 0).upward_rank().max() for k in range(len(self._pool))]
            arrival_rate = 1.0 / max(float(np.mean(cps)), 1e-6)
        self.arrival_rate = float(arrival_rate)
        self.load = None if load is None else float(load)
        if self.dag:
            largest = max(range(len(self._pool)), key=lambda k: len(self._pool[k]))
            if len(self._pool[largest]) > self.dag_max_tasks:
                raise ValueError(
                    f"dag=True reads whole workflows of at most dag_max_tasks="
                    f"{self.dag_max_tasks} tasks; {self._pool_names[largest]!r} in "
                    f"{self._dataset_name} has {len(self._pool[largest])}"
                )

        f32, inf = np.float32, np.inf
        self.action_space = spaces.Discrete(N)
        boxes = {
            "node_free": spaces.Box(0.0, 1.0, (N, 2), f32),
            "node_speed": spaces.Box(0.0, inf, (N,), f32),
            "node_is_cloud": spaces.Box(0.0, 1.0, (N,), f32),
            "node_origin": spaces.Box(0.0, 1.0, (N,), f32),
            "node_image": spaces.Box(0.0, 1.0, (N,), f32),
            "node_transfer": spaces.Box(0.0, inf, (N,), f32),
            "node_start": spaces.Box(0.0, inf, (N,), f32),
            "node_finish": spaces.Box(0.0, inf, (N,), f32),
            "node_done": spaces.Box(0.0, inf, (N,), f32),
            "node_busy": spaces.Box(0.0, inf, (N,), f32),
            "node_queue": spaces.Box(0.0, inf, (N,), f32),
            "task": spaces.Box(0.0, inf, (len(_TASK_FEATURES),), f32),
        }
        if self.lookahead:
            boxes["node_child_done"] = spaces.Box(0.0, inf, (N,), f32)
        if self.finish_gap:
            boxes["node_done_gap"] = spaces.Box(0.0, inf, (N,), f32)
        if self.optimistic_cost:
            boxes["node_oct"] = spaces.Box(0.0, inf, (N,), f32)
            boxes["node_peft_gap"] = spaces.Box(0.0, inf, (N,), f32)
        if self.contention:
            boxes["node_subtree"] = spaces.Box(0.0, inf, (N,), f32)
            boxes["node_width"] = spaces.Box(0.0, 1.0, (N,), f32)
            boxes["subtree"] = spaces.Box(0.0, inf, (3,), f32)
        if self.dag:
            T = self.dag_max_tasks
            boxes["dag_tasks"] = spaces.Box(-inf, inf, (T, _DAG_FEATURES), f32)
            boxes["dag_placed"] = spaces.Box(-1.0, float(N - 1), (T,), f32)
            boxes["dag_links"] = spaces.Box(0.0, inf, (T, T), f32)
            boxes["dag_oct"] = spaces.Box(0.0, inf, (T, N), f32)
        if self.dag_plan:
            boxes["dag_plan"] = spaces.Box(-inf, inf, (T, 2), f32)
            boxes["dag_plan_servers"] = spaces.Box(-inf, inf, (N, 2), f32)
        # in key order, as a Dict space sorts a mapping's keys
        self.observation_space = spaces.Dict(sorted(boxes.items()))
        #: the observation's arrays: name -> shape, in the space's key order
        self._obs_shapes = {k: box.shape for k, box in sorted(boxes.items())}
        self._done = True

    # ------------------------------------------------------------------ helpers
    def _static(self, k: int, arrival: float, origin: int) -> OffloadInstance:
        return OffloadInstance(
            self.servers,
            self.adj,
            self.bandwidth,
            self.pull_time,
            self._pool[k],
            arrival,
            self._pool_names[k],
            origin,
            self._pool_input[k],
            self._latency,
        )

    def __deepcopy__(self, memo: dict[int, Any]) -> WorkflowOffloadingEnv:
        # immutable, shared: the workflow pool, servers and spaces
        for shared in (
            self._pool,
            self.servers,
            self.adj,
            self._latency,
            self.observation_space,
            self.action_space,
            self._pool_names,
            self._pool_input,
            self._opt_cache,  # a pure cache of isolated optima, shared by copies
            self._oct_cache,  # the same for optimistic cost tables
            self._load_cache,
            self._dag_cache,
            self._fast_cache,  # the compiled rollouts' arrays per template, and image ids
        ):
            memo[id(shared)] = shared
        new = self.__class__.__new__(self.__class__)
        memo[id(self)] = new
        for k, v in self.__dict__.items():
            setattr(new, k, copy.deepcopy(v, memo))
        return new

    @property
    def dataset_name(self) -> str:
        return self._dataset_name

    # ------------------------------------------------------------------ gymnasium API
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        super().reset(seed=seed)
        rng = self.np_random
        W = self.num_workflows
        if self.scenario == "patent-example":
            picks, arrivals, origins = [0], [0.0], [self._example_origin]
        else:
            picks = [int(x) for x in rng.integers(0, len(self._pool), size=W)]
            gaps = rng.exponential(1.0 / self.arrival_rate, size=W)
            arrivals = list(np.cumsum(gaps) - gaps[0])
            origins = [int(self._edges[int(i)]) for i in rng.integers(0, len(self._edges), W)]
        self._wf: list[OffloadInstance] = []
        self._picks: list[int] = []
        self._origin: list[int] = []
        self._ranks: list[Any] = []
        self._children: list[Any] = []
        self._is_sink: list[list[bool]] = []
        self._depth: list[np.ndarray] = []
        self._set_workflows(0, picks, arrivals, origins)
        self._states = [
            ServerState(s, None if s.is_cloud else self.cache_size) for s in self.servers
        ]
        self._timeline: Timeline[tuple[str, int, int]] = Timeline()
        self._running = [0] * self.num_servers
        self._log: list[dict[str, Any]] = []
        self._log_index: dict[tuple[int, int], dict[str, Any]] = {}
        self._completion: list[float] = [float("nan")] * len(self._wf)
        self._reported = [False] * len(self._wf)
        self._pending_done: list[float] = []
        self._cloud_tasks = 0
        self._tasks_done = 0
        self._pulls = 0
        self._cost = 0.0
        self._invalid = 0
        self._w = -1
        self._now = 0.0
        self._done = False
        self._next_workflow()
        return self._observation(), {"time": self._now, "dataset": self._dataset_name}

    def _set_workflows(
        self, first: int, picks: list[int], arrivals: list[float], origins: list[int]
    ) -> None:
        """Make workflows ``first, first + 1, ...`` these (pool index, arrival, origin). New
        lists, never changed in place: snapshots share ``_wf``, ``_ranks``, ``_children``."""
        rows = zip(picks, arrivals, origins, strict=True)
        wf = [self._static(k, float(a), o) for k, a, o in rows]
        # children, depth and upward rank depend on the template alone: a search that
        # resamples the workload at every rollout would otherwise recompute them each time
        shapes = [self._template_shape(k, w) for k, w in zip(picks, wf, strict=True)]
        children = [c for c, _, _ in shapes]
        depth = [d for _, d, _ in shapes]
        self._wf = self._wf[:first] + wf
        self._picks = self._picks[:first] + list(picks)
        self._origin = self._origin[:first] + list(origins)
        self._ranks = self._ranks[:first] + [r for _, _, r in shapes]
        self._children = self._children[:first] + children
        self._is_sink = self._is_sink[:first] + [[not kids for kids in ch] for ch in children]
        self._depth = self._depth[:first] + depth

    def _template_shape(self, k: int, w: OffloadInstance) -> tuple[Any, np.ndarray, np.ndarray]:
        """``(children, depth, upward rank)`` of pool template ``k`` (``w`` one of its
        instances), computed once per template; read-only."""
        return _cached(self._template_cache, k, lambda: (w.children(), w.depth(), w.upward_rank()))

    def _resample_workload(self, rng: np.random.Generator, sampler: str | None = None) -> None:
        """Workflows after the current one: drawn again from the pool, with fresh Poisson
        gaps after the current one's arrival (memoryless) and fresh origins."""
        drawn = self._sampled_workload(rng)
        if drawn is not None:
            self._set_workflows(self._w + 1, *drawn)

    def _sampled_workload(
        self, rng: np.random.Generator
    ) -> tuple[list[int], list[float], list[int]] | None:
        """What :meth:`_resample_workload` draws with ``rng``: (pool index, arrival, origin)
        lists of the workflows after the current one (None: nothing to draw). The compiled
        rollouts draw the same (:mod:`rlsched.envs.offloading_fast`)."""
        n = len(self._wf) - self._w - 1
        if n <= 0 or self.scenario == "patent-example":
            return None
        picks = [int(x) for x in rng.integers(0, len(self._pool), size=n)]
        arrivals = list(self._wf[self._w].arrival + np.cumsum(
            rng.exponential(1.0 / self.arrival_rate, size=n)))  # fmt: skip
        origins = [int(self._edges[int(i)]) for i in rng.integers(0, len(self._edges), n)]
        return picks, arrivals, origins

    def _next_workflow(self) -> None:
        self._w += 1
        if self._w >= len(self._wf):
            self._done = True
            self._advance(float("inf"))
            return
        w = self._wf[self._w]
        self._advance(w.arrival)
        self._now = max(self._now, w.arrival)
        n = len(w.tasks)
        self._server = np.full(n, -1, dtype=np.int64)
        self._start = np.full(n, np.nan)
        self._finish = np.full(n, np.nan)
        self._pulled = np.zeros(n, dtype=bool)
        self._missing = np.array([len(t.parents) for t in w.tasks])
        self._cand = [t for t in range(n) if self._missing[t] == 0]
        self._decided = 0
        self._projected = w.arrival
        self._prev_server: int | None = None
        self._kept_plan: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None  # dag_plan's
        for st in self._states:
            st.prune(self._now)
        self._pick_task()

    def _pick_task(self) -> None:
        self._host: np.ndarray | None = None  # the current task's hosts (_host_mask)
        w = self._wf[self._w]
        cand = self._cand
        if self.task_order == "rank":
            r = self._ranks[self._w]
            self._task = max(cand, key=lambda t: (r[t], -t))
            return
        pool = cand
        if self._prev_server is not None:
            st = self._states[self._prev_server]
            pref = [t for t in cand if st.image_ready(w.tasks[t].image) is not None]
            pool = pref or cand
        self._task = pool[0] if len(pool) == 1 else pool[int(self.np_random.integers(len(pool)))]

    def _advance(self, until: float) -> None:
        """Replay start (c1) and finish (c2) events up to ``until``."""
        for time, (kind, w, t) in self._timeline.pop_until(until):
            if kind == "done":  # every sink's output is back at the origin
                self._pending_done.append(self._completion[w])
            else:
                s = int(self._log_index[(w, t)]["server"])
                self._running[s] += 1 if kind == "start" else -1
            if until == float("inf"):
                self._now = max(self._now, time)

    def current_instance(self) -> OffloadInstance:
        """The workflow being decided, as a static instance (for solvers)."""
        return self._wf[min(self._w, len(self._wf) - 1)]

    @property
    def current_task(self) -> int:
        return self._task

    @property
    def current_workflow(self) -> int:
        return self._w

    @property
    def num_templates(self) -> int:
        """How many workflows the dataset offers (each arrival draws one of them)."""
        return len(self._pool)

    @property
    def current_template(self) -> int:
        """Which of the dataset's workflows (``0 .. num_templates - 1``) the current one is."""
        return self._picks[min(self._w, len(self._picks) - 1)]

    def schedule_log(self) -> list[dict[str, Any]]:
        """Per decided task: workflow, task, server, start, finish, pulled, transfers."""
        return [dict(r) for r in self._log]

    def action_masks(self) -> np.ndarray:
        """The servers that can host the current task (all True once the episode is over);
        with ``candidates``, only the first ``candidates`` of them in earliest-finish order."""
        if self._done:
            return np.ones(self.num_servers, dtype=bool)
        if self.candidates is None:
            return self._host_mask()
        if self._anchor_mask is None:  # _observation keeps it for every decision
            mask = self._host_mask()
            self._anchor_mask = self._first_candidates(mask, *self.eft_keys(mask))
        return self._anchor_mask.copy()

    def _host_mask(self) -> np.ndarray:
        """The servers that can host the current task (a copy: computed once per task, read
        by the observation, the mask and the policies at every step)."""
        if self._host is None:
            w, t = self._wf[self._w], self._task
            self._host = np.array([w.can_host(t, s) for s in range(self.num_servers)], dtype=bool)
        return self._host.copy()

    def _first_candidates(
        self, mask: np.ndarray, done: np.ndarray, transfer: np.ndarray
    ) -> np.ndarray:
        assert self.candidates is not None
        out = np.zeros_like(mask)
        out[eft_order(done, transfer, mask)[: self.candidates]] = True
        return out

    def optimistic_costs(self) -> np.ndarray:
        """The current workflow's optimistic cost table, ``(tasks, servers)`` in seconds
        (:meth:`OffloadInstance.optimistic_cost
        <rlsched.core.offloading.OffloadInstance.optimistic_cost>`), cached per workflow
        template and origin."""
        w = min(self._w, len(self._wf) - 1)
        return self._oct_table(self._picks[w], self._origin[w], self._wf[w])

    def _oct_table(self, pick: int, origin: int, inst: OffloadInstance) -> np.ndarray:
        """The optimistic cost table of template ``pick`` arriving at ``origin`` (``inst``:
        one such instance), cached per both."""
        return _cached(self._oct_cache, (pick, origin), inst.optimistic_cost)

    def descendant_loads(self) -> np.ndarray:
        """The current workflow's :meth:`OffloadInstance.descendant_load
        <rlsched.core.offloading.OffloadInstance.descendant_load>` table, cached per workflow
        template (it does not depend on the origin)."""
        w = min(self._w, len(self._wf) - 1)
        return _cached(self._load_cache, self._picks[w], self._wf[w].descendant_load)

    def eft_keys(self, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per server (``inf`` where ``mask`` is False): ``estimate``'s ``done`` rounded to
        1e-9 s and its ``t_trans``, the keys of :func:`~rlsched.core.offloading.eft_order`."""
        return _eft_keys([self.estimate(s) if m else None for s, m in enumerate(mask)])

    def estimate(self, action: int) -> Estimate:
        """What placing the current task on ``action`` gives, without changing state.

        ``t_in``: input transfer from the predecessors (a source task: from the origin);
        ``t_out``: a sink task's output transfer back to the origin (0 for other tasks);
        ``t_trans = t_in + t_out``; ``t_exec``: run time (pull included); ``ready`` / ``start``
        / ``finish``: absolute times; ``done``: ``finish + t_out``, when the task's part of the
        workflow is over.
        """
        w, t, s = self._wf[self._w], self._task, int(action)
        task = w.tasks[t]
        ready = ready_time(w, t, s, self._server, self._finish)
        ex = w.exec_time(t, s)
        start, finish, pulled = self._states[s].plan(
            ready, ex, task.cpu, task.mem, task.image, self.pull_time
        )
        if task.parents:
            t_in = sum(w.trans_time(p, int(self._server[p]), s) for p in task.parents)
        else:
            t_in = w.input_time(s)
        t_out = w.output_time(t, s) if self._is_sink[self._w][t] else 0.0
        return {
            "t_trans": float(t_in + t_out),
            "t_in": float(t_in),
            "t_out": float(t_out),
            "t_exec": ex + (self.pull_time if pulled else 0.0),
            "ready": ready,
            "start": start,
            "finish": finish,
            "done": finish + t_out,
            "pulled": bool(pulled),
        }

    def fast_rollouts(
        self, base: str, reward: str, horizon: int | None, to_segment_end: bool
    ) -> OffloadingRollouts | None:
        """Compiled rollouts with HEFT, greedy_eft or PEFT as the base, to the end of the
        current workflow (the segment) or on through the episode's later workflows
        (:mod:`rlsched.envs.offloading_fast`; None where they do not apply, e.g. without
        numba)."""
        return fast_rollouts(self, base, reward, horizon, to_segment_end)

    def step(self, action: int) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        reward, terminated, truncated, info = self.advance(action)
        return self._observation(), reward, terminated, truncated, info

    def advance(
        self, action: int, rewarded: bool = True
    ) -> tuple[float, bool, bool, dict[str, Any]]:
        """:meth:`step` without building the observation: ``(reward, terminated, truncated,
        info)``. A search's rollouts step so when their base reads the env, not the
        observation (``Policy.reads_observation``); the observation is most of a step's cost.
        The reward is always computed (``rewarded`` is ignored: it costs little here)."""
        try:
            return self._transition(action)
        finally:  # the anchored mask was the state's before: action_masks() recomputes it
            self._anchor_mask = None

    def _transition(self, action: int) -> tuple[float, bool, bool, dict[str, Any]]:
        if self._done:
            raise RuntimeError("step() called on a finished episode; call reset()")
        a = int(action)
        if not (0 <= a < self.num_servers and self.action_masks()[a]):
            self._invalid += 1
            if self.invalid_action_penalty is None:
                penalty = float(sum(len(w.tasks) for w in self._wf[self._w :]) - self._decided)
            else:
                penalty = float(self.invalid_action_penalty)
            self._done = True
            refused = self._invalid_action_info(self._now)
            return -penalty, True, False, refused
        w, t = self._wf[self._w], self._task
        task = w.tasks[t]
        est = self.estimate(a)
        st = self._states[a]
        st.commit(
            est["start"],
            est["finish"],
            task.cpu,
            task.mem,
            task.image,
            est["pulled"],
            self.pull_time,
        )
        self._server[t], self._start[t], self._finish[t] = a, est["start"], est["finish"]
        self._pulled[t] = est["pulled"]
        run = est["finish"] - est["start"]
        is_cloud = self.servers[a].is_cloud
        self._cost += run * (self.cloud_price if is_cloud else self.edge_price)
        self._cloud_tasks += is_cloud
        self._pulls += est["pulled"]
        self._tasks_done += 1
        rec = {
            "workflow": self._w,
            "task": t,
            "name": task.name,
            "image": task.image,
            "server": a,
            "start": est["start"],
            "finish": est["finish"],
            "pulled": est["pulled"],
            "transfers": [
                (int(p), int(self._server[p]), float(w.trans_time(p, int(self._server[p]), a)))
                for p in task.parents
            ],
            "t_in": est["t_in"],
            "t_out": est["t_out"],
        }
        self._log.append(rec)
        self._log_index[(self._w, t)] = rec
        self._timeline.push(est["start"], ("start", self._w, t))
        self._timeline.push(est["finish"], ("finish", self._w, t))
        if self.reward_name == "patent":
            cost = est["t_trans"] + est["t_exec"]
        else:
            cost = max(0.0, est["done"] - self._projected)
        self._projected = max(self._projected, est["done"])
        reward = -cost / self.time_unit
        # state transition (b8): update the sets, pick the next candidate
        self._decided += 1
        self._cand.remove(t)
        for c in self._children[self._w][t]:
            self._missing[c] -= 1
            if self._missing[c] == 0:
                self._cand.append(c)
        self._prev_server = a
        info: dict[str, Any] = {"server": a, "task": t, "workflow": self._w, **est}
        if self._decided == len(w.tasks):
            end = w.completion_time(self._server, self._finish)
            self._completion[self._w] = end - w.arrival
            self._timeline.push(end, ("done", self._w, -1))
            self._next_workflow()
        else:
            self._pick_task()
        info["completed_workflows"], self._pending_done = self._pending_done, []
        info["time"] = self._now
        if self._done:
            info["metrics"] = self.metrics()
        return float(reward), self._done, False, info

    # ------------------------------------------------------------------ observation
    def _observation(self) -> dict[str, np.ndarray]:
        obs = {k: np.zeros(shape, np.float32) for k, shape in self._obs_shapes.items()}
        obs["node_speed"][:] = self._speeds
        obs["node_is_cloud"][:] = self._is_cloud
        if self._done:
            obs["node_free"][:] = 1.0
            if self.dag:
                obs["dag_placed"][:] = -1.0
            if self.dag_plan:
                obs["dag_plan"][:, 0] = -1.0
            return obs
        u = self.time_unit
        w, t = self._wf[self._w], self._task
        task = w.tasks[t]
        obs["node_origin"][self._origin[self._w]] = 1.0
        now = self._now
        # the per-server features compiled where numba is there (the same arithmetic, so the
        # same observation: tests/envs/test_offloading_fast.py; docs/benchmarks.md)
        fast = fast_rollouts(self, "peft", "makespan", None, True)
        ests: list[Estimate] | None = None
        if self.compiled_observation and fast is not None:
            done_at = self._server_features(obs, fast, now)
        else:
            done_at, ests = self._server_features_python(obs, now)
        if self.finish_gap or self.candidates is not None or self.optimistic_cost:
            host = self._host_mask()
        if self.finish_gap:  # behind the earliest finish among the servers that can host it
            first = done_at[host].min() if host.any() else now
            obs["node_done_gap"][:] = np.where(host, done_at - first, 0.0) / u
        if self.optimistic_cost:
            oct_row = self.optimistic_costs()[t]
            obs["node_oct"][:] = oct_row / u
            peft = done_at + oct_row
            least = peft[host].min() if host.any() else 0.0
            obs["node_peft_gap"][:] = np.where(host, peft - least, 0.0) / u
        if self.contention:
            work, count, width = self.descendant_loads()[t]
            obs["node_subtree"][:] = np.where(self._is_cloud, 0.0, work / self._capacity) / u
            fit = self._cores / (max(task.cpu, 1e-9) * max(width, 1.0))  # a trace may say 0 cpu
            obs["node_width"][:] = np.where(self._is_cloud, 1.0, np.minimum(fit, 1.0))
            obs["subtree"][:] = (work / u, count, width)
        if ests is not None and self.candidates is not None:  # every server is estimated
            self._anchor_mask = self._first_candidates(host, *_eft_keys(ests))  # here: kept
        if self.dag:
            self._dag_observation(obs, fast)
        data_in = sum(w.tasks[p].data for p in task.parents) if task.parents else w.input_data
        obs["task"][:] = (
            task.work / u,
            task.cpu,
            task.mem,
            data_in,
            task.data,
            self._ranks[self._w][t] / u,
            self._depth[self._w][t],
            1.0 - self._decided / len(w.tasks),
        )
        return obs

    def _server_features(
        self, obs: dict[str, np.ndarray], fast: OffloadingRollouts, now: float
    ) -> np.ndarray:
        """The ``node_*`` keys each server's estimate gives, written into ``obs`` from the
        compiled kernels (:meth:`OffloadingRollouts.observe
        <rlsched.envs.offloading_fast.OffloadingRollouts.observe>`); returns each server's
        ``done``."""
        u = self.time_unit
        est, feat = fast.observe(now)
        start, finish, t_trans, done = est[:, 0], est[:, 1], est[:, 2], est[:, 3]
        obs["node_image"][:] = feat[:, 0]
        obs["node_transfer"][:] = t_trans / u
        obs["node_start"][:] = np.maximum(0.0, start - now) / u
        obs["node_finish"][:] = np.maximum(0.0, finish - now) / u
        obs["node_done"][:] = np.maximum(0.0, done - now) / u
        obs["node_queue"][:] = feat[:, 1]
        obs["node_free"][:] = feat[:, 2:4]
        edge = ~self._is_cloud
        obs["node_busy"][edge] = feat[edge, 4] / self._cores[edge] / u
        if self.lookahead:
            obs["node_child_done"][:] = np.maximum(fast.child_done(est) - now, 0.0) / u
        return done

    def _server_features_python(
        self, obs: dict[str, np.ndarray], now: float
    ) -> tuple[np.ndarray, list[Estimate]]:
        """:meth:`_server_features` in Python, one server at a time (without numba, or with
        the env's ``candidates`` mask); also returns each server's estimate."""
        u = self.time_unit
        w, t = self._wf[self._w], self._task
        task = w.tasks[t]
        ests = []
        for s in range(self.num_servers):
            srv, st = self.servers[s], self._states[s]
            est = self.estimate(s)
            ests.append(est)
            obs["node_image"][s] = float(st.image_ready(task.image) is not None)
            obs["node_transfer"][s] = est["t_trans"] / u
            obs["node_start"][s] = max(0.0, est["start"] - now) / u
            obs["node_finish"][s] = max(0.0, est["finish"] - now) / u
            obs["node_done"][s] = max(0.0, est["done"] - now) / u
            obs["node_queue"][s] = sum(1 for iv in st.intervals if iv[1] > now)
            if srv.is_cloud:
                obs["node_free"][s] = 1.0
                continue
            c, m = st.usage(est["ready"], est["ready"] + 1e-9)
            obs["node_free"][s] = (max(0.0, 1 - c / srv.cpu), max(0.0, 1 - m / srv.mem))
            busy = sum((e - max(b, now)) * cpu for b, e, cpu, _ in st.intervals if e > now)
            obs["node_busy"][s] = busy / srv.cpu / u
        if self.lookahead:
            obs["node_child_done"][:] = np.maximum(self._child_done(ests) - now, 0.0) / u
        return np.array([e["done"] for e in ests]), ests

    def _dag_observation(self, obs: dict[str, np.ndarray], fast: OffloadingRollouts | None) -> None:
        """The ``dag_*`` keys of the current decision (class docstring), written into ``obs``
        (``fast``: the compiled rollouts of this decision, for ``dag_plan``)."""
        w, k = self._wf[self._w], self._w
        n, u = len(w.tasks), self.time_unit
        pick = self._picks[k]
        if pick not in self._dag_cache:  # what the workflow template alone decides
            fixed = np.zeros((n, _DAG_FEATURES), np.float32)
            fixed[:, 0] = [t.work / u for t in w.tasks]
            fixed[:, 1] = [t.cpu for t in w.tasks]
            fixed[:, 2] = [t.mem for t in w.tasks]
            fixed[:, 3] = [t.data for t in w.tasks]
            fixed[:, 4] = np.asarray(self._ranks[k]) / u
            fixed[:, 5] = self._depth[k]
            fixed[:, 8] = self._is_sink[k]
            fixed[:, 9] = [not t.parents for t in w.tasks]
            fixed[:, 11] = 1.0
            links = np.zeros((n, n), np.float32)
            for c, t in enumerate(w.tasks):
                for p in t.parents:
                    links[c, p] = w.tasks[p].data
            self._dag_cache[pick] = (fixed, links)
        fixed, links = self._dag_cache[pick]
        decided = self._server >= 0
        rows = obs["dag_tasks"]
        rows[:n] = fixed
        rows[:n, 6] = decided
        rows[self._task, 7] = 1.0
        rows[:n, 10] = np.where(decided, self._finish - self._now, 0.0) / u  # NaN: undecided
        obs["dag_placed"][:] = -1.0
        obs["dag_placed"][:n] = self._server
        obs["dag_links"][:n, :n] = links
        obs["dag_oct"][:n] = self.optimistic_costs() / u
        if self.dag_plan:
            self._plan_observation(obs, n, u, fast)

    def _plan_observation(
        self, obs: dict[str, np.ndarray], n: int, u: float, fast: OffloadingRollouts | None
    ) -> None:
        """The ``dag_plan`` keys (class docstring): PEFT's schedule of the rest of the
        workflow from this decision, played by the compiled rollouts (``fast``, built for
        this decision)."""
        if fast is None:
            raise RuntimeError(
                "dag_plan=True: the compiled rollouts do not apply to this env "
                "(offloading_fast.fast_rollouts)"
            )
        server, finish = self._plan(fast)
        rel = (finish - self._now) / u
        plan, per_server = obs["dag_plan"], obs["dag_plan_servers"]  # fresh zeros
        plan[:n, 0] = server
        plan[n:, 0] = -1.0
        plan[:n, 1] = rel
        undecided = self._server < 0
        ahead = np.zeros(len(per_server))
        np.maximum.at(ahead, server[undecided], rel[undecided])
        per_server[:, 0] = ahead
        per_server[:, 1] = np.bincount(server[undecided], minlength=len(per_server))

    def _plan(self, fast: OffloadingRollouts) -> tuple[np.ndarray, np.ndarray]:
        """PEFT's schedule of the rest of the current workflow (``fast.plan()``), kept for the
        next decisions: while every task decided since was decided as it says, it is PEFT's
        schedule from there too (the compiled rollout commits as :meth:`step` does, and within
        a workflow nothing else changes the state), so it is not played again. Kept with the
        state (snapshots copy it) and dropped at each workflow."""
        at = self._server  # -1: undecided; the plan gives every task a server
        if self._kept_plan is not None:
            server, finish, was = self._kept_plan
            # each task is where the plan puts it, or undecided now and when it was played
            if ((at == server) | ((at < 0) & ~was)).all():
                return server, finish
        server, finish = fast.plan()
        self._kept_plan = (server, finish, at >= 0)
        return server, finish

    def _child_done(self, ests: list[Estimate]) -> np.ndarray:
        """Absolute ``node_child_done`` times, one per server the current task could go to
        (``ests``: its :meth:`estimate` there); see the class docstring."""
        w, t = self._wf[self._w], self._task
        kids = self._children[self._w][t]
        if not kids:
            return np.array([e["done"] for e in ests])
        ranks = self._ranks[self._w]
        c = max(kids, key=lambda k: ranks[k])
        child = w.tasks[c]
        hosts = [j for j in range(self.num_servers) if w.can_host(c, j)]
        # the child's inputs from parents already placed (those still undecided are not known)
        placed = [p for p in child.parents if p != t and self._server[p] >= 0]
        fin, srv = self._finish, self._server
        floor = {
            j: max([w.arrival] + [fin[p] + w.trans_time(p, int(srv[p]), j) for p in placed])
            for j in hosts
        }
        sink = self._is_sink[self._w][c]
        out = np.full(len(ests), np.inf)
        for s, est in enumerate(ests):
            for j in hosts:
                ready = max(floor[j], est["finish"] + w.trans_time(t, s, j))
                _, end, _ = self._states[j].plan(
                    ready, w.exec_time(c, j), child.cpu, child.mem, child.image, self.pull_time
                )
                out[s] = min(out[s], end + (w.output_time(c, j) if sink else 0.0))
        return out

    # ------------------------------------------------------------------ reporting
    def metrics(self) -> dict[str, float]:
        done = np.array([c for c in self._completion if not np.isnan(c)])
        k = len(done)
        fin = [r["finish"] for r in self._log]
        fin += [w.arrival + c for w, c in zip(self._wf, self._completion, strict=True) if c == c]
        first = self._wf[0].arrival if self._wf else 0.0
        tasks = max(self._tasks_done, 1)
        return {
            "mean_completion": float(done.mean()) if k else float("nan"),
            "p95_completion": float(np.percentile(done, 95)) if k else float("nan"),
            "optimality_gap": self.optimality_gap(),
            "cloud_share": self._cloud_tasks / tasks,
            "cost": float(self._cost),
            "makespan": float(max(fin) - first) if fin else float("nan"),
            "tasks": float(self._tasks_done),
            "workflows": float(k),
            "pulls": float(self._pulls),
            "invalid_actions": float(self._invalid),
        }

    def isolated_optimum(self, w: int) -> float:
        """The optimal makespan of workflow ``w`` alone on empty servers (its static instance,
        unbounded image cache, no other workflow): CP-SAT
        (:func:`rlsched.core.optimal.solve` within ``optimal_work_limit`` units of deterministic
        time, or ``optimal_time_limit`` s; the best schedule found when optimality is not
        proven by then). Cached per workflow template and origin here, and per instance in the
        process (:func:`_isolated_optimum`): every env of a ``compare`` shares one solve."""
        key = (self._picks[w], self._origin[w])
        if key not in self._opt_cache:
            inst = self._static(self._picks[w], 0.0, self._origin[w])
            self._opt_cache[key] = _isolated_optimum(
                inst, self.optimal_time_limit, self.optimal_work_limit
            )
        return self._opt_cache[key]

    def optimality_gap(self) -> float:
        """Mean over the finished workflows of at most ``optimal_max_tasks`` tasks of
        ``completion / isolated optimum - 1`` (NaN without ``optimality_reference`` or without
        such a workflow). The reference is each workflow's *isolated* optimum: waiting for
        servers busy with other workflows counts against the policy, and caches warmed by
        earlier workflows can put it below the reference (a negative gap)."""
        if not self.optimality_reference:
            return float("nan")
        gaps = []
        for w, c in enumerate(self._completion):
            if np.isnan(c) or len(self._wf[w].tasks) > self.optimal_max_tasks:
                continue
            opt = self.isolated_optimum(w)
            if opt > 0:
                gaps.append(c / opt - 1.0)
        return float(np.mean(gaps)) if gaps else float("nan")

    def render(self) -> str | None:
        if self.render_mode != "ansi":
            return None
        lines = [
            f"t={self._now:.2f}s workflow {self._w + 1}/{len(self._wf)} "
            f"tasks decided={self._tasks_done}"
        ]
        for s, srv in enumerate(self.servers):
            st = self._states[s]
            lines.append(
                f"{srv.name:<8} cpu={srv.cpu:<5} mem={srv.mem:<5} speed={srv.speed:<5} "
                f"images={sorted(srv.images) if not srv.is_cloud else 'all'} "
                f"cached={list(st.cache)} running={self._running[s]}"
            )
        if not self._done:
            task = self._wf[self._w].tasks[self._task]
            lines.append(f"next: {task.name} image={task.image} work={task.work:.2f}")
        return "\n".join(lines)
