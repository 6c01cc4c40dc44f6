"""Compiled rollouts of WorkflowOffloading-v0: a search's rollouts without the Python env.

A search over PEFT (``rollout:peft?horizon=end&futures=0&score=return``, ``mdp_rollout``,
the online ``rollout:peft?horizon=end&futures=2``) spends its time stepping copies of the
env. For the rollouts it needs, those with an earliest-finish base (HEFT, greedy_eft or PEFT),
to the end of the current workflow or on through the episode's later workflows (the env's
own, or a sampled future's), the env's dynamics fit in a few arrays: each server's reserved
intervals and image cache, each task's server and finish.
:class:`OffloadingRollouts` copies them out of the env once per decision and plays every
candidate's rollout in numba-compiled code, the same arithmetic in the same order as
:meth:`WorkflowOffloadingEnv.estimate
<rlsched.envs.workflow_offloading.WorkflowOffloadingEnv.estimate>` and its ``step``, so the
search takes the same decisions (``tests/envs/test_offloading_fast.py`` plays both). In
``task_order="rank"`` the next task is the ready one of highest upward rank; in the patent's
order (the env's default) it is drawn from the env's generator, and the kernels draw it as
``Generator.integers`` does, from the same 32-bit outputs of its PCG64 in the same order
(:func:`_stream`; Lemire's bounded method, as numpy's ``random_bounded_uint64_fill``).

Optional: without numba (``pip install rlsched[fast]``) :func:`fast_rollouts` returns None and
the search steps the env as before. One difference is known and not seen in practice: the
env rounds a finish to 1e-9 s with Python's ``round``, which rounds the decimal value exactly,
and the kernels with ``rint(x * 1e9) / 1e9`` (numpy's rounding); the two can differ on values
within an ulp of a rounding boundary, which would only reorder two servers whose finishes
tie to 1e-9 s.
"""

from __future__ import annotations

from itertools import chain
from typing import Any

import numpy as np

from rlsched.envs.base import summed_return
from rlsched.optional import imported

#: the bases the kernels play: the key they order servers by
BASES = {"heft": 0, "greedy_eft": 0, "peft": 1}
#: the rewards the kernels compute
REWARDS = {"makespan": 0, "patent": 1}


def _kernels() -> Any:
    """:mod:`rlsched.envs.offloading_kernels`, or None without numba."""
    return imported("rlsched.envs.offloading_kernels")


def available() -> bool:
    """Whether numba is installed, so compiled rollouts can run."""
    return _kernels() is not None


# ---------------------------------------------------------------- the env side
#: a workflow a rollout plays: its static arrays, scalars (kernels' module comment) and
#: number of tasks
Segment = tuple[tuple[Any, ...], np.ndarray, int]


