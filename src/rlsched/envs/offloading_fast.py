"""Compiled rollouts of WorkflowOffloading-v0: a search's rollouts without the Python env.

A search over PEFT (``rollout:peft?horizon=end&futures=0&score=return``, ``mdp_rollout``)
spends its time stepping copies of the env. For the rollouts it needs, those that finish the
current workflow with an earliest-finish base (HEFT, greedy_eft or PEFT) in the env's
``task_order="rank"``, the env's dynamics fit in a few arrays: each server's reserved
intervals and image cache, each task's server and finish. :class:`OffloadingRollouts` copies them
out of the env once per decision and plays every candidate's rollout in numba-compiled code,
the same arithmetic in the same order as :meth:`WorkflowOffloadingEnv.estimate
<rlsched.envs.workflow_offloading.WorkflowOffloadingEnv.estimate>` and its ``step``, so the
search takes the same decisions (``tests/envs/test_offloading_fast.py`` plays both).

Optional: without numba (``pip install rlsched[fast]``) :func:`fast_rollouts` returns None and
the search steps the env as before. One difference is known and not seen in practice: the
env rounds a finish to 1e-9 s with Python's ``round``, which rounds the decimal value exactly,
and the kernels with ``rint(x * 1e9) / 1e9`` (numpy's rounding); the two can differ on values
within an ulp of a rounding boundary, which would only reorder two servers whose finishes
tie to 1e-9 s.
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: the bases the kernels play: the key they order servers by
BASES = {"heft": 0, "greedy_eft": 0, "peft": 1}
#: the rewards the kernels compute
REWARDS = {"makespan": 0, "patent": 1}


def _kernels() -> Any:
    """:mod:`rlsched.envs.offloading_kernels`, or None without numba."""
    try:
        from rlsched.envs import offloading_kernels
    except ImportError:  # pragma: no cover - exercised where numba is absent
        return None
    return offloading_kernels


def available() -> bool:
    """Whether numba is installed, so compiled rollouts can run."""
    return _kernels() is not None


# ---------------------------------------------------------------- the env side
class OffloadingRollouts:
    """The env's state at one decision, copied into arrays, and the compiled rollouts from
    it. Built by :func:`fast_rollouts`; valid until the env steps."""

    def __init__(
        self,
        env: Any,
        kernels: Any,
        base: str,
        reward: str,
        horizon: int | None,
    ) -> None:
        self.kernels = kernels
        self.base = BASES[base]
        self.reward = REWARDS[reward]
        self.max_steps = 2**62 if horizon is None else int(horizon)
        w = env._w
        inst = env._wf[w]
        self.static, self.images = _static_arrays(env, w)
        self.scalars = np.array([
            inst.arrival, inst.bandwidth, inst.input_data, inst.pull_time, env.time_unit,
            inst.origin,
        ], dtype=np.float64)  # fmt: skip
        self.task = int(env._task)
        self.server = np.asarray(env._server, dtype=np.int64)
        self.finish = np.asarray(env._finish, dtype=np.float64)
        self.missing = np.asarray(env._missing, dtype=np.int64).copy()
        self.ready = np.zeros(len(inst.tasks), dtype=np.bool_)
        self.ready[env._cand] = True
        self.projected = float(env._projected)
        n, states = len(inst.tasks), env._states
        S = len(states)
        cap = max(len(s.intervals) for s in states) + n
        self.iv = np.zeros((S, cap, 4))
        self.niv = np.zeros(S, dtype=np.int64)
        ccap = max(len(s.cache) for s in states) + n + 1
        self.cimg = np.full((S, ccap), -1, dtype=np.int64)
        self.ctime = np.zeros((S, ccap))
        self.ncache = np.zeros(S, dtype=np.int64)
        ids = self.images
        for s, state in enumerate(states):
            if state.intervals:
                self.iv[s, : len(state.intervals)] = state.intervals
                self.niv[s] = len(state.intervals)
            for c, (image, t) in enumerate(state.cache.items()):
                self.cimg[s, c] = ids.setdefault(image, len(ids))
                self.ctime[s, c] = t
            self.ncache[s] = len(state.cache)

    def order(self) -> np.ndarray:
        """The base's order of the servers that can host the current task (its first is the
        base's action)."""
        S = len(self.niv)
        order = np.empty(S, dtype=np.int64)
        n = self.kernels.base_order(
            self.task, self.static, self.scalars, self.server, self.finish, self.iv,
            self.niv, self.cimg, self.ctime, self.ncache, self.base, np.empty(S), np.empty(S),
            order, np.empty((S, 6)), np.empty(self.iv.shape[1] + 1),
        )  # fmt: skip
        return order[:n]

    def returns(self, candidates: list[int]) -> np.ndarray:
        """Each candidate's rollout return (the sum of its rewards)."""
        state = (self.server, self.finish, self.missing, self.ready, self.iv, self.niv,
                 self.cimg, self.ctime, self.ncache)  # fmt: skip
        S = len(self.niv)
        work = (
            *(np.empty_like(a) for a in state), np.empty(S), np.empty(S),
            np.empty(S, dtype=np.int64), np.empty((S, 6)), np.empty((S, 6)),
            np.empty(self.iv.shape[1] + 1),
        )  # fmt: skip
        out = np.empty(len(candidates))
        self.kernels.rollout_returns(
            self.static, self.scalars, self.task, np.asarray(candidates, dtype=np.int64),
            *state[:4], self.projected, *state[4:], self.base, self.reward, self.max_steps,
            work, out,
        )  # fmt: skip
        return out


