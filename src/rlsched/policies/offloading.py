"""Policies for ``rlsched/WorkflowOffloading-v0``: list-scheduling heuristics and the patent's
MDP look-ahead. Each is built with the env (``factory(env, seed)``) and plans through its
``estimate(action)`` / ``copy.deepcopy`` API; all share the ``Policy.act(obs, mask)`` interface.

The env decides the task order (``task_order``), a policy only picks servers. ``heft`` is
HEFT's server-selection phase (earliest finish time with communication); run on the env with
``task_order="rank"`` (highest upward rank first among ready tasks) it is exact HEFT, with the
default ``task_order="patent"`` it is EFT in the patent's candidate order (b8.1).

"Earliest finish" here is the env's ``estimate(a)["done"]``: the finish time, and for a sink
task the time its output is back at the workflow's origin (the workflow completes then).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import numpy as np

from rlsched.core.offloading import eft_order
from rlsched.core.optimal import solve
from rlsched.errors import PolicyError
from rlsched.policies.base import Observation, Policy
from rlsched.policies.rollout import RolloutPolicy


def _base(env: Any) -> Any:
    return getattr(env, "unwrapped", env)


def _eft(env: Any, mask: np.ndarray) -> int:
    """Valid server with the earliest estimated finish, a sink's return transfer to the origin
    included (ties: less transfer time, lower index): the first of ``eft_order``."""
    if not mask.any():
        return 0
    done, transfer = env.eft_keys(mask)
    return int(eft_order(done, transfer, mask)[0])


def _order_preferences(order: np.ndarray, n: int) -> np.ndarray:
    """Preferences (higher is better) that rank ``order``'s servers in its order and every
    other action below them: what a search over the policy tries first."""
    prefs = np.full(n, -np.inf)
    prefs[order] = -np.arange(len(order), dtype=np.float64)
    return prefs


def anchored_servers(observation: Observation, mask: np.ndarray, candidates: int) -> np.ndarray:
    """The valid servers left when ``mask`` is narrowed to the ``candidates`` of earliest
    finish, ascending: what the env's mask keeps with ``candidates``, computed from the
    observation (``node_done`` and ``node_transfer``: float32 relative times, so servers
    whose finish differs by less than float32 resolves are ordered by transfer and index).
    A model trained with that argument acts through it in any env."""
    return anchored_and_heft(observation, mask, candidates)[0]


def anchored_and_heft(
    observation: Observation, mask: np.ndarray, candidates: int
) -> tuple[np.ndarray, int]:
    """:func:`anchored_servers` and HEFT's own server, from one ordering."""
    assert isinstance(observation, dict)
    order = eft_order(observation["node_done"], observation["node_transfer"], mask)
    return np.sort(order[:candidates]), int(order[0]) if len(order) else 0


def _first_by(observation: Observation, mask: np.ndarray, key: str) -> int:
    """The valid server of least ``observation[key]``, then less transfer, then lower index
    (0 when no server is valid)."""
    assert isinstance(observation, dict)
    done = np.asarray(observation[key]).tolist()
    transfer = np.asarray(observation["node_transfer"]).tolist()
    best, least = 0, None  # eft_order's first, in Python: a few servers, at every decision
    for s, ok in enumerate(mask.tolist()):
        if ok:
            k = (done[s], transfer[s])
            if k[0] != k[0] or k[1] != k[1]:  # NaN: eft_order's sort puts it last
                return int(eft_order(observation[key], observation["node_transfer"], mask)[0])
            if least is None or k < least:
                best, least = s, k
    return best


def heft_choice(observation: Observation, mask: np.ndarray) -> int:
    """HEFT's server computed from the observation alone (``node_done``, ``node_transfer``;
    0 when no server is valid). What a margin-gated learned policy compares its
    choice with (:class:`~rlsched.policies.learned.LearnedPolicy`); without env state, so it
    costs what the serving path allows."""
    return _first_by(observation, mask, "node_done")


def peft_choice(observation: Observation, mask: np.ndarray) -> int:
    """PEFT's server computed from the observation alone: least ``node_peft_gap`` (the env's
    ``optimistic_cost=True`` key), then less transfer, then lower index, as
    :class:`PeftPolicy` orders them. The gap is float32 and relative, so finishes that differ
    by less than float32 resolves count as ties here."""
    assert isinstance(observation, dict)
    if "node_peft_gap" not in observation:
        raise PolicyError(
            "peft from the observation reads node_peft_gap: the env needs optimistic_cost=True"
        )
    return _first_by(observation, mask, "node_peft_gap")


class _EnvPolicy(Policy):
    reads_observation = False  # each plans through the env's estimates

    def __init__(self, env: Any, seed: int | None = None) -> None:
        self.env = _base(env)
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.rng = np.random.default_rng(seed)