class OffloadingRollouts:
    """The env's state at one decision, copied into arrays, and the compiled rollouts from
    it. Built by :func:`fast_rollouts`; valid until the env steps.

    A rollout plays the current workflow from this decision, then, unless it stops at the
    workflow's end (``to_segment_end``) or after ``horizon`` decisions, the episode's later
    workflows as the env would: the env's own, or those a sampled future draws
    (:meth:`later`), each pruning the servers' finished intervals at its arrival
    (:meth:`play`)."""

    def __init__(
        self,
        env: Any,
        kernels: Any,
        base: str,
        reward: str,
        horizon: int | None,
        to_segment_end: bool,
    ) -> None:
        self.env = env
        self.kernels = kernels
        self.base = BASES[base]
        self.reward = REWARDS[reward]
        self.max_steps = 2**62 if horizon is None else int(horizon)
        self.to_segment_end = to_segment_end
        w = env._w
        self.current = _segment(env, env._picks[w], env._wf[w].arrival, env._origin[w])
        self.static = self.current[0]
        self.task = int(env._task)
        #: completion times of the workflows finished before this one
        self.past = [c for c in env._completion[:w] if c == c]
        inst = env._wf[w]
        self.projected = float(env._projected)
        states = env._states
        S, n = len(states), len(inst.tasks)
        counts = [len(st.intervals) for st in states]
        cached = [len(st.cache) for st in states]
        self.state = (
            np.asarray(env._server, dtype=np.int64),
            np.asarray(env._finish, dtype=np.float64),
            np.asarray(env._missing, dtype=np.int64),
            np.zeros(n, dtype=np.bool_),
            np.zeros((S, max(counts), 4)),
            np.array(counts, dtype=np.int64),
            np.full((S, max(cached)), -1, dtype=np.int64),
            np.zeros((S, max(cached))),
            np.array(cached, dtype=np.int64),
        )  # fmt: skip
        ready, iv, cimg, ctime = self.state[3], self.state[4], self.state[6], self.state[7]
        ready[env._cand] = True
        if total := sum(counts):  # every server's intervals in one conversion, then its rows
            flat = chain.from_iterable(chain.from_iterable(st.intervals for st in states))
            rows = np.fromiter(flat, dtype=np.float64, count=4 * total).reshape(total, 4)
            first = 0
            for s, c in enumerate(counts):
                iv[s, :c] = rows[first : first + c]
                first += c
        ids = env._fast_cache.setdefault("images", {})
        for s, st in enumerate(states):
            for c, (image, t) in enumerate(st.cache.items()):
                cimg[s, c] = ids.setdefault(image, len(ids))
                ctime[s, c] = t
        #: the task order: 0 by upward rank, 1 the patent's (drawn from the env's generator)
        self.kind = 0 if env.task_order == "rank" else 1
        self.cand = np.array(env._cand, dtype=np.int64)  # the ready tasks, in the env's order
        self.prev = -1 if env._prev_server is None else int(env._prev_server)
        self._own: tuple[list[Segment], np.random.Generator] | None = None

    def _picker(
        self, n: int, cand: np.ndarray, prev: int, stream: np.ndarray, pos: np.ndarray
    ) -> tuple[Any, ...]:
        """The kernels' task-order state for a workflow of ``n`` tasks whose ready tasks are
        ``cand``: ``stream`` is the env generator's 32-bit outputs, read from ``pos[0]``."""
        ready = np.empty(n, dtype=np.int64)
        ready[: len(cand)] = cand
        count, last = np.array([len(cand)], dtype=np.int64), np.array([prev], dtype=np.int64)
        return self.kind, ready, count, last, stream, pos, np.empty(n, dtype=np.int64)

    def _scratch(self, cap: int) -> tuple[np.ndarray, ...]:
        """:func:`base_order`'s scratch for ``cap`` intervals per server."""
        S = len(self.state[5])
        return (np.empty(S), np.empty(S), np.empty(S, dtype=np.int64), np.empty((S, 6)),
                np.empty(cap + 1))  # fmt: skip

    def order(self) -> np.ndarray:
        """The base's order of the servers that can host the current task (its first is the
        base's action)."""
        scratch = self._scratch(self.state[4].shape[1])
        server, finish, _m, _r, iv, niv, cimg, ctime, ncache = self.state
        n = self.kernels.base_order(
            self.task, self.static, self.current[1], server, finish, iv, niv, cimg, ctime,
            ncache, self.base, *scratch,
        )  # fmt: skip
        return scratch[2][:n]

    def observe(self, now: float) -> tuple[np.ndarray, np.ndarray]:
        """What the env's observation reads of each server for the current task, compiled
        (``offloading_kernels.observe``): ``(estimates, features)``, one row per server,
        estimates ``(start, finish, t_trans, done)`` as :meth:`WorkflowOffloadingEnv.
        estimate <rlsched.envs.workflow_offloading.WorkflowOffloadingEnv.estimate>` gives
        them, features ``(image usable, runs not over by now, free cpu share, free memory
        share, reserved cpu-seconds after now)``."""
        server, finish, _m, _r, iv, niv, cimg, ctime, ncache = self.state
        S = len(niv)
        est, feat = np.empty((S, 4)), np.empty((S, 5))
        self.kernels.observe(
            self.task, self.static, self.current[1], server, finish, iv, niv, cimg, ctime,
            ncache, float(now), np.empty(iv.shape[1] + 1), est, feat,
        )  # fmt: skip
        return est, feat

    def child_done(self, est: np.ndarray) -> np.ndarray:
        """The env's ``_child_done`` from :meth:`observe`'s estimates, compiled: per server,
        the earliest the current task's child of highest upward rank could be done."""
        server, finish, _m, _r, iv, niv, cimg, ctime, ncache = self.state
        out = np.empty(len(niv))
        self.kernels.child_done(
            self.task, self.static, self.current[1], server, finish, iv, niv, cimg, ctime,
            ncache, est, np.empty(iv.shape[1] + 1), out,
        )  # fmt: skip
        return out

    def _work(self, later_tasks: int) -> tuple[np.ndarray, ...]:
        """Buffers for one rollout's state, with room for ``later_tasks`` more tasks."""
        server, finish, missing, ready, iv, niv, cimg, _ctime, ncache = self.state
        room = len(server) + later_tasks
        S = len(niv)
        return (
            np.empty_like(server), np.empty_like(finish), np.empty_like(missing),
            np.empty_like(ready), np.empty((S, iv.shape[1] + room, 4)), np.empty_like(niv),
            np.empty((S, cimg.shape[1] + room + 1), dtype=np.int64),
            np.empty((S, cimg.shape[1] + room + 1)), np.empty_like(ncache),
        )  # fmt: skip

    def returns(self, candidates: list[int]) -> np.ndarray:
        """Each candidate's return (its rollout's summed reward) over the current workflow;
        only where the rollouts stop with it (``to_segment_end``, or the episode's last)."""
        if not self.stops_with_workflow():
            raise RuntimeError("returns() plays one workflow; these rollouts go on: play()")
        if self.kind == 1:  # each rollout reads the generator's stream: one at a time
            later = self.later(None)
            return np.array([summed_return(self.play(a, later)[0]) for a in candidates])
        work = self._work(0)
        out = np.empty(len(candidates))
        empty = np.empty(0, dtype=np.int64)
        self.kernels.rollout_returns(
            self.static, self.current[1], self.task, np.asarray(candidates, dtype=np.int64),
            self.state, self.projected, self.base, self.reward, self.max_steps, work,
            self._scratch(work[4].shape[1]), np.empty(self.current[2]), out,
            self._picker(0, empty, -1, empty, np.zeros(1, dtype=np.int64)),
        )  # fmt: skip
        return out

    def plan(self) -> tuple[np.ndarray, np.ndarray]:
        """The base's schedule of the rest of the current workflow from this decision (the
        current task included): each task's server and finish time (absolute; the decided
        tasks' own). Only the current workflow is played; the env's generator is not read
        from (the patent's task order draws from a copy of its stream)."""
        k = self.kernels
        stream = self.later(None)[1] if self.kind == 1 else np.empty(0, dtype=np.int64)
        work = self._work(0)
        k.copy_state(self.state, work)
        server, finish, missing, ready, iv, niv, cimg, ctime, ncache = work
        static, sc, n = self.current
        pos = np.zeros(1, dtype=np.int64)
        nr, _p, _end = k.play_workflow(
            static, sc, self.task, -1, server, finish, missing, ready, self.projected, iv, niv,
            cimg, ctime, ncache, self.base, self.reward, 2**62, self._scratch(iv.shape[1]),
            np.empty(n), 0, self._picker(n, self.cand, self.prev, stream, pos),
        )  # fmt: skip
        if nr < 0:  # pragma: no cover - more rejections than the stream's margin holds
            raise RuntimeError("the compiled rollout ran out of random numbers")
        return server[:n].copy(), finish[:n].copy()

    def stops_with_workflow(self) -> bool:
        """Whether the rollouts end with the current workflow."""
        env = self.env
        return self.to_segment_end or env._w == len(env._wf) - 1

    def later(self, future: int | None) -> tuple[list[Segment], np.ndarray]:
        """What a rollout plays after the current workflow, and the random stream its task
        order reads: the env's own later workflows and generator, or (``future``: a sampled
        future's seed) those :meth:`~rlsched.envs.base.RlschedEnv.resample_future` would
        draw from it; no workflow where the rollouts stop with the current one."""
        segments, generator = self._segments(future)
        tasks = self.current[2] + sum(n for _, _, n in segments)
        stream = _stream(generator, tasks) if self.kind == 1 else np.empty(0, dtype=np.int64)
        return segments, stream

    def _segments(self, future: int | None) -> tuple[list[Segment], np.random.Generator]:
        """:meth:`later`'s workflows, and the generator the env's task order would draw
        from (the env's own, ``future`` None: built once per decision)."""
        if future is None and self._own is not None:
            return self._own
        env = self.env
        rng = None if future is None else np.random.default_rng(future)
        generator = env.np_random
        if rng is not None:  # resample_future's draw of the env's own generator
            generator = np.random.default_rng(int(rng.integers(2**63)))
        w = env._w
        rows = []  # none where the rollouts stop with the current workflow: nothing drawn
        if not self.stops_with_workflow():
            rows = [(env._picks[k], env._wf[k].arrival, env._origin[k])
                    for k in range(w + 1, len(env._wf))]  # fmt: skip
            drawn = None if rng is None else env._sampled_workload(rng)
            if drawn is not None:
                rows = list(zip(*drawn, strict=True))
        out = [_segment(env, k, float(a), o) for k, a, o in rows], generator
        if future is None:
            self._own = out
        return out

    def play(
        self, first: int, later: tuple[list[Segment], np.ndarray]
    ) -> tuple[np.ndarray, list[float]]:
        """One rollout: ``first`` at this decision, then the base through the current
        workflow and ``later``, until ``horizon`` decisions. Returns its rewards and the
        completion time of every workflow the episode has finished by its end, in order (the
        env's ``_completion`` then: those before this one, then the rollout's)."""
        k = self.kernels
        segments, stream = later
        work = self._work(sum(n for _, _, n in segments))
        k.copy_state(self.state, work)
        server, finish, missing, ready, iv, niv, cimg, ctime, ncache = work
        scratch = self._scratch(iv.shape[1])
        rewards = np.empty(self.current[2] + sum(n for _, _, n in segments))
        static, sc, n = self.current
        pos = np.zeros(1, dtype=np.int64)
        nr, _p, end = k.play_workflow(
            static, sc, self.task, first, server, finish, missing, ready, self.projected, iv,
            niv, cimg, ctime, ncache, self.base, self.reward, self.max_steps, scratch, rewards,
            0, self._picker(n, self.cand, self.prev, stream, pos),
        )  # fmt: skip
        done = list(self.past)
        if end == end:
            done.append(float(end - sc[0]))
        now = float(self.env._now)
        for static, sc, n in segments:
            if nr < 0 or end != end or nr >= self.max_steps:
                break
            arrival = float(sc[0])
            now = max(now, arrival)  # the env's clock at the workflow's arrival
            k.prune(iv, niv, now)
            missing = np.diff(static[0])
            ready = missing == 0
            picker = self._picker(n, np.flatnonzero(ready), -1, stream, pos)
            if self.kind == 0:
                t0 = k.next_task(ready, static[12])
            else:
                t0 = k.patent_task(picker[1], picker[2], picker[3], static[11], static[8], cimg,
                                   ncache, stream, pos, picker[6])  # fmt: skip
            if t0 == -2:
                nr = -1
                break
            nr, _p, end = k.play_workflow(
                static, sc, t0, -1, np.full(n, -1, dtype=np.int64), np.full(n, np.nan),
                missing, ready, arrival, iv, niv, cimg, ctime, ncache, self.base, self.reward,
                self.max_steps, scratch, rewards, nr, picker,
            )  # fmt: skip
            if end == end:
                done.append(float(end - arrival))
        if nr < 0:  # more rejections in Lemire's method than the stream's margin holds
            raise RuntimeError("the compiled rollout ran out of random numbers")
        return rewards[:nr], done