def _static_arrays(env: Any, w: int) -> tuple[tuple[Any, ...], dict[str, int]]:
    """The kernels' static arrays of workflow ``w``, cached per template and origin, and the
    env's image ids (shared by every workflow of the env)."""
    images: dict[str, int] = env._fast_cache.setdefault("images", {})
    key = (env._picks[w], env._origin[w])
    cached = env._fast_cache.get(key)
    if cached is not None:
        return cached, images
    inst = env._wf[w]
    tasks, servers = inst.tasks, inst.servers
    n, S = len(tasks), len(servers)
    parents = [t.parents for t in tasks]
    children = env._children[w]
    par_ptr = np.cumsum([0] + [len(p) for p in parents], dtype=np.int64)
    ch_ptr = np.cumsum([0] + [len(c) for c in children], dtype=np.int64)
    flat = [int(p) for ps in parents for p in ps]
    par_idx = np.array(flat, dtype=np.int64)
    ch_idx = np.array([int(c) for cs in children for c in cs], dtype=np.int64)
    img = np.array([images.setdefault(t.image, len(images)) for t in tasks], dtype=np.int64)
    lat = np.zeros((S, S)) if inst.latency is None else np.asarray(inst.latency, dtype=float)
    static = (
        par_ptr, par_idx, ch_ptr, ch_idx,
        np.array([t.work for t in tasks], dtype=float),
        np.array([t.data for t in tasks], dtype=float),
        np.array([t.cpu for t in tasks], dtype=float),
        np.array([t.mem for t in tasks], dtype=float),
        img,
        np.array(env._is_sink[w], dtype=np.bool_),
        np.array([[inst.can_host(t, s) for s in range(S)] for t in range(n)], dtype=np.bool_),
        np.array([[sv.holds(t.image) for sv in servers] for t in tasks], dtype=np.bool_),
        np.asarray(env._ranks[w], dtype=float),
        np.asarray(env.optimistic_costs(), dtype=float),
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
    return static, images


def fast_rollouts(
    env: Any, base: str, reward: str, horizon: int | None, to_workflow_end: bool
) -> OffloadingRollouts | None:
    """Compiled rollouts from the env's current decision, or None where they would not play
    what the env plays: numba missing, a base or reward the kernels lack, a task order other
    than ``rank``, the env's ``candidates`` mask, a rollout that would run past the current
    workflow (``to_workflow_end`` False and later workflows in the episode), a task no server
    can host."""
    kernels = _kernels()
    if (
        kernels is None
        or base not in BASES
        or reward not in REWARDS
        or env.task_order != "rank"
        or env.candidates is not None
        or env._done
        or (not to_workflow_end and env._w < len(env._wf) - 1)
    ):
        return None
    fast = OffloadingRollouts(env, kernels, base, reward, horizon)
    if not fast.static[10].any(axis=1).all():
        return None
    return fast