class _EarliestFinish(_EnvPolicy):
    """A server ranking by earliest finish (``eft_order``): the policy takes the first valid
    server and ranks them all (what a search over it tries first). Subclasses may change the
    key (:meth:`_order`)."""

    stateless = True  # reads the env, keeps nothing between decisions

    def _order(self, mask: np.ndarray) -> np.ndarray:
        done, transfer = self.env.eft_keys(mask)
        return eft_order(done, transfer, mask)

    def act(self, observation: Observation, mask: np.ndarray) -> int:
        return int(self._order(mask)[0]) if mask.any() else 0

    def preferences(self, observation: Observation, mask: np.ndarray) -> np.ndarray:
        """The valid servers in the policy's order, first the one it takes."""
        return _order_preferences(self._order(mask), len(mask))


class GreedyEftPolicy(_EarliestFinish):
    """Earliest finish time (transfers, pulls and queueing included) in the env's task order."""

    name = "greedy_eft"


class HeftPolicy(_EarliestFinish):
    """HEFT (Topcuoglu et al. 2002) = upward-rank task order + earliest-finish-time server
    selection with communication (insertion-based). This policy is the server selection: each
    task goes to the valid server with the earliest finish (transfers from the predecessors or
    from the origin, image pulls, queueing and, for a sink, the return of its output to the
    origin included). The task order is the env's: with ``task_order="rank"`` (decreasing
    upward rank among ready tasks) this is exact HEFT; with the default ``"patent"`` order it
    is EFT in the patent's candidate order, i.e. the same as ``greedy_eft``."""

    name = "heft"


class PeftPolicy(_EarliestFinish):
    """PEFT (Arabnejad & Barbosa 2014): each task to the valid server of least ``finish +
    oct``, its earliest finish (as HEFT's, pulls and queueing included) plus the optimistic
    cost table's entry for the rest of its longest path from there
    (:meth:`~rlsched.core.offloading.OffloadInstance.optimistic_cost`). Where HEFT looks at
    the task alone, PEFT also weighs where its children could run and what their inputs would
    cost to move. Ties: less transfer, lower index. The task order is the env's; a search
    over PEFT with ``top_k`` tries PEFT's best servers (:meth:`preferences`)."""

    name = "peft"

    def _order(self, mask: np.ndarray) -> np.ndarray:
        env = self.env
        done, transfer = env.eft_keys(mask)
        key = np.round(done + env.optimistic_costs()[env.current_task], 9)
        return eft_order(key, transfer, mask)


class ImageLocalityPolicy(_EnvPolicy):
    """Servers holding or caching the task's image first (no pull), then earliest finish."""

    name = "image_locality"

    def act(self, observation: Observation, mask: np.ndarray) -> int:
        env = self.env
        task = env.current_instance().tasks[env.current_task]
        local = np.array(
            [
                bool(mask[s]) and env._states[s].image_ready(task.image) is not None
                for s in range(len(mask))
            ]
        )
        return _eft(env, local if local.any() else mask)


class AllCloudPolicy(_EnvPolicy):
    """Every task to the cloud (earliest finish when there is none)."""

    name = "all_cloud"

    def act(self, observation: Observation, mask: np.ndarray) -> int:
        clouds = [s for s, srv in enumerate(self.env.servers) if srv.is_cloud and mask[s]]
        return clouds[0] if clouds else _eft(self.env, mask)


class AllLocalPolicy(_EnvPolicy):
    """Every task on its workflow's origin edge server when it fits, else earliest finish."""

    name = "all_local"

    def act(self, observation: Observation, mask: np.ndarray) -> int:
        o = self.env._origin[self.env.current_workflow]
        return int(o) if mask[o] else _eft(self.env, mask)


class RandomServerPolicy(_EnvPolicy):
    """Uniform among valid servers (seeded)."""

    name = "random"

    def act(self, observation: Observation, mask: np.ndarray) -> int:
        valid = np.flatnonzero(mask)
        return int(valid[self.rng.integers(len(valid))]) if len(valid) else 0


