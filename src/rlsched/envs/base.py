"""What every rlsched env shares: its main metric, and snapshots of its full state.

Snapshots are what search needs: the clairvoyant oracle (and rollout teachers) call
``snapshot()`` once per decision and ``restore()`` once per candidate action. A snapshot is a
deep copy of the unwrapped env's attributes, random generators included, so after
``restore(s)`` the same actions give bit-identical observations, rewards, terminations and
infos. Attributes an env never mutates in place during an episode (spaces, the spec, the
dataset and arrays derived from it) are listed in ``snapshot_static`` and shared by reference
instead of copied: that is what keeps a snapshot cheap (benchmarks/bench_snapshot.py).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

Direction = Literal["higher", "lower"]

#: Attributes of every env that never change in place during an episode.
_COMMON_STATIC = ("action_space", "observation_space", "spec", "metadata", "render_mode")


@dataclass(frozen=True)
class EnvSnapshot:
    """An opaque copy of one env's state; restore it with ``env.restore(snapshot)`` (any number
    of times: restoring copies it again)."""

    env_type: type
    state: dict[str, Any]


class SnapshotMixin:
    """``snapshot()`` / ``restore()`` for an env whose state lives in its attributes."""

    #: Attributes shared (not copied) by snapshots: never mutated in place after they are set.
    snapshot_static: ClassVar[tuple[str, ...]] = ()
    #: The env's main metric (a key of ``info["metrics"]``, or ``"reward"``: the episode
    #: return) and whether a higher or a lower value is better. Verdicts use it.
    main_metric: ClassVar[str] = "reward"
    main_metric_direction: ClassVar[Direction] = "higher"

    def _static_memo(self, state: dict[str, Any]) -> dict[int, Any]:
        memo: dict[int, Any] = {}
        for name in (*_COMMON_STATIC, *self.snapshot_static):
            if name in state:
                memo[id(state[name])] = state[name]
        return memo

    def snapshot(self) -> EnvSnapshot:
        """A copy of the full simulator state (random generators included)."""
        state = {k: v for k, v in vars(self).items() if not isinstance(v, memoryview)}
        return EnvSnapshot(type(self), copy.deepcopy(state, self._static_memo(state)))

    def restore(self, snapshot: EnvSnapshot) -> None:
        """Put the env back into the state ``snapshot`` was taken in."""
        if snapshot.env_type is not type(self):
            raise TypeError(
                f"snapshot of {snapshot.env_type.__name__} given to {type(self).__name__}"
            )
        state = copy.deepcopy(snapshot.state, self._static_memo(snapshot.state))
        vars(self).update(state)
        self._after_restore()

    def _after_restore(self) -> None:
        """Rebuild what a snapshot does not copy (memoryviews of copied arrays)."""


def main_metric_of(env: Any) -> tuple[str, Direction]:
    """``(metric, direction)`` of an env (wrapped or not, or an env class)."""
    base = getattr(env, "unwrapped", env)
    return (
        str(getattr(base, "main_metric", "reward")),
        getattr(base, "main_metric_direction", "higher"),
    )


def episode_value(metric: str, reward: float, metrics: dict[str, float]) -> float:
    """The value of ``metric`` for one episode (``reward`` is the episode return)."""
    if metric == "reward":
        return float(reward)
    v = metrics.get(metric)
    return float("nan") if v is None else float(v)
