"""The exploration schedule of :class:`~rlsched.agents.masked_dqn.MaskedDQN`: epsilon,
piecewise linear over training progress."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

import numpy as np

#: VMAgent's breakpoints (fractions of training) and epsilon values.

DEFAULT_EPSILON_POINTS = (0.0, 0.25, 0.9, 1.0)
DEFAULT_EPSILON_VALUES = (0.9, 0.5, 0.2, 0.2)


def piecewise_linear(progress: float, points: Sequence[float], values: Sequence[float]) -> float:
    """The value at ``progress`` of the polyline through ``(points[i], values[i])``.

    ``points`` are non-decreasing; before the first point the first value holds, after the last
    the last. VMAgent's ``linear_decay(x, [0, .25 M, .9 M, M], [.9, .5, .2, .2])`` is
    ``piecewise_linear(x / M, (0, .25, .9, 1), (.9, .5, .2, .2))``.
    """
    if len(points) != len(values) or not points:
        raise ValueError("piecewise_linear needs as many points as values, at least one")
    if any(b < a for a, b in pairwise(points)):
        raise ValueError(f"piecewise_linear points must be non-decreasing: {list(points)}")
    return float(np.interp(progress, np.asarray(points, float), np.asarray(values, float)))


class EpsilonSchedule:
    """SB3 schedule (``progress_remaining`` from 1 to 0) of :func:`piecewise_linear` over
    training progress ``1 - progress_remaining``. A class, so models pickle by reference."""

    def __init__(self, points: Sequence[float], values: Sequence[float]) -> None:
        piecewise_linear(0.0, points, values)  # validate
        self.points, self.values = tuple(map(float, points)), tuple(map(float, values))

    def __call__(self, progress_remaining: float) -> float:
        return piecewise_linear(1.0 - progress_remaining, self.points, self.values)

    def __repr__(self) -> str:
        return f"EpsilonSchedule(points={self.points}, values={self.values})"


# ----------------------------------------------------------------------------- masked choice
