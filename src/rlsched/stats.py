"""Paired statistics for verdicts: does policy A beat reference B on the same episodes?

Every policy in :func:`rlsched.evaluate.compare` runs the same seeded episodes, so the natural
test is paired: the per-episode differences ``A - B`` of the env's main metric, their mean and a
95% bootstrap confidence interval (:func:`scipy.stats.bootstrap`, ``paired=True``, BCa, 10,000
resamples, seeded). The verdict is read off the interval alone: ``better`` when it excludes zero
on the good side of the metric, ``worse`` on the bad side, else ``no significant difference``.

Several training seeds of one learned policy aggregate as rliable does (Agarwal et al., 2021):
the interquartile mean (IQM) of the ``(seed, episode)`` differences and a stratified bootstrap
interval that resamples seeds within each episode. rliable itself does not import with the
pandas this project installs (its ``arch`` dependency breaks), so the same method is written
here with numpy and scipy.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

import numpy as np
from scipy import stats as sps

Verdict = Literal["better", "worse", "no significant difference"]
Direction = Literal["higher", "lower"]

#: Resamples of every bootstrap interval (the issue's floor: 10,000).
N_RESAMPLES = 10_000
#: Two values closer than this (relative to their scale) are a tie, not a win or a loss.
TIE_RTOL = 1e-9
MIN_EPISODES = 2


@dataclass(frozen=True)
class Paired:
    """A policy against the reference on the same episodes (``diff = policy - reference``)."""

    reference: str
    metric: str
    direction: Direction
    n: int
    mean_diff: float
    ci95: tuple[float, float]
    wins: int
    ties: int
    losses: int
    verdict: Verdict
    #: the mean difference as a percentage of the reference's mean (NaN when that is 0)
    pct_diff: float = float("nan")
    #: ``"paired bootstrap"`` (one seed) or ``"iqm stratified bootstrap"`` (several seeds)
    method: str = "paired bootstrap"

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Paired:
        """The inverse of :meth:`to_json` (a compare report's ``"paired"``)."""
        return cls(**{**data, "ci95": (float(data["ci95"][0]), float(data["ci95"][1]))})

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["ci95"] = [float(self.ci95[0]), float(self.ci95[1])]
        return out


def verdict(lo: float, hi: float, direction: Direction) -> Verdict:
    """``better`` / ``worse`` when the interval of ``policy - reference`` excludes zero."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return "no significant difference"
    if lo > 0 or hi < 0:
        good = (lo > 0) == (direction == "higher")
        return "better" if good else "worse"
    return "no significant difference"


def _outcomes(diff: np.ndarray, scale: float, direction: Direction) -> tuple[int, int, int]:
    tol = TIE_RTOL * max(scale, 1e-12)
    sign = 1.0 if direction == "higher" else -1.0
    s = sign * diff
    return int((s > tol).sum()), int((np.abs(s) <= tol).sum()), int((s < -tol).sum())


def _pct(mean_diff: float, ref_mean: float) -> float:
    return 100.0 * mean_diff / abs(ref_mean) if ref_mean != 0 else float("nan")


def bootstrap_mean_ci(
    diff: np.ndarray, seed: int = 0, n_resamples: int = N_RESAMPLES
) -> tuple[float, float]:
    """95% BCa bootstrap interval of ``mean(diff)`` (the one-sample form of a paired
    bootstrap: resampling episodes resamples both policies' values together). A constant
    ``diff`` has the zero-width interval ``[d, d]``; BCa falls back to the percentile method
    where its acceleration is undefined."""
    diff = np.asarray(diff, dtype=float)
    if diff.size < MIN_EPISODES:
        raise ValueError(f"a paired interval needs at least {MIN_EPISODES} episodes")
    if np.all(diff == diff[0]):
        return float(diff[0]), float(diff[0])
    for method in ("BCa", "percentile"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = sps.bootstrap(
                (diff,),
                np.mean,
                n_resamples=n_resamples,
                confidence_level=0.95,
                method=method,
                vectorized=True,
                rng=np.random.default_rng(seed),
            )
        lo, hi = float(res.confidence_interval.low), float(res.confidence_interval.high)
        if math.isfinite(lo) and math.isfinite(hi):
            return lo, hi
    return float("nan"), float("nan")


def paired(
    values: Sequence[float] | np.ndarray,
    reference_values: Sequence[float] | np.ndarray,
    *,
    direction: Direction,
    reference: str = "",
    metric: str = "",
    seed: int = 0,
    n_resamples: int = N_RESAMPLES,
) -> Paired:
    """Paired comparison of one policy's per-episode ``values`` with the reference's."""
    a = np.asarray(values, dtype=float)
    b = np.asarray(reference_values, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"paired values need equal 1-D shapes, got {a.shape} and {b.shape}")
    diff = a - b
    lo, hi = bootstrap_mean_ci(diff, seed, n_resamples)
    w, t, loss = _outcomes(diff, float(np.abs(b).mean()), direction)
    md = float(diff.mean())
    return Paired(
        reference, metric, direction, int(a.size), md, (lo, hi), w, t, loss,
        verdict(lo, hi, direction), _pct(md, float(b.mean())),
    )


def iqm(x: np.ndarray, axis: int | None = None) -> np.ndarray:
    """Interquartile mean: the mean of the middle 50% (scipy's 25% trimmed mean)."""
    return np.asarray(sps.trim_mean(x, 0.25, axis=axis))


def stratified_iqm_ci(
    diff: np.ndarray, seed: int = 0, n_resamples: int = N_RESAMPLES
) -> tuple[float, float, float]:
    """IQM of a ``(seeds, episodes)`` matrix and its 95% percentile stratified bootstrap
    interval: each resample draws seeds with replacement independently within every episode
    (rliable's ``StratifiedBootstrap`` with episodes as its tasks)."""
    d = np.asarray(diff, dtype=float)
    if d.ndim != 2:
        raise ValueError("stratified bootstrap needs a (seeds, episodes) matrix")
    runs, tasks = d.shape
    point = float(iqm(d.ravel()))
    if np.all(d == d.flat[0]):
        return point, point, point
    rng = np.random.default_rng(seed)
    out = np.empty(n_resamples)
    cols = np.arange(tasks)
    chunk = max(1, 2_000_000 // max(1, runs * tasks))
    for s in range(0, n_resamples, chunk):
        k = min(chunk, n_resamples - s)
        idx = rng.integers(0, runs, size=(k, runs, tasks))
        sample = d[idx, cols]  # (k, runs, tasks)
        out[s : s + k] = iqm(sample.reshape(k, -1), axis=1)
    lo, hi = np.percentile(out, [2.5, 97.5])
    return point, float(lo), float(hi)


def paired_seeds(
    values: np.ndarray,
    reference_values: Sequence[float] | np.ndarray,
    *,
    direction: Direction,
    reference: str = "",
    metric: str = "",
    seed: int = 0,
    n_resamples: int = N_RESAMPLES,
) -> Paired:
    """Several training seeds of one policy (``values``: ``(seeds, episodes)``) against one
    reference run on the same episodes: :func:`paired_matrix` with the reference repeated."""
    a = np.asarray(values, dtype=float)
    b = np.asarray(reference_values, dtype=float)
    if a.ndim != 2 or a.shape[1] != b.size:
        raise ValueError(f"seed values {a.shape} do not match {b.size} reference episodes")
    return paired_matrix(
        a, np.broadcast_to(b, a.shape), direction=direction, reference=reference,
        metric=metric, seed=seed, n_resamples=n_resamples,
    )


def paired_matrix(
    values: np.ndarray | Sequence[Sequence[float]],
    reference_values: np.ndarray | Sequence[Sequence[float]],
    *,
    direction: Direction,
    reference: str = "",
    metric: str = "",
    seed: int = 0,
    n_resamples: int = N_RESAMPLES,
) -> Paired:
    """Row ``i`` of ``values`` paired with row ``i`` of ``reference_values`` (one training seed
    each, on that seed's own episodes, as in a sweep): one row is :func:`paired`, several are
    aggregated with the IQM and a stratified bootstrap of the differences."""
    a = np.atleast_2d(np.asarray(values, dtype=float))
    b = np.atleast_2d(np.asarray(reference_values, dtype=float))
    if a.shape != b.shape:
        raise ValueError(f"paired values need equal shapes, got {a.shape} and {b.shape}")
    if a.shape[0] == 1:
        return paired(a[0], b[0], direction=direction, reference=reference, metric=metric,
                      seed=seed, n_resamples=n_resamples)
    if a.shape[1] < MIN_EPISODES:
        raise ValueError(f"a paired interval needs at least {MIN_EPISODES} episodes")
    diff = a - b
    point, lo, hi = stratified_iqm_ci(diff, seed, n_resamples)
    w, t, loss = _outcomes(diff.ravel(), float(np.abs(b).mean()), direction)
    return Paired(
        reference, metric, direction, int(diff.size), point, (lo, hi), w, t, loss,
        verdict(lo, hi, direction), _pct(point, float(b.mean())), "iqm stratified bootstrap",
    )


def headline(name: str, p: Paired, unit: str = "") -> str:
    """One sentence generated from the verdict (never hand-phrased)."""
    lo, hi = p.ci95
    u = f" {unit}" if unit else ""
    stat = "IQM difference" if p.method.startswith("iqm") else "mean difference"
    rng = f"{stat} {p.mean_diff:+.4g}{u} ({lo:+.4g} to {hi:+.4g}, 95% CI; {p.n} pairs; "
    rng += f"wins/ties/losses {p.wins}/{p.ties}/{p.losses})"
    if p.verdict == "no significant difference":
        return f"{name}: no significant difference from {p.reference} on {p.metric}: {rng}"
    return f"{name} is significantly {p.verdict} than {p.reference} on {p.metric}: {rng}"
