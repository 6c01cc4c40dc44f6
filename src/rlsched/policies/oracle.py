"""The clairvoyant oracle: what is achievable when the whole future is known.

It shares its search with the deployable rollout policy (:mod:`rlsched.policies.rollout`),
which rolls out sampled futures instead of the true one.

At each decision the oracle snapshots the env (:meth:`rlsched.envs.base.SnapshotMixin.snapshot`:
the full state, random generators and the rest of the trace included, hence the true future),
and for every candidate action restores the snapshot, takes the action and lets a *base*
policy (the env's best heuristic) continue for ``horizon`` decisions, or to the episode's end.
It takes the candidate whose rollout scores best on the env's main metric (then on reward).

With ``horizon=None`` (to the end, the default of every env but LLMAutoscaling) the rollout
is *fortified* (Bertsekas, "Rollout algorithms for discrete optimization", 2005): the oracle
remembers the best complete trajectory seen so far and keeps following it unless a candidate's
rollout beats it. The first such trajectory is the base heuristic's own episode (same seed, same
tie-breaking), so the oracle never ends below the base heuristic on the main metric, exactly.
With a finite horizon there is no such guarantee; the oracle then scores a rollout by the main
metric of the episode so far (``env.metrics()``) at the horizon. ``score="return"`` (a
finite horizon only) scores it by its summed reward instead: an env whose reward prices
several goals (LLMAutoscaling's Lagrangian of attainment and cost,
``docs/results/llm_code1x_budget_oracle.py``) then gets an oracle for that trade-off rather
than for the main metric alone.

Candidates: every valid action when there are at most ``top_k``; otherwise the base's own
action, the lowest valid action and a seeded sample of the others (``top_k`` in all). Box action
spaces take the env's ``oracle_candidates()`` grid plus the base's action. An env may narrow
the candidates itself with ``oracle_actions(mask, base_action)`` (None: the rule above); a
decision with the base's action as its only candidate follows the incumbent without rollouts.

Cost per decision: ``candidates x remaining decisions`` env steps (``x horizon`` when finite)
and one snapshot restore per candidate, so a full-horizon episode of ``N`` decisions costs about
``top_k x N^2 / 2`` steps. ``decisions`` bounds that for long episodes: the oracle then rolls out
candidates at about that many decisions, evenly spaced over the base heuristic's own episode
length (known from the first incumbent), and follows the incumbent in between. It stays
fortified, so it still never ends below the base; it searches less, so its headroom is a lower
estimate still. ``benchmarks/bench_snapshot.py`` measures decisions per
second. The oracle is not deployable: it reads the future. It estimates headroom: how much
better than the best heuristic any policy could be.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from rlsched.policies.base import Observation, Policy
from rlsched.policies.rollout import DEFAULT_TOP_K, RolloutSearch, _same
from rlsched.policies.rollout import Trajectory as _Trajectory

__all__ = ["DEFAULT_TOP_K", "ClairvoyantPolicy"]


class ClairvoyantPolicy(RolloutSearch):
    """Rollout over the true future with a base heuristic; see the module docstring."""

    name = "clairvoyant"
    category = "oracle"

    def __init__(
        self,
        env: Any,
        base: Policy,
        base_name: str,
        seed: int | None = None,
        horizon: int | None = None,
        top_k: int = DEFAULT_TOP_K,
        decisions: int | None = None,
        score: Literal["metric", "return"] = "metric",
    ) -> None:
        super().__init__(env, base, base_name, seed, horizon, top_k, score)
        if decisions is not None and (horizon is not None or decisions < 1):
            raise ValueError("decisions needs horizon=None (fortified) and at least 1")
        if score == "return" and horizon is None:
            # the fortified oracle keeps one trajectory's score across decisions: the main
            # metric of the whole episode does not change along it, a return from here does
            raise ValueError("score='return' needs a finite horizon: the fortified oracle "
                             "(horizon=None) compares whole episodes by their main metric")
        self.max_decisions = decisions
        self.reset(seed)

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": type(self).__name__,
            "base": self.base_name,
            "horizon": self.horizon,
            "top_k": self.top_k,
            "decisions": self.max_decisions,
            "score": self.score,
        }

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self._seed = seed
        self.base.reset(seed)
        self._rng = np.random.default_rng(None if self._seed is None else self._seed + 7919)
        self._incumbent: _Trajectory | None = None
        self._last: Any = None  # the action act returned last
        self._stride = 1  # search every stride-th decision (set from the first incumbent)
        self._prefix = 0.0  # reward taken so far this episode
        self._values = None
        self.decisions = 0
        self.rollouts = 0

    # ------------------------------------------------------------------ acting
    def act(self, observation: Observation, mask: np.ndarray) -> Any:
        env = self.env
        inc = self._incumbent
        self._values = None
        if (
            self._stride > 1 and self.decisions % self._stride != 0
            and inc is not None and inc.actions
        ):
            return self._follow(inc, observation, mask)  # no search here: nothing to restore
        snap = env.snapshot()
        shadow = self._copy_base()
        base_action = self._copy_base(shadow).act(observation, mask)
        if self.horizon is None and self._incumbent is None:
            # the base heuristic's own episode from here: the first incumbent
            self._incumbent = self._rollout(snap, shadow, observation, mask, None)
            if self.max_decisions is not None:
                self._stride = max(1, -(-len(self._incumbent.actions) // self.max_decisions))
        cands = self._candidates(self._rng, mask, base_action)
        inc = self._incumbent
        if (
            len(cands) == 1 and self.horizon is None and inc is not None and inc.actions
            and _same(inc.actions[0], cands[0])
        ):
            # nothing to compare: the incumbent already is this action's rollout
            env.restore(snap, reuse=False)  # its last use: no copy
            return self._follow(inc, observation, mask)
        best: _Trajectory | None = None
        values: dict[int, float] = {}
        for a in cands:
            t = self._rollout(snap, shadow, observation, mask, a)
            if np.ndim(a) == 0:
                values[int(a)] = t.score[0]  # the candidate, then the base: its Q-value
            if best is None or t.score > best.score:
                best = t
        self._values = values or None
        env.restore(snap, reuse=False)  # its last use: no copy
        assert best is not None
        inc = self._incumbent
        if self.horizon is None and inc is not None and inc.actions and inc.score >= best.score:
            chosen = inc  # fortified: keep the best complete trajectory found so far
        else:
            chosen = best
        action = chosen.actions[0]
        self._prefix += chosen.rewards[0]
        if self.horizon is None:
            self._incumbent = _Trajectory(chosen.actions[1:], chosen.rewards[1:], chosen.score)
        self.base.act(observation, mask)  # advance the shadow through the real decision
        self.decisions += 1
        self._last = action
        return action

    def taken(self, action: Any) -> None:
        """Another action than the oracle's was taken (a learner's, when the oracle labels
        its states): the incumbent starts from a state the env is no longer in, so it is
        dropped, and the next decision starts again from the base's episode from there."""
        if self._incumbent is not None and not _same(action, self._last):
            self._incumbent = None

    # ------------------------------------------------------------------ helpers
    def _follow(self, inc: _Trajectory, observation: Observation, mask: np.ndarray) -> Any:
        """Take the incumbent's next action (the env is where the incumbent left it)."""
        self._prefix += inc.rewards[0]
        self._incumbent = _Trajectory(inc.actions[1:], inc.rewards[1:], inc.score)
        self.base.act(observation, mask)  # advance the shadow through the real decision
        self.decisions += 1
        self._last = inc.actions[0]
        return inc.actions[0]

