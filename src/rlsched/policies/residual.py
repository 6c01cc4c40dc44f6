"""Residual policies for continuous actions: a heuristic's action plus a learned correction.

A model trained with ``residual_policy: NAME`` (:class:`rlsched.train.config.TrainConfig`) never
acts alone: the env it trains in is wrapped in :class:`ResidualAction`, which plays::

    action = clip(base(observation) + scale * clip(output, *range), low, high)

where ``base`` is the env's heuristic ``NAME`` (e.g. LLMAutoscaling's ``hpa``) acting on the same
state, ``output`` the network's action in ``[low, high]`` and ``range`` the part of it the
correction may use (``residual_range``: ``[-1, 0]`` only ever lowers the heuristic's action,
e.g. holds fewer LLM instances than HPA would, never more; each bound may also be one value per
action dimension, ``[[-1, -1], [1, 0]]``: LLMAutoscaling's prompt pool both ways, its token
pool only down). The trainer starts the actor's
last layer at zero, so the untrained model *is* the heuristic and PPO learns only where to
depart from it (residual RL: Johannink et al., 2019; Silver et al., 2018). The model folder
records the base, the scale and the range (``meta.json`` ``residual``), and ``learned:PATH``
builds a :class:`ResidualPolicy` from them in any comparison, evaluation or rollout.

This is the continuous-action sibling of the node-scoring prior (``node_prior_key``): there
the heuristic's score is a feature the network adds to, here its action.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from rlsched.errors import PolicyError
from rlsched.policies.base import Action, Observation, Policy


def box_space(env: Any, what: str) -> spaces.Box:
    """The env's Box action space; a :class:`PolicyError` naming ``what`` for any other."""
    space = env.action_space
    if not isinstance(space, spaces.Box):
        raise PolicyError(
            f"{what}: a residual adds to a heuristic's continuous action; this env's action "
            f"space is {space} (Box only: for node choices use node_prior_key)"
        )
    return space


#: the default bounds of the model's output: the whole ``[-1, 1]`` of a PPO Box action
FULL_RANGE = (-1.0, 1.0)

#: ``(low, high)``: each a number (every action dimension) or one number per dimension
Bounds = tuple[float | Sequence[float], float | Sequence[float]]


def range_error(bounds: Any) -> str | None:
    """Why ``bounds`` is not a residual range (None when it is): ``[low, high]``, each a number
    or a list of numbers of one length, with ``-1 <= low <= 0 <= high <= 1`` and ``low < high``
    in every dimension (0 is the heuristic itself, so every range must hold it)."""
    try:
        lo_raw, hi_raw = bounds
        lo, hi = np.broadcast_arrays(
            np.asarray(lo_raw, dtype=np.float64), np.asarray(hi_raw, dtype=np.float64)
        )
    except (TypeError, ValueError):
        return f"must be [low, high] (numbers, or lists of one length), got {bounds!r}"
    if lo.ndim > 1 or not (
        np.all(lo >= -1.0) and np.all(lo <= 0.0) and np.all(hi >= 0.0) and np.all(hi <= 1.0)
    ):
        return (
            f"must be [low, high] with -1 <= low <= 0 <= high <= 1 (0 is the heuristic "
            f"itself), got {bounds!r}"
        )
    if np.any(lo >= hi):
        return f"needs low < high in every dimension (0 is the heuristic itself), got {bounds!r}"
    return None


def _bound_arrays(space: spaces.Box, bounds: Bounds, what: str) -> tuple[Any, Any]:
    why = range_error(bounds)
    if why is None:
        lo, hi = (np.asarray(b, dtype=np.float64) for b in bounds)
        n = max(lo.size, hi.size)
        if n not in (1, space.shape[-1]):
            why = f"has {n} values per bound for {space.shape[-1]} dimensions"
    if why is not None:
        raise PolicyError(f"{what}: residual range {why}")
    return lo, hi


def hold_error(hold: Any) -> str | None:
    """Why ``hold`` is not a residual hold (None when it is): an integer >= 1."""
    if isinstance(hold, int | np.integer) and not isinstance(hold, bool) and hold >= 1:
        return None
    return f"must be an integer >= 1, got {hold!r}"


#: the gate's bounds: a correction that lowers the heuristic's action counts only while the
#: feature is at least ``lower_at_least`` and below ``lower_below``; one that raises it, likewise
GATE_BOUNDS = ("lower_at_least", "lower_below", "raise_at_least", "raise_below")