class MdpLookaheadPolicy(_EnvPolicy):
    """The patent's value-based choice: ``argmax_a Q(s, a) = r(s, a) + gamma * V(s')``.

    ``V(s')`` is a depth-limited look-ahead: deep-copy the env, apply ``a``, then roll out the
    next ``depth`` decisions greedily (earliest finish) and sum their rewards discounted by
    ``gamma`` (``V = sum_k gamma^k r_k``). The copy's rng is the env's, so the rollout sees
    the same next candidates the env would pick. ``gamma`` = 0.5 as in the patent, ``depth`` = 2;
    the rollout stops at the end of the current workflow. Ties go to the lower server index.
    """

    name = "mdp_lookahead"
    category = "search"

    def __init__(
        self,
        env: Any,
        seed: int | None = None,
        gamma: float = 0.5,
        depth: int | None = 2,
        reward: str | None = None,
    ) -> None:
        super().__init__(env, seed)
        self.gamma = float(gamma)
        self.depth = 10**9 if depth is None else int(depth)
        self.reward = reward  # None: the env's own reward

    def q_values(self, mask: np.ndarray) -> np.ndarray:
        q = np.full(len(mask), -np.inf)
        for a in np.flatnonzero(mask):
            sim = copy.deepcopy(self.env)
            if self.reward is not None:
                sim.reward_name = self.reward
            w = sim.current_workflow
            _, r, done, _, _ = sim.step(int(a))
            v, disc = 0.0, 1.0
            for _ in range(self.depth):
                if done or sim.current_workflow != w:
                    break
                _, rk, done, _, _ = sim.step(_eft(sim, sim.action_masks()))
                v += disc * rk
                disc *= self.gamma
            q[a] = r + self.gamma * v
        return q

    def act(self, observation: Observation, mask: np.ndarray) -> int:
        q = self.q_values(mask)
        return int(np.argmax(q)) if np.isfinite(q).any() else int(np.argmax(mask))


class MdpRolloutPolicy(RolloutPolicy):
    """The patent's ``Q(s, a) = r(s, a) + gamma * V(s')`` with ``gamma = 1``, the makespan reward
    and ``V`` rolled out greedily (earliest finish) to the end of the current workflow, so
    ``Q(s, a)`` is minus the workflow's projected completion time after choosing ``a``.

    This is the search teacher of :mod:`rlsched.policies.rollout` (Bertsekas' rollout) with
    earliest finish as its base, every valid server as a candidate, the rollout ending with the
    current workflow (its tasks are known once it arrives: nothing to sample, ``futures=0``) and
    ties to the lowest server (the patent's argmax). On a deterministic model it never does
    worse than its greedy base; it costs one greedy rollout per server per decision.
    """

    name = "mdp_rollout"

    def __init__(self, env: Any, seed: int | None = None) -> None:
        base = _base(env)
        super().__init__(
            base, GreedyEftPolicy(base, seed), "greedy_eft", seed, horizon=None, futures=0,
            top_k=base.num_servers, prefer_base=False, score="return", reward="makespan",
        )  # fmt: skip

    def _segment(self) -> Any:
        return self.env.current_workflow


class OptimalPolicy(_EnvPolicy):
    """Solve each workflow exactly (CP-SAT, :func:`rlsched.core.optimal.solve`) on its
    first decision and follow the plan; fall back to earliest finish where the plan's server
    is invalid. The plan ignores load left by earlier workflows (a static solve). Each solve
    stops after ``work_limit`` units of CP-SAT's deterministic time (or ``time_limit`` s of
    wall clock, a cap for very slow machines), so the plan does not depend on how busy the
    machine is."""

    name = "optimal"
    category = "search"

    def __init__(
        self,
        env: Any,
        seed: int | None = None,
        time_limit: float = 60.0,
        work_limit: float | None = 5.0,
    ) -> None:
        super().__init__(env, seed)
        self.time_limit = time_limit
        self.work_limit = work_limit
        self._plan: tuple[tuple[int, int], np.ndarray] | None = None

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self._plan = None

    def act(self, observation: Observation, mask: np.ndarray) -> int:
        env = self.env
        key = (id(env._wf), env.current_workflow)
        if self._plan is None or self._plan[0] != key:
            res = solve(env.current_instance(), time_limit=self.time_limit,
                        work_limit=self.work_limit)  # fmt: skip
            self._plan = (key, np.asarray(res.schedule.server))  # (key, server per task)
        s = int(self._plan[1][env.current_task])
        return s if mask[s] else _eft(env, mask)


POLICY_FACTORIES: dict[str, Callable[[Any, int | None], Policy]] = {
    "heft": HeftPolicy,
    "peft": PeftPolicy,
    "greedy_eft": GreedyEftPolicy,
    "image_locality": ImageLocalityPolicy,
    "all_cloud": AllCloudPolicy,
    "all_local": AllLocalPolicy,
    "random": RandomServerPolicy,
    "mdp_lookahead": MdpLookaheadPolicy,
    "mdp_rollout": MdpRolloutPolicy,
}

try:  # the exact solver needs ortools
    import rlsched.core.optimal  # noqa: F401

    POLICY_FACTORIES["optimal"] = OptimalPolicy
except ImportError:  # pragma: no cover
    pass
