"""Search teachers: rollout over *sampled* futures, a deployable policy for every env.

At each decision the policy snapshots the env and, for every candidate action, restores the
snapshot, replaces what the env has not revealed yet with a sampled future
(:meth:`rlsched.envs.base.RlschedEnv.resample_future`: the workload's own generator or
resampled history, never the true future), takes the action and lets a *base* policy (the
env's best heuristic) continue for ``horizon`` decisions. It does this over ``futures`` sampled
futures, the same ones for every candidate (common random numbers, so the comparison between
candidates is paired), and takes the candidate with the best mean score: the env's main metric
of the episode so far at the horizon, then the reward. Ties go to the base's own action, so
where no candidate's rollouts score better the policy acts as its base (Bertsekas' rollout:
never worse than the base in expectation when the sampled futures follow the true one's law).

Cost per decision: ``candidates x futures x horizon`` env steps and ``candidates x futures``
snapshot restores; ``benchmarks/bench_rollout.py`` and docs/results.md give the decision
latency. ``mdp_rollout`` (:mod:`rlsched.policies.offloading`) is this policy on
WorkflowOffloading with earliest-finish as its base, rolled out to the end of the current
workflow (whose tasks are known once it arrives, so nothing needs sampling) and scored by the
makespan reward. :class:`~rlsched.policies.oracle.ClairvoyantPolicy` shares the search
(:class:`RolloutSearch`) but rolls out the true future.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from rlsched.envs.base import FastRollouts, episode_value, main_metric_of, summed_return
from rlsched.policies.base import Observation, Policy

#: Candidate actions per decision when more are valid (documented in docs/results.md).
DEFAULT_TOP_K = 16


@dataclass
class Trajectory:
    """Actions from some decision on, their rewards, and the score of where they lead."""

    actions: list[Any]
    rewards: list[float]
    score: tuple[float, float]
    done: bool = False
    #: the env's metrics where the rollout ended (scored by a metric; None by return)
    metrics: dict[str, float] | None = None


class RolloutSearch(Policy):
    """What rollout policies share: candidates, base-policy copies and one rollout from a
    snapshot. Subclasses decide what happens after each restore (:meth:`_prepare`), where a
    rollout stops (:meth:`_segment`) and which candidate to take (``act``)."""

    #: use the env's compiled rollouts of the base where it has them (:meth:`_fast`; the same
    #: scores; False: always step the env)
    compiled = True
    #: the env's ``reward_name`` during rollouts (None: the env's own)
    reward: str | None = None

    def __init__(
        self,
        env: Any,
        base: Policy,
        base_name: str,
        seed: int | None = None,
        horizon: int | None = None,
        top_k: int = DEFAULT_TOP_K,
        score: Literal["metric", "return"] = "metric",
    ) -> None:
        self.env = getattr(env, "unwrapped", env)
        if not callable(getattr(self.env, "snapshot", None)):
            raise TypeError(f"{type(self.env).__name__} has no snapshot(): no rollout search")
        if horizon is not None and horizon < 1:
            raise ValueError(f"horizon must be at least 1 (or None: to the end), not {horizon}")
        self.base = base  # the shadow: follows the real episode, so its state is the real one
        self.base_name = base_name
        self.horizon = horizon
        self.top_k = int(top_k)
        self.score = score
        self.metric, self.direction = main_metric_of(self.env)
        self._sign = 1.0 if self.direction == "higher" else -1.0
        self._seed = seed
        # reward taken so far this episode (the oracle tracks it; a constant per decision, so
        # the rollout policy leaves it at 0)
        self._prefix = 0.0
        self.rollouts = 0
        # each candidate's score at the last search (None: the last decision searched nothing)
        self._values: dict[int, float] | None = None
        #: whether the rollouts need the env's rewards (False: scored by their metrics alone,
        #: the env may skip them where it does not observe: ``advance(a, rewarded=False)``)
        self._rewarded = True

    def action_values(self) -> dict[int, float] | None:
        """The main-metric score (higher is better: negated where lower is) of each candidate's
        rollout at the last decision, or None when that decision rolled nothing out. Box
        actions have no index to key them by: None."""
        return self._values

    def _prepare(self) -> None:
        """Called on the env right after each restore, before a rollout (default: nothing)."""

    def _segment(self) -> Any:
        """A rollout stops early when this changes (default: never; see ``mdp_rollout``)."""
        return None

    def _copy_base(self, src: Policy | None = None) -> Policy:
        """A copy of the base policy sharing the env (its state, not the env, is copied; a
        stateless policy, such as a learned one, is shared)."""
        pol = src if src is not None else self.base
        if pol.stateless:
            return pol
        return copy.deepcopy(pol, {id(self.env): self.env})

    def _candidates(
        self,
        rng: np.random.Generator,
        mask: np.ndarray,
        base_action: Any,
        prefs: np.ndarray | None = None,
    ) -> list[Any]:
        """Every valid action when there are at most ``top_k``; otherwise the base's own action
        and the valid actions the base ranks highest (``prefs``, its
        :meth:`~rlsched.policies.base.Policy.preferences`), or, without a ranking, the lowest
        valid action and a sample of the others drawn with ``rng`` (``top_k`` in all). Box
        actions: the env's ``oracle_candidates()`` grid plus the base's action. An env may
        narrow them itself with ``oracle_actions(mask, base_action)``."""
        own = getattr(self.env, "oracle_actions", None)
        if callable(own):
            narrowed = own(mask, base_action)
            if narrowed is not None:
                return [int(a) for a in narrowed]
        grid = getattr(self.env, "oracle_candidates", None)
        if callable(grid):  # Box actions: the env's grid plus the base's own action
            return [np.asarray(base_action), *grid()]
        valid = np.flatnonzero(mask)
        if len(valid) == 0:
            return [int(base_action)]
        if len(valid) <= self.top_k:
            return [int(a) for a in valid]
        if prefs is not None and len(prefs) == len(mask):
            ranked = valid[np.argsort(-np.asarray(prefs)[valid], kind="stable")]
            others = [int(a) for a in ranked if a != int(base_action)]
            return [int(base_action), *others[: self.top_k - 1]]
        keep = {int(base_action), int(valid[0])}
        rest = np.setdiff1d(valid, np.fromiter(keep, dtype=np.int64))
        k = max(0, self.top_k - len(keep))
        pick = rng.choice(rest, size=min(k, len(rest)), replace=False)
        return sorted(keep) + [int(a) for a in pick]

    def _rollout(
        self,
        snap: Any,
        shadow: Policy,
        observation: Observation,
        mask: np.ndarray,
        first: Any | None,
    ) -> Trajectory:
        """Take ``first`` (None: the base's own action) then the base, from ``snap``."""
        segment = self._begin(snap)
        pol = self._copy_base(shadow)
        self.rollouts += 1
        a = pol.act(observation, mask)  # also advances the copy's state, as in the real run
        if first is not None:
            a = first
        return self._play(pol, a, segment, [], [])

    def _begin(self, snap: Any) -> Any:
        """Put the env at ``snap`` for a rollout (then :meth:`_prepare`); returns the segment
        the rollout starts in."""
        self.env.restore(snap)
        self._prepare()
        return self._segment()

    def _take(self, a: Any, observe: bool) -> tuple[Any, float, bool, dict[str, Any]]:
        """Step the env with ``a``: ``(observation, reward, episode over, info)``; without
        ``observe`` (a policy that reads the env, not the observation) the env skips building
        one and the observation is None."""
        if observe:
            obs, r, term, trunc, info = self.env.step(a)
        else:
            obs = None
            r, term, trunc, info = self.env.advance(a, rewarded=self._rewarded)
        return obs, float(r), bool(term or trunc), info

    def _play(
        self, pol: Policy, a: Any, segment: Any, actions: list[Any], rewards: list[float]
    ) -> Trajectory:
        """Take ``a``, then follow ``pol`` from the env as it is until the rollout stops;
        ``actions`` and ``rewards`` hold the rollout's steps before this one."""
        out = self._play_until(pol, a, segment, actions, rewards, None)
        assert out is not None
        return out

    def _play_until(
        self, pol: Policy, a: Any, segment: Any, actions: list[Any], rewards: list[float],
        until: Callable[[], bool] | None,
    ) -> Trajectory | None:  # fmt: skip
        """:meth:`_play`, or None where ``until()`` is true after a step before the rollout
        stops (the caller plays the rest; ``actions`` and ``rewards`` hold the steps)."""
        while True:
            actions.append(a)
            obs, r, done, info = self._take(a, pol.reads_observation)
            rewards.append(r)
            if self._stops(done, len(actions), segment):
                return self._scored(actions, rewards, done, info)
            if until is not None and until():
                return None
            a = pol.act(obs, self.env.action_masks())

    def _stops(self, done: bool, steps: int, segment: Any) -> bool:
        """Whether a rollout ends after ``steps`` steps: the episode's end, the horizon or the
        end of the segment it started in."""
        return (
            done
            or (self.horizon is not None and steps >= self.horizon)
            or self._segment() != segment
        )

    def _scored(
        self, actions: list[Any], rewards: list[float], done: bool, info: dict[str, Any]
    ) -> Trajectory:
        """A finished rollout with its score (see :class:`Trajectory`)."""
        if self.score == "return":
            # the first reward plus the rest summed in order (the patent's Q = r + V, gamma 1)
            q = summed_return(rewards)
            return Trajectory(actions, rewards, (q, q), done)
        total = self._prefix + float(np.sum(rewards))
        metrics = info.get("metrics") if done else None
        if metrics is None:
            metrics = self.env.metrics()
        value = episode_value(self.metric, total, metrics)
        if value != value:  # NaN (nothing measured yet): rank by reward alone
            value = -np.inf if self._sign > 0 else np.inf
        return Trajectory(actions, rewards, (self._sign * value, total), done, dict(metrics))

    def _paired_rollouts(
        self, snap: Any, first: Policy, second: Policy, observation: Observation, mask: np.ndarray
    ) -> tuple[Trajectory, Trajectory]:
        """``_rollout(snap, first, ...)`` and ``_rollout(snap, second, ...)`` (each policy from
        ``snap`` on the same future), played as one while their actions have the same effect
        (:meth:`~rlsched.envs.base.RlschedEnv.same_effect`; equal actions where ``first``
        reads the observation, whose last-action entries show ``second``'s): the steps
        before they part are taken once. Where they part, the env is copied and each goes
        on alone. The same trajectories as two rollouts (tests check it), for one restore
        and one copy instead of two restores and the shared steps twice."""
        env = self.env
        segment = self._begin(snap)
        pa, pb = self._copy_base(first), self._copy_base(second)
        self.rollouts += 2
        a, b = pa.act(observation, mask), pb.act(observation, mask)
        sees_a = pa.reads_observation
        actions_a: list[Any] = []
        actions_b: list[Any] = []
        rewards: list[float] = []
        unseen: Any = None  # what a policy that reads the env, not the observation, is given
        while _same(a, b) if sees_a else env.same_effect(a, b):
            actions_a.append(a)
            actions_b.append(b)
            sees_b = pb.reads_observation  # a committed candidate stops reading it
            # b's action: its observation is the one it would see alone
            obs, r, done, info = self._take(b, sees_a or sees_b)
            rewards.append(r)
            if self._stops(done, len(actions_a), segment):
                return (self._scored(actions_a, rewards, done, info),
                        self._scored(actions_b, list(rewards), done, info))  # fmt: skip
            m = env.action_masks()
            a = pa.act(obs if sees_a else unseen, m)
            b = pb.act(obs if sees_b else unseen, m)
        fork = env.snapshot()
        theirs = self._play(pb, b, segment, actions_b, list(rewards))
        env.restore(fork, reuse=False)
        return self._play(pa, a, segment, actions_a, rewards), theirs

    def _fast(self) -> FastRollouts | None:
        """The env's compiled rollouts for this search at this decision, if it has them (a
        metric score only where it is the mean completion the compiled rollouts give, or the
        return)."""
        if not self.compiled or (
            self.score == "metric" and self.metric not in ("mean_completion", "reward")
        ):
            return None
        reward = self.reward if self.reward is not None else getattr(self.env, "reward_name", "")
        to_segment_end = type(self)._segment is not RolloutSearch._segment
        return self.env.fast_rollouts(self.base_name, reward, self.horizon, to_segment_end)

    def _fast_scores(
        self, fast: FastRollouts, cands: list[Any], seeds: list[int | None]
    ) -> list[list[tuple[float, float]]]:
        """Each candidate's scores, future by future, from the compiled rollouts: what
        :meth:`_rollout` scores, computed the same way from their rewards and completions."""
        self.rollouts += len(cands) * len(seeds)
        if self.score == "return" and seeds == [None] and fast.stops_with_workflow():
            return [[(float(q), float(q))] for q in fast.returns([int(a) for a in cands])]
        laters = [fast.later(s) for s in seeds]
        table = []
        for a in cands:
            row = []
            for later in laters:
                rewards, done = fast.play(int(a), later)
                if self.score == "return":
                    q = summed_return(rewards)
                    row.append((q, q))
                    continue
                row.append(self._completion_score(rewards, done))
            table.append(row)
        return table

    def _completion_score(self, rewards: Any, done: list[float]) -> tuple[float, float]:
        """A compiled rollout's score by its ``rewards`` and the completion times ``done`` of
        the workflows the episode has finished by its end (:meth:`_scored`'s, from them)."""
        total = self._prefix + float(np.sum(rewards))
        finished = np.array(done)
        mean = float(finished.mean()) if len(finished) else float("nan")
        value = episode_value(self.metric, total, {"mean_completion": mean})
        if value != value:  # NaN (nothing measured yet): rank by reward alone
            value = -np.inf if self._sign > 0 else np.inf
        return self._sign * value, total


class RolloutPolicy(RolloutSearch):
    """Rollout of a base heuristic over sampled futures; see the module docstring.

    ``futures``: sampled futures per candidate (0: roll out the env as it is, for envs or
    segments whose future is already known); ``horizon``: decisions per rollout (None: to the
    episode's end); ``top_k``: candidates per decision; ``prefer_base``: ties go to the base's
    action (False: to the lowest candidate, the patent's argmax); ``score``: ``"metric"`` (the
    main metric at the horizon, then reward) or ``"return"`` (the rollout's summed reward);
    ``reward``: the env's ``reward_name`` during rollouts (None: the env's own); ``ranked``:
    with more valid actions than ``top_k``, try those the base ranks highest (its
    ``preferences``) rather than a random sample (the oracle samples); ``significance``: with
    ``prefer_base``, leave the base's action only when the best candidate's gain over it,
    future by future (the futures are common to both), has a mean above ``significance``
    standard errors (0: any higher mean). A teacher whose labels others imitate should not
    change a decision on noise: differences that are not there are not learnable.
    ``min_gain``: with ``prefer_base``, leave the base's action only when the best candidate's
    mean score beats the base's by at least this share of the base's own (0.02: 2% of what is
    left to gain or lose from this decision on); a teacher's small departures are the ones a
    student reproduces least, so its labels can keep to the large ones. ``compiled``: where
    the env has compiled rollouts for this search (:meth:`~rlsched.envs.base.RlschedEnv.
    fast_rollouts`: WorkflowOffloading with HEFT, greedy_eft or PEFT as the base, scored by
    return or by the mean completion), use them instead of stepping
    copies of the env; the same decisions, tens of times faster (False: always step the
    env)."""

    name = "rollout"
    category = "search"

    def __init__(
        self,
        env: Any,
        base: Policy,
        base_name: str,
        seed: int | None = None,
        horizon: int | None = 32,
        futures: int = 4,
        top_k: int = 8,
        prefer_base: bool = True,
        score: Literal["metric", "return"] = "metric",
        reward: str | None = None,
        ranked: bool = True,
        significance: float = 0.0,
        min_gain: float = 0.0,
        compiled: bool = True,
    ) -> None:
        super().__init__(env, base, base_name, seed, horizon, top_k, score)
        self.compiled = bool(compiled)
        self.ranked = ranked
        if significance < 0:
            raise ValueError(f"significance must be at least 0, not {significance}")
        self.significance = float(significance)
        if not min_gain >= 0:
            raise ValueError(f"min_gain must be at least 0, not {min_gain}")
        self.min_gain = float(min_gain)
        if futures < 0:
            raise ValueError(f"futures must be at least 0, not {futures}")
        if futures and not type(self.env).can_resample_future():
            raise TypeError(
                f"{type(self.env).__name__} cannot sample futures (no resample_future): "
                "use futures=0 only where the rollout's future is already known"
            )
        self.futures = int(futures)
        self.prefer_base = prefer_base
        self.reward = reward
        self._future: int | None = None
        self.reset(seed)

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": type(self).__name__,
            "base": self.base_name,
            "horizon": self.horizon,
            "futures": self.futures,
            "top_k": self.top_k,
            "candidates": "ranked by the base" if self.ranked else "sampled",
            "significance": self.significance,
            "min_gain": self.min_gain,
            "compiled": self.compiled,
        }

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self._seed = seed
        self.base.reset(seed)
        self._rng = np.random.default_rng(None if self._seed is None else self._seed + 104_729)
        self._prefix = 0.0
        self.decisions = 0
        self.rollouts = 0

    def _prepare(self) -> None:
        if self._future is not None:
            self.env.resample_future(np.random.default_rng(self._future))
        if self.reward is not None:
            self.env.reward_name = self.reward

    def act(self, observation: Observation, mask: np.ndarray) -> Any:
        env = self.env
        fast = self._fast()
        if fast is not None:  # the base's ranking from the compiled model: no env copies
            order = fast.order()
            base_action: Any = _first(order)
            prefs = None
            if self.ranked:
                prefs = np.full(len(mask), -np.inf)
                prefs[order] = -np.arange(len(order), dtype=np.float64)
        else:
            shadow = self._copy_base()
            probe = self._copy_base(shadow)
            base_action = probe.act(observation, mask)
            prefs = probe.preferences(observation, mask) if self.ranked else None
        cands = self._candidates(self._rng, mask, base_action, prefs)
        if self.prefer_base:  # ties go to the first candidate: the base's own action
            cands = [base_action, *(a for a in cands if not _same(a, base_action))]
        action = cands[0]
        self._values = None
        values: dict[int, float] = {}
        if len(cands) > 1:
            snap = env.snapshot() if fast is None else None
            seeds: list[int | None] = (
                [int(s) for s in self._rng.integers(2**63, size=self.futures)]
                if self.futures else [None]
            )
            table = self._fast_scores(fast, cands, seeds) if fast is not None else None
            best: tuple[float, float] | None = None
            first: np.ndarray | None = None  # the first candidate's scores, future by future
            best_scores: np.ndarray | None = None
            for i, a in enumerate(cands):
                if table is not None:
                    scores = table[i]
                else:
                    scores = []
                    for s in seeds:
                        self._future = s
                        scores.append(self._rollout(snap, shadow, observation, mask, a).score)
                per = np.array([s[0] for s in scores])
                if len(scores) == 1:  # the mean of one value is that value: skip numpy's
                    mean = (float(scores[0][0]), float(scores[0][1]))
                else:
                    mean = (float(per.mean()), float(np.mean([s[1] for s in scores])))
                if first is None:
                    first = per
                if np.ndim(a) == 0:
                    values[int(a)] = mean[0]  # the candidate's mean score over the futures
                if best is None or mean > best:
                    best, action, best_scores = mean, a, per
            self._future = None
            self._values = values or None
            if snap is not None:
                env.restore(snap, reuse=False)  # its last use: no copy
            if self.significance > 0 and self.prefer_base and not _same(action, cands[0]):
                # keep the base's action unless the gain is clear over the sampled futures
                assert first is not None and best_scores is not None
                if not _clear_gain(best_scores - first, self.significance):
                    action = cands[0]
            if self.min_gain > 0 and self.prefer_base and not _same(action, cands[0]):
                assert first is not None and best is not None
                base_mean = float(first.mean())
                if best[0] - base_mean < self.min_gain * abs(base_mean):
                    action = cands[0]  # a small gain: keep the base's action
        if fast is None or not self.base.stateless:
            self.base.act(observation, mask)  # advance the shadow through the real decision
        self.decisions += 1
        return action


def _clear_gain(gain: np.ndarray, z: float) -> bool:
    """Whether the paired gains' mean exceeds ``z`` standard errors (one future: > 0)."""
    m = float(np.mean(gain))
    if m <= 0:
        return False
    if len(gain) < 2:
        return True
    se = float(np.std(gain, ddof=1)) / np.sqrt(len(gain))
    return m > z * se if se > 0 else z != np.inf


def _first(order: np.ndarray) -> int:
    """The base's own action from the compiled rollouts' ``order`` of the servers (none can
    host the task: 0, as PEFT then acts)."""
    return int(order[0]) if len(order) else 0


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, int | np.integer) and isinstance(b, int | np.integer):
        return int(a) == int(b)  # action indices: no arrays to build
    return bool(np.array_equal(np.asarray(a), np.asarray(b)))