def _stream(generator: np.random.Generator, tasks: int) -> np.ndarray:
    """The 32-bit outputs ``generator.integers`` would read, enough for ``tasks`` draws with
    room for 64 rejections, without advancing ``generator``: PCG64's 64-bit outputs split
    low half first, after the half it holds back from a last 32-bit draw, if any."""
    state: Any = generator.bit_generator.state
    copy = np.random.PCG64()
    copy.state = state
    raw = copy.random_raw(tasks + 32)
    halves = np.empty(2 * len(raw), dtype=np.int64)
    halves[0::2] = raw & np.uint64(0xFFFFFFFF)
    halves[1::2] = raw >> np.uint64(32)
    if state["has_uint32"]:
        halves = np.concatenate([[int(state["uinteger"])], halves])
    return halves


def _segment(env: Any, pick: int, arrival: float, origin: int) -> Segment:
    """Workflow template ``pick`` arriving at ``arrival`` at ``origin``, for the kernels."""
    static = _static_arrays(env, pick, origin)
    scalars = np.array([arrival, env.bandwidth, env._pool_input[pick], env.pull_time,
                        env.time_unit, origin], dtype=np.float64)  # fmt: skip
    return static, scalars, len(env._pool[pick])


def _static_arrays(env: Any, pick: int, origin: int) -> tuple[Any, ...]:
    """The kernels' static arrays of template ``pick`` arriving at ``origin``, cached per
    both; image ids are the env's, shared by every workflow."""
    key = (pick, origin)
    cached = env._fast_cache.get(key)
    if cached is not None:
        return cached
    images: dict[str, int] = env._fast_cache.setdefault("images", {})
    inst = env._static(pick, 0.0, origin)
    tasks, servers = inst.tasks, inst.servers
    n, S = len(tasks), len(servers)
    parents = [t.parents for t in tasks]
    children, _depth, ranks = env._template_shape(pick, inst)
    par_ptr = np.cumsum([0] + [len(p) for p in parents], dtype=np.int64)
    ch_ptr = np.cumsum([0] + [len(c) for c in children], dtype=np.int64)
    par_idx = np.array([int(p) for ps in parents for p in ps], dtype=np.int64)
    ch_idx = np.array([int(c) for cs in children for c in cs], dtype=np.int64)
    img = np.array([images.setdefault(t.image, len(images)) for t in tasks], dtype=np.int64)
    lat = np.zeros((S, S)) if inst.latency is None else np.asarray(inst.latency, dtype=float)
    oct_ = env._oct_table(pick, origin, inst)
    static = (
        par_ptr, par_idx, ch_ptr, ch_idx,
        np.array([t.work for t in tasks], dtype=float),
        np.array([t.data for t in tasks], dtype=float),
        np.array([t.cpu for t in tasks], dtype=float),
        np.array([t.mem for t in tasks], dtype=float),
        img,
        np.array([not kids for kids in children], dtype=np.bool_),
        np.array([[inst.can_host(t, s) for s in range(S)] for t in range(n)], dtype=np.bool_),
        np.array([[sv.holds(t.image) for sv in servers] for t in tasks], dtype=np.bool_),
        np.asarray(ranks, dtype=float),
        np.asarray(oct_, dtype=float),
        np.array([sv.speed for sv in servers], dtype=float),
        np.array([sv.cpu for sv in servers], dtype=float),
        np.array([sv.mem for sv in servers], dtype=float),
        np.array([sv.is_cloud for sv in servers], dtype=np.bool_),
        np.asarray(inst.adj, dtype=float),
        lat,
        np.array([-1 if st.cache_size is None else st.cache_size for st in env._states],
                 dtype=np.int64),
    )  # fmt: skip
    env._fast_cache[key] = static
    return static


