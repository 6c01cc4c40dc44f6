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
Between trials a decision costs what the chosen policy costs (the network's forward pass, or
the heuristic's); a trial costs ``2 x futures x horizon`` env steps, once per ``every``
decisions (:attr:`TrialGuard.trial_seconds` records it; docs/results.md gives the figures).

A zoo entry ships its guard in ``meta.json`` (``"trial": {"anchor": ..., "futures": ...,
"horizon": ..., "every": ..., "significance": ...}``), which ``learned:PATH`` applies
wherever the model plays; ``learned:PATH?trial=off`` plays the network alone.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from rlsched.errors import PolicyError
from rlsched.policies.base import Action, Observation, Policy
from rlsched.policies.rollout import RolloutSearch, _clear_gain

#: The guard's settings a model's ``meta.json`` ``trial`` may hold, with their defaults.
TRIAL_DEFAULTS: dict[str, Any] = {
    "anchor": None,
    "futures": 8,
    "horizon": 48,
    "every": 48,
    "significance": 1.0,
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
    for key in ("futures", "every", *(("horizon",) if out["horizon"] is not None else ())):
        if not isinstance(out[key], int) or isinstance(out[key], bool) or out[key] < 1:
            raise PolicyError(f"{where}: trial {key} must be a whole number of at least 1, "
                              f"not {out[key]!r}")  # fmt: skip
    sig = out["significance"]
    if isinstance(sig, bool) or not isinstance(sig, int | float) or not sig >= 0:
        raise PolicyError(f"{where}: trial significance must be a number of at least 0, "
                          f"not {sig!r}")  # fmt: skip
    out["significance"] = float(sig)
    return out


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
    ) -> None:
        trial_settings(  # the checks a shipped or spec'd trial gets
            {"anchor": anchor_name, "futures": futures, "horizon": horizon, "every": every,
             "significance": significance}, "TrialGuard",
        )  # fmt: skip
        super().__init__(env, anchor, anchor_name, seed, horizon, top_k=1, score="metric")
        if not type(self.env).can_resample_future():
            raise PolicyError(f"{type(self.env).__name__} cannot sample futures: no trial guard")
        self.policy = policy
        self.name = getattr(policy, "name", "learned")
        self.futures = int(futures)
        self.every = int(every)
        self.significance = float(significance)
        self._future: int | None = None
        self.reset(seed)

    def describe(self) -> dict[str, Any]:
        out = dict(self.policy.describe())
        out["trial"] = {
            "anchor": self.base_name,
            "futures": self.futures,
            "horizon": self.horizon,
            "every": self.every,
            "significance": self.significance,
        }
        return out

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self._seed = seed
        self.policy.reset(seed)
        self.base.reset(seed)
        self._rng = np.random.default_rng(None if self._seed is None else self._seed + 7_919)
        self.decisions = 0
        self.trials = 0
        self.trusted = 0
        self.trial_seconds = 0.0
        self.rollouts = 0
        self._follow = False
        self.last_gain: np.ndarray | None = None

    def _prepare(self) -> None:
        if self._future is not None:
            self.env.resample_future(np.random.default_rng(self._future))

    def trial(self, observation: Observation, mask: np.ndarray) -> bool:
        """Play both policies from here over the sampled futures; whether the learned one's
        paired gain is clear (:attr:`last_gain` keeps the gains, future by future)."""
        t0 = time.perf_counter()
        snap = self.env.snapshot()
        gains = []
        for s in self._rng.integers(2**63, size=self.futures):
            self._future = int(s)
            mine = self._rollout(snap, self.policy, observation, mask, None).score[0]
            theirs = self._rollout(snap, self.base, observation, mask, None).score[0]
            gains.append(mine - theirs)  # scores are higher-is-better
        self._future = None
        self.env.restore(snap)
        self.trials += 1
        self.last_gain = np.asarray(gains, dtype=np.float64)
        self.trial_seconds += time.perf_counter() - t0
        return bool(_clear_gain(self.last_gain, self.significance))

    def act(self, observation: Observation, mask: np.ndarray) -> Action:
        if self.decisions % self.every == 0:
            self._follow = self.trial(observation, mask)
        self.decisions += 1
        if self._follow:
            if not self.base.stateless:  # its shadow follows the real episode
                self.base.act(observation, mask)
            self.trusted += 1
            return self.policy.act(observation, mask)
        if not self.policy.stateless:
            self.policy.act(observation, mask)
        return self.base.act(observation, mask)
