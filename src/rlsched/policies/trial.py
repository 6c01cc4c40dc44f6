"""A trial guard: follow a learned policy only where the cluster's own simulator says it pays.

A learned policy that beats the best heuristic on most clusters can still lose on one (the
PodRebalancing entries: better than greedy_migration on about three clusters in four, worse on
the one the goals are judged on; docs/pod_rebalancing.md). The guard asks the cluster itself,
the way a deployable search does (:mod:`rlsched.policies.rollout`): every ``every`` decisions
it snapshots the env, and over ``futures`` sampled futures (the workload's own generator,
never the true future; the same futures for both, so the comparison is paired) it plays the
learned policy and the anchor heuristic from the current state for ``horizon`` decisions
(None or ``"end"``: to the episode's end) and scores each by the env's main metric. Until the
next trial it follows the learned policy when the learned policy's mean gain over the anchor
exceeds ``significance`` standard errors of the paired gains, and the anchor otherwise.
Where nothing is left to sample (one workflow per episode in WorkflowOffloading, known on
arrival, with no later arrivals and the rank task order, which draws nothing) every future is
the episode itself: one future makes the trial exact. A departure model may also be tried
at other ``thresholds`` (its own first): each is a learned candidate of the trial, and the
guard follows the one with the highest clear mean gain over the anchor (ties to the
earlier).

A trial scores by the env's main metric unless ``metric`` names another, and ``keep`` may
name a metric the followed candidate must not give up: it is followed only where, in every
sampled future, it is no worse than the anchor on ``keep`` (LLMAutoscaling's cost goal:
``metric: cost``, ``keep: slo_attainment``: cheaper than HPA at no loss of attainment).
``sampler`` names how the futures are drawn where the env offers more than one way
(``FUTURE_SAMPLERS``; LLMAutoscaling's ``"blocks"`` keep the trace's bursts); None: the env's
own way. ``familiar`` (on / off) sets a departure model's familiarity guard while the trial
guard judges it (:mod:`rlsched.policies.departures`; WorkflowOffloading's ``off`` lets the
trials, not the graph's shape, decide where it departs); None: the model's own; a spec's
``familiar=`` wins.

With ``commit`` (a number of decisions, usually ``every``) a candidate's rollout plays the
candidate for its first ``commit`` decisions and the anchor after them: the trial then weighs
what it decides, following the candidate until the next trial and the anchor's judgement
after it, against the anchor throughout (a rollout step of policy improvement over the
anchor, one block of decisions long), and the rest of each rollout costs what the anchor
costs. None: the candidate plays its rollout to the horizon.

Between trials a decision costs what the chosen policy costs (the network's forward pass, or
the heuristic's); a trial costs up to ``(1 + candidates) x futures x horizon`` env steps, once
per ``every`` decisions (:attr:`TrialGuard.trial_seconds` records it; docs/results.md gives the
figures). The anchor and the first candidate play each future as one until their actions
differ in effect (:meth:`~rlsched.envs.base.RlschedEnv.same_effect`), so the steps where a
residual network leaves its heuristic's decision as it is are taken once.

A zoo entry ships its guard in ``meta.json`` (``"trial": {"anchor": ..., "futures": ...,
"horizon": ..., "every": ..., "significance": ..., "thresholds": [...], "metric": ...,
"keep": ..., "sampler": ..., "familiar": ..., "commit": ...}``), which
``learned:PATH`` applies wherever the model plays; ``learned:PATH?trial=off`` plays the
network alone.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from rlsched.envs.base import episode_value
from rlsched.errors import PolicyError
from rlsched.policies.base import Action, Observation, Policy
from rlsched.policies.rollout import RolloutSearch, Trajectory, _clear_gain, _first

#: The guard's settings a model's ``meta.json`` ``trial`` may hold, with their defaults.
TRIAL_DEFAULTS: dict[str, Any] = {
    "anchor": None,
    "futures": 8,
    "horizon": 48,
    "every": 48,
    "significance": 1.0,
    "thresholds": (),
    "metric": None,
    "keep": None,
    "sampler": None,
    "familiar": None,
    "commit": None,
}


def trial_settings(raw: dict[str, Any], where: str) -> dict[str, Any]:
    """``raw`` (a ``meta.json`` ``trial``) checked and completed with :data:`TRIAL_DEFAULTS`;
    a :class:`PolicyError` naming ``where`` and the setting that is wrong."""
    unknown = sorted(set(raw) - set(TRIAL_DEFAULTS))
    if unknown:
        raise PolicyError(f"{where}: a trial takes {sorted(TRIAL_DEFAULTS)}, not {unknown}")
    out = {**TRIAL_DEFAULTS, **raw}
    if not isinstance(out["anchor"], str) or not out["anchor"]:
        raise PolicyError(f"{where}: a trial needs the anchor heuristic's name (anchor)")
    if out["horizon"] in ("end", None):  # to the episode's end
        out["horizon"] = None
    if out["commit"] is None or out["commit"] is False or out["commit"] == "off":  # to the horizon
        out["commit"] = None
    optional = [k for k in ("horizon", "commit") if out[k] is not None]
    for key in ("futures", "every", *optional):
        if not isinstance(out[key], int) or isinstance(out[key], bool) or out[key] < 1:
            raise PolicyError(f"{where}: trial {key} must be a whole number of at least 1, "
                              f"not {out[key]!r}")  # fmt: skip
    sig = out["significance"]
    if isinstance(sig, bool) or not isinstance(sig, int | float) or not sig >= 0:
        raise PolicyError(f"{where}: trial significance must be a number of at least 0, "
                          f"not {sig!r}")  # fmt: skip
    out["significance"] = float(sig)
    out["thresholds"] = _thresholds(out["thresholds"], where)
    fam = {"on": "on", True: "on", "off": "off", False: "off", None: None}.get(out["familiar"], "?")
    if fam == "?":
        raise PolicyError(f"{where}: trial familiar must be on or off, not {out['familiar']!r}")
    out["familiar"] = fam
    for key, what in (("metric", "metrics"), ("keep", "metrics"), ("sampler", "samplers")):
        if out[key] is not None and (not isinstance(out[key], str) or not out[key]):
            raise PolicyError(f"{where}: trial {key} must name one of the env's {what}, "
                              f"not {out[key]!r}")  # fmt: skip
    return out


def _thresholds(raw: Any, where: str) -> tuple[float, ...]:
    """A trial's other thresholds: a list of numbers (``meta.json``), one number, or numbers
    joined by ``/`` (a spec: ``trial_thresholds=-0.004/0.003``)."""
    items = raw.split("/") if isinstance(raw, str) else raw
    items = [items] if isinstance(items, int | float) else items
    try:
        out = tuple(float(v) for v in items if not isinstance(v, bool))
    except (TypeError, ValueError):
        out = ()
    else:
        if len(out) == len(items) and all(np.isfinite(out)):
            return out
    raise PolicyError(f"{where}: trial thresholds must be finite numbers (a list, or joined by "
                      f"'/'), not {raw!r}")  # fmt: skip


class Committed(Policy):
    """``first`` for the first ``decisions`` decisions, ``then`` after them: a trial
    candidate's rollout under ``commit``. A stateful ``then`` is shown every decision
    ``first`` takes, as a trial guard's shadows are, so it takes over in the state it would
    have had following the rollout."""

    category = "learned"

    def __init__(self, first: Policy, then: Policy, decisions: int) -> None:
        self.first, self.then, self.decisions = first, then, int(decisions)
        self.name = getattr(first, "name", "learned")
        self.taken_so_far = 0

    @property
    def reads_observation(self) -> bool:  # type: ignore[override]
        """Whether the next decision reads the observation (the policy that takes it, or a
        stateful ``then`` shown ``first``'s)."""
        if self.taken_so_far >= self.decisions:
            return self.then.reads_observation
        return self.first.reads_observation or (
            not self.then.stateless and self.then.reads_observation
        )

    def __deepcopy__(self, memo: dict[int, Any]) -> Committed:
        """A copy for one rollout: stateless parts (a network) shared, the others copied
        (through ``memo``: the env stays shared)."""
        out = copy.copy(self)
        out.first = self.first if self.first.stateless else copy.deepcopy(self.first, memo)
        out.then = self.then if self.then.stateless else copy.deepcopy(self.then, memo)
        return out

    def reset(self, seed: int | None = None) -> None:
        self.taken_so_far = 0
        self.first.reset(seed)
        self.then.reset(seed)

    def act(self, observation: Observation, mask: np.ndarray) -> Action:
        self.taken_so_far += 1
        if self.taken_so_far > self.decisions:
            return self.then.act(observation, mask)
        if not self.then.stateless:
            self.then.act(observation, mask)
        return self.first.act(observation, mask)


class TrialGuard(RolloutSearch):
    """The learned ``policy`` where its trials beat the ``anchor`` heuristic, the anchor
    elsewhere (module docstring). ``decisions``, ``trials``, ``trusted`` (decisions the
    learned policy made) and ``trial_seconds`` (time spent in trials) count the episode."""

    category = "learned"

    def __init__(
        self,
        env: Any,
        policy: Policy,
        anchor: Policy,
        anchor_name: str,
        seed: int | None = None,
        futures: int = 8,
        horizon: int | None = 48,
        every: int = 48,
        significance: float = 1.0,
        variants: Sequence[Policy] = (),
        metric: str | None = None,
        keep: str | None = None,
        sampler: str | None = None,
        commit: int | None = None,
    ) -> None:
        trial_settings(  # the checks a shipped or spec'd trial gets
            {"anchor": anchor_name, "futures": futures, "horizon": horizon, "every": every,
             "significance": significance, "metric": metric, "keep": keep,
             "sampler": sampler, "commit": commit}, "TrialGuard",
        )  # fmt: skip
        super().__init__(env, anchor, anchor_name, seed, horizon, top_k=1, score="metric")
        if not type(self.env).can_resample_future():
            raise PolicyError(f"{type(self.env).__name__} cannot sample futures: no trial guard")
        if metric is not None:
            self.metric = metric
            self._sign = self._direction_sign(metric, "metric")
        #: the metric a followed candidate may lose in no sampled future (None: any)
        self.keep = keep
        self._keep_sign = 1.0 if keep is None else self._direction_sign(keep, "keep")
        if sampler is not None:
            try:
                type(self.env).check_future_sampler(sampler, "trial sampler")
            except ValueError as e:
                raise PolicyError(str(e)) from None
        #: how the futures are drawn (None: as the env draws them)
        self.sampler = sampler
        self.policy = policy
        #: the learned candidates of a trial: ``policy`` first, then ``variants`` (the same
        #: model at other thresholds)
        self.candidates: list[Policy] = [policy, *variants]
        self.name = getattr(policy, "name", "learned")
        self.futures = int(futures)
        self.every = int(every)
        self.significance = float(significance)
        #: decisions a candidate plays in its rollouts before the anchor takes over (None:
        #: all of them)
        self.commit = None if commit is None else int(commit)
        self._future: int | None = None
        self.reset(seed)

    def _direction_sign(self, name: str, key: str) -> float:
        """+1 where a higher ``name`` is better, -1 where a lower one is; a
        :class:`PolicyError` for a metric the env does not report or does not rank."""
        env = self.env
        if name != "reward" and name not in env.METRICS:
            raise PolicyError(f"trial {key} {name!r}: {type(env).__name__} reports "
                              f"{sorted(env.METRICS)}")  # fmt: skip
        direction = env.metric_spec(name).direction
        if direction is None:
            raise PolicyError(f"trial {key} {name!r} is descriptive: neither higher nor lower "
                              "is better")  # fmt: skip
        return 1.0 if direction == "higher" else -1.0

    def describe(self) -> dict[str, Any]:
        out = dict(self.policy.describe())
        out["trial"] = {
            "anchor": self.base_name,
            "futures": self.futures,
            "horizon": self.horizon,
            "every": self.every,
            "significance": self.significance,
            "metric": self.metric,
            "keep": self.keep,
            "sampler": self.sampler,
            "commit": self.commit,
        }
        if len(self.candidates) > 1:
            out["trial"]["thresholds"] = [getattr(p, "threshold", None)
                                          for p in self.candidates[1:]]  # fmt: skip
        return out

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self._seed = seed
        for pol in self.candidates:
            pol.reset(seed)
        self.base.reset(seed)
        self._rng = np.random.default_rng(None if self._seed is None else self._seed + 7_919)
        self.decisions = 0
        self.trials = 0
        self.trusted = 0
        self.trial_seconds = 0.0
        self.rollouts = 0
        #: the followed candidate's gains, future by future, at the last trial (the first
        #: candidate's where none was followed)
        self.last_gain: np.ndarray | None = None
        #: at the last trial, the index in :attr:`candidates` followed until the next trial
        #: (None: the anchor)
        self.last_choice: int | None = None

    def _prepare(self) -> None:
        if self._future is not None:
            self.env.resample_future(np.random.default_rng(self._future), self.sampler)

    def trial(self, observation: Observation, mask: np.ndarray) -> bool:
        """Play the anchor and each learned candidate from here over the sampled futures;
        whether one of them has a clear paired gain (:attr:`last_choice` names the one with the
        highest mean gain among those, :attr:`last_gain` keeps its gains)."""
        t0 = time.perf_counter()
        snap = self.env.snapshot()
        seeds = self._rng.integers(2**63, size=self.futures)
        gains = np.empty((len(self.candidates), len(seeds)))
        kept = np.zeros_like(gains)  # the gains in ``keep``, higher-is-better
        compiled = self._anchor_scores([int(s) for s in seeds])
        # stepped rollouts scored by their metrics alone: the env may skip the rewards (the
        # compiled ones' scores sum the stepped rewards, and "reward" is one)
        self._rewarded = compiled is not None or "reward" in (self.metric, self.keep)
        players = self.candidates if self.commit is None else [
            Committed(pol, self.base, self.commit) for pol in self.candidates]  # fmt: skip
        for j, s in enumerate(seeds):
            self._future = int(s)
            paired: Trajectory | None = None  # the first candidate's, played with the anchor's
            if compiled is None:
                theirs, paired = self._paired_rollouts(
                    snap, self.base, players[0], observation, mask
                )
            base = theirs.score[0] if compiled is None else compiled[j]
            for i, pol in enumerate(players):
                if i == 0 and paired is not None:
                    mine = paired
                elif compiled is not None and isinstance(pol, Committed):
                    mine = self._committed_rollout(snap, pol, observation, mask)
                else:
                    mine = self._rollout(snap, pol, observation, mask, None)
                gains[i, j] = mine.score[0] - base  # scores are higher-is-better
                if self.keep is not None:
                    kept[i, j] = self._keep_sign * (
                        self._value(mine, self.keep) - self._value(theirs, self.keep)
                    )
        self._future = None
        self._rewarded = True
        self.env.restore(snap, reuse=False)  # its last use: no copy
        self.trials += 1
        clear = [
            i for i in range(len(gains))
            if _clear_gain(gains[i], self.significance) and bool(np.all(kept[i] >= 0))
        ]  # fmt: skip
        self.last_choice = max(clear, key=lambda i: (gains[i].mean(), -i)) if clear else None
        self.last_gain = gains[self.last_choice if clear else 0]
        self.trial_seconds += time.perf_counter() - t0
        return self.last_choice is not None

    def _anchor_scores(self, seeds: list[int | None]) -> list[float] | None:
        """The anchor's rollout scores over ``seeds``' futures from the env's compiled
        rollouts where it has them (:meth:`~rlsched.policies.rollout.RolloutSearch._fast`:
        WorkflowOffloading with PEFT, HEFT or greedy_eft as the anchor), the scores
        :meth:`_rollout` steps to, without stepping the env; None elsewhere (a ``keep``
        metric or a ``sampler`` are the stepped rollouts' to honour)."""
        if self.keep is not None or self.sampler is not None or not self.base.stateless:
            return None
        fast = self._fast()
        if fast is None:
            return None
        first = _first(fast.order())  # the anchor's own action, as it would take it
        return [score for score, _total in self._fast_scores(fast, [first], seeds)[0]]

    def _committed_rollout(
        self, snap: Any, pol: Committed, observation: Observation, mask: np.ndarray
    ) -> Trajectory:
        """``_rollout(snap, pol, ...)`` of a committed candidate where the anchor's rollouts
        are compiled (:meth:`_anchor_scores`): the candidate's decisions are stepped, the
        anchor's after them played by the compiled rollouts from where the candidate left
        the env, as the anchor's own are (the same scores as stepping them; to the episode's
        end: with a horizon the anchor is stepped). Its actions are the stepped ones."""
        segment = self._begin(snap)
        p = self._copy_base(pol)
        assert isinstance(p, Committed)
        self.rollouts += 1
        actions: list[Any] = []
        rewards: list[float] = []
        found: list[Any] = []  # the compiled rollouts from where the block ended

        def handover() -> bool:  # with a horizon, or none compiled from here: stepped on
            if p.taken_so_far >= p.decisions and self.horizon is None:
                found.extend(f for f in [self._fast()] if f is not None)
            return bool(found)

        stepped = self._play_until(p, p.act(observation, mask), segment, actions, rewards,
                                   handover)  # fmt: skip
        if stepped is not None:
            return stepped
        fast = found[0]
        more, finished = fast.play(_first(fast.order()), fast.later(None))  # the anchor's
        score = self._completion_score(np.concatenate([rewards, more]), finished)
        return Trajectory(actions, [*rewards, *more.tolist()], score, True)

    @staticmethod
    def _value(rollout: Trajectory, name: str) -> float:
        """``name``'s value where ``rollout`` ended (NaN, nothing measured yet: no loss)."""
        assert rollout.metrics is not None
        v = episode_value(name, rollout.score[1], rollout.metrics)
        return 0.0 if v != v else v

    def act(self, observation: Observation, mask: np.ndarray) -> Action:
        if self.decisions % self.every == 0:
            self.trial(observation, mask)
        self.decisions += 1
        i = self.last_choice
        chosen = self.base if i is None else self.candidates[i]
        for pol in (self.base, *self.candidates):  # stateful shadows follow the real episode
            if pol is not chosen and not pol.stateless:
                pol.act(observation, mask)
        self.trusted += int(i is not None)
        return chosen.act(observation, mask)