def gate_error(gate: Any) -> str | None:
    """Why ``gate`` is not a residual gate (None when it is, or when it is None):
    ``{"feature": NAME, BOUND: x, ...}`` with at least one of :data:`GATE_BOUNDS` (a missing one
    leaves that side ungated); ``feature`` may also be a list, one name per action dimension."""
    if gate is None:
        return None
    feature = gate.get("feature") if isinstance(gate, dict) else None
    if not (
        isinstance(feature, str)
        or (isinstance(feature, list) and feature and all(isinstance(f, str) for f in feature))
    ):
        return f'must be {{"feature": NAME or [NAME per dimension], BOUND: x, ...}}, got {gate!r}'
    assert isinstance(gate, dict)
    extra = set(gate) - {"feature", *GATE_BOUNDS}
    if extra:
        return f"has unknown keys {sorted(extra)} (known: feature, {', '.join(GATE_BOUNDS)})"
    given = [gate[k] for k in GATE_BOUNDS if gate.get(k) is not None]
    if not given:
        return f"needs one of {', '.join(GATE_BOUNDS)}, got {gate!r}"

    def number(v: Any) -> bool:
        return isinstance(v, int | float) and not isinstance(v, bool)

    if not all(number(v) or (isinstance(v, list) and v and all(map(number, v))) for v in given):
        return f"{', '.join(GATE_BOUNDS)} must be numbers (or one per dimension), got {gate!r}"
    return None


def gate_index(env: Any, gate: dict[str, Any] | None, what: str) -> np.ndarray | None:
    """The index in the env's flat observation (``feature_names``) of the feature that gates
    each action dimension (one feature for all, or one per dimension)."""
    why = gate_error(gate)
    if why is not None:
        raise PolicyError(f"{what}: residual gate {why}")
    if gate is None:
        return None
    base = getattr(env, "unwrapped", env)
    names = list(getattr(base, "feature_names", None) or [])
    wanted = gate["feature"] if isinstance(gate["feature"], list) else [gate["feature"]]
    for name in wanted:
        if name not in names:
            known = f"; its features: {', '.join(names)}" if names else " (it names none)"
            raise PolicyError(
                f"{what}: residual gate feature {name!r} is not one of this env's "
                f"observation features{known}"
            )
    dims = int(np.prod(getattr(base.action_space, "shape", None) or (1,)))
    sizes = {"features": len(wanted)} | {
        k: len(gate[k]) for k in GATE_BOUNDS if isinstance(gate.get(k), list)
    }
    for key, n in sizes.items():
        if n not in (1, dims):
            raise PolicyError(
                f"{what}: residual gate names {n} {key} for {dims} action dimensions "
                "(one for all, or one per dimension)"
            )
    return np.array([names.index(n) for n in wanted], dtype=np.int64)


def _within(value: np.ndarray, at_least: Any, below: Any) -> np.ndarray:
    """Where ``at_least <= value < below`` (a bound None: no limit on that side)."""
    ok = np.ones_like(value, dtype=bool)
    if at_least is not None:
        ok = ok & (value >= at_least)
    if below is not None:
        ok = ok & (value < below)
    return ok


def range_json(bounds: tuple[Any, Any]) -> list[Any]:
    """``bounds`` as ``meta.json`` records them: ``[low, high]``, each a number or a list."""
    return [np.asarray(b, dtype=np.float64).tolist() for b in bounds]


def heuristic_base(base: Policy, what: str) -> Policy:
    """``base`` if it is a heuristic (what a residual corrects: cheap, and the same in training
    and in use); a :class:`PolicyError` naming ``what`` for a learned, search or oracle one."""
    if getattr(base, "category", "heuristic") != "heuristic":
        raise PolicyError(
            f"{what}: a residual corrects a heuristic, not {getattr(base, 'name', base)!r} "
            f"(category {base.category!r})"
        )
    return base


def _combine(
    space: spaces.Box, base: Any, scale: float, output: Any, bounds: tuple[Any, Any]
) -> np.ndarray:
    out = np.clip(np.asarray(output, dtype=np.float64), *bounds)
    a = np.asarray(base, dtype=np.float64) + scale * out
    return np.clip(a, space.low, space.high).astype(space.dtype)


def _mask(env: Any) -> np.ndarray:
    masks = getattr(env.unwrapped, "action_masks", None)
    return np.asarray(masks() if callable(masks) else np.ones(1, dtype=bool), dtype=bool)


class ResidualAction(gym.Wrapper):
    """Plays ``clip(base + scale * action)`` (module docstring); ``base`` is a heuristic
    :class:`~rlsched.policies.base.Policy` built on this env. It acts on the raw observation
    (inside any normalisation) and is reset with the env, so it keeps the state it keeps when
    it plays alone (HPA's stabilisation window, ...)."""

    def __init__(
        self,
        env: gym.Env,
        base: Policy,
        scale: float,
        bounds: Bounds = FULL_RANGE,
    ) -> None:
        super().__init__(env)
        what = f"residual over {getattr(base, 'name', base)!r}"
        self.box = box_space(env, what)
        self.base, self.scale = heuristic_base(base, what), float(scale)
        self.bounds = _bound_arrays(self.box, bounds, what)
        self._obs: Any = None

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        self.base.reset(kwargs.get("seed"))
        self._obs = obs
        return obs, info

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        base = self.base.act(self._obs, _mask(self.env))
        obs, reward, term, trunc, info = self.env.step(
            _combine(self.box, base, self.scale, action, self.bounds)
        )
        self._obs = obs
        return obs, reward, term, trunc, info