def fast_rollouts(
    env: Any, base: str, reward: str, horizon: int | None, to_segment_end: bool
) -> OffloadingRollouts | None:
    """Compiled rollouts from the env's current decision, or None where they would not play
    what the env plays: numba missing, a base or reward the kernels lack, a task order other
    than ``rank``, the env's ``candidates`` mask, the patent's example (its own workload), a
    task no server can host."""
    kernels = _kernels()
    if (
        kernels is None
        or base not in BASES
        or reward not in REWARDS
        or env.task_order not in ("rank", "patent")
        or not isinstance(env.np_random.bit_generator, np.random.PCG64)
        or env.candidates is not None
        or env.scenario == "patent-example"
        or env._done
    ):
        return None
    fast = OffloadingRollouts(env, kernels, base, reward, horizon, to_segment_end)
    statics = [fast.static] + [segment[0] for segment in fast._segments(None)[0]]
    if not all(_hostable(env, static) for static in statics):
        return None
    return fast


def _hostable(env: Any, static: tuple[Any, ...]) -> bool:
    """Whether some server can host each task of the workflow (cached with its arrays)."""
    key = ("hostable", id(static))
    ok = env._fast_cache.get(key)
    if ok is None:
        ok = env._fast_cache[key] = bool(static[10].any(axis=1).all())
    return bool(ok)