class ResidualPolicy(Policy):
    """A trained residual model (``learned``) over its heuristic (``base``), acting as it
    trained: ``clip(base.act + scale * learned.act)``."""

    category = "learned"

    def __init__(
        self,
        learned: Any,
        base: Policy,
        scale: float,
        env: Any,
        bounds: Bounds = FULL_RANGE,
        hold: int = 1,
        gate: dict[str, Any] | None = None,
    ) -> None:
        """``hold``: a dimension's correction counts only once the model has asked for one of
        the same sign ``hold`` decisions in a row (``meta.json`` ``residual.hold``, the
        config's ``residual_play_hold``); until then it plays the heuristic's action there.
        ``gate`` (``residual.gate``, ``residual_play_gate``): a correction that lowers the
        heuristic's action counts only while the observation's ``feature`` is at least
        ``lower_at_least`` and below ``lower_below``, one that raises it only while it is at
        least ``raise_at_least`` and below ``raise_below`` (LLMAutoscaling, ``slo_attainment``:
        hold fewer instances than HPA only while the last interval met its SLOs; a list of
        features, one per dimension: each pool gated by its own ``*_utilization``)."""
        self.learned, self.scale = learned, float(scale)
        self.base = heuristic_base(base, str(learned.name))
        self.box = box_space(env, str(learned.name))
        self.bounds = _bound_arrays(self.box, bounds, str(learned.name))
        self.name = str(learned.name)
        why = hold_error(hold)
        if why is not None:
            raise PolicyError(f"{self.name}: residual hold {why}")
        self.hold = int(hold)
        self._gate_at = gate_index(env, gate, self.name)
        self.gate = None if gate is None else dict(gate)
        self._gate_bounds = (
            None
            if gate is None
            else tuple(  # read once, not per decision
                None if gate.get(k) is None else np.asarray(gate[k], dtype=np.float64)
                for k in GATE_BOUNDS
            )
        )
        self._run = np.zeros(self.box.shape, dtype=np.int64)  # signed same-sign run lengths

    def reset(self, seed: int | None = None) -> None:
        self.base.reset(seed)
        self.learned.reset(seed)
        self._run = np.zeros_like(self._run)

    def act(self, observation: Observation, mask: np.ndarray) -> Action:
        base = self.base.act(observation, mask)
        out = self.learned.act(observation, mask)
        if self.hold > 1:  # the sign of the correction as played: its output within the range
            out = np.clip(np.asarray(out, dtype=np.float64), *self.bounds)
            sign = np.sign(out).astype(np.int64)
            same = (sign != 0) & (sign == np.sign(self._run))
            self._run = np.where(same, self._run + sign, sign)
            out = np.where(np.abs(self._run) >= self.hold, out, 0.0)
        if self.gate is not None:  # the range holds 0, so clipping keeps each sign: no clip here
            out = self._gated(np.asarray(out, dtype=np.float64), observation)
        return _combine(self.box, base, self.scale, out, self.bounds)

    def _gated(self, out: np.ndarray, observation: Observation) -> np.ndarray:
        """``out`` with the corrections the gate does not allow in this state set to 0."""
        assert self._gate_at is not None and self._gate_bounds is not None
        value = np.asarray(observation).reshape(-1)[self._gate_at].astype(np.float64)
        lo_min, lo_max, up_min, up_max = self._gate_bounds
        lower_ok, raise_ok = _within(value, lo_min, lo_max), _within(value, up_min, up_max)
        return np.where(out < 0, np.where(lower_ok, out, 0.0), np.where(raise_ok, out, 0.0))

    def __deepcopy__(self, memo: dict[int, Any]) -> ResidualPolicy:
        # rollouts copy a stateful base policy: the heuristic's state is copied, the network
        # (large, read-only) is shared
        out = copy.copy(self)
        out.base = copy.deepcopy(self.base, memo)
        out._run = self._run.copy()
        return out

    def describe(self) -> dict[str, Any]:
        return {
            **self.learned.describe(),
            "residual": {
                "policy": getattr(self.base, "name", str(self.base)),
                "scale": self.scale,
                "range": range_json(self.bounds),
                "hold": self.hold,
                **({} if self.gate is None else {"gate": self.gate}),
            },
        }
