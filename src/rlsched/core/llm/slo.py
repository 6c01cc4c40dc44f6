"""SLOs as slowdowns against an unloaded run (Splitwise's definition).

A request's **slowdown** in a metric is its value divided by the value it would have had alone
on an idle cluster of the start state's configuration (the "unloaded" run), computed per request
from the performance model (:func:`unloaded_latencies`):

- TTFT0 = ``prompt_time(prompt_tokens)`` on the prompt pool's hardware (the mixed pool's when
  there is no prompt pool): no queueing, a batch of one;
- decode0 = ``(output_tokens - 1) x token_time(1)`` on the token pool's hardware, plus the KV
  transfer of ``prompt_tokens + 1`` tokens when prefill and decode are on different pools;
- E2E0 = TTFT0 + decode0; TBT0 = decode0 / (output_tokens - 1).

Splitwise's limits (Table 4 of the paper) are the defaults: at P50 / P90 / P99, TTFT 2x / 3x /
6x, TBT and E2E 1.25x / 1.5x / 5x. Two readings are reported:

- **percentile checks** (Splitwise's): for each metric and percentile, the percentile of the
  slowdowns over all requests, dropped ones counting as infinitely slow, must not exceed the
  limit; ``slo_met`` is True when all nine hold. The percentile uses the inverted-CDF
  definition, so "P90 <= limit" is exactly "at least 90 % of requests are within the limit".
- **per-request attainment**: the fraction of requests (dropped = missed) whose TTFT, TBT and
  E2E slowdowns are all within the limits of one percentile level; ``slo_attainment`` uses
  ``SLOConfig.attainment_level`` (default P90: 3x / 1.5x / 1.5x); P50 and P99 are reported
  too.

A request of one output token has no inter-token time: its TBT is 0 and its TBT slowdown 1.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from rlsched.errors import ConfigError

METRICS = ("ttft", "tbt", "e2e")


#: :func:`percentile` sorts up to this many values in Python, more by numpy's partial sort
_SORTED_UP_TO = 64


def percentile(values: np.ndarray, q: float) -> float:
    """``np.percentile(values, q)`` (linear interpolation, NaN if any value is NaN), the same
    float, from the two order statistics it interpolates (a sort of a few values, a partial
    sort of more): a few times faster on the short windows a scaler reads at every decision
    (the RL state's P90 slowdowns, the latency-driven scalers). ``values`` must not be empty."""
    n = len(values)
    k = q / 100 * (n - 1)  # numpy's virtual index, computed in numpy's order
    lo = math.floor(k)
    hi = min(lo + 1, n - 1)
    if n <= _SORTED_UP_TO:  # a window's few values: sorted as Python floats, the same values
        s = values.tolist() if isinstance(values, np.ndarray) else [float(v) for v in values]
        if any(map(math.isnan, s)):
            return math.nan
        s.sort()
        a, b = s[lo], s[hi]
    else:
        if np.isnan(values).any():
            return math.nan
        part = np.partition(values, (lo, hi))
        a, b = float(part[lo]), float(part[hi])
    t, d = k - lo, b - a
    return b - d * (1 - t) if t >= 0.5 else a + d * t  # numpy's _lerp


@dataclass(frozen=True)
class SLOConfig:
    """Slowdown limits per metric at each percentile of :attr:`percentiles`."""

    ttft: tuple[float, ...] = (2.0, 3.0, 6.0)
    tbt: tuple[float, ...] = (1.25, 1.5, 5.0)
    e2e: tuple[float, ...] = (1.25, 1.5, 5.0)
    percentiles: tuple[float, ...] = (50.0, 90.0, 99.0)
    attainment_level: float = 90.0
    """The percentile whose limits define per-request attainment (``slo_attainment``)."""

    def __post_init__(self) -> None:
        n = len(self.percentiles)
        for m in METRICS:
            lim = tuple(float(x) for x in getattr(self, m))
            if len(lim) != n or any(not x > 0 for x in lim):
                raise ConfigError(f"SLO {m}: need {n} positive limits, got {lim}")
            object.__setattr__(self, m, lim)
        object.__setattr__(self, "percentiles", tuple(float(p) for p in self.percentiles))
        if any(not 0 < p <= 100 for p in self.percentiles):
            raise ConfigError(f"SLO percentiles must be in (0, 100], got {self.percentiles}")
        if float(self.attainment_level) not in self.percentiles:
            raise ConfigError(
                f"attainment_level {self.attainment_level} is not one of {self.percentiles}"
            )

    def limits(self, level: float) -> dict[str, float]:
        """``{metric: limit}`` at one percentile level."""
        i = self.percentiles.index(float(level))
        return {m: getattr(self, m)[i] for m in METRICS}

    # ------------------------------------------------------------------ evaluation
    def attained(self, slowdowns: dict[str, np.ndarray], level: float | None = None) -> np.ndarray:
        """Per request: all three slowdowns within the limits of ``level`` (default
        :attr:`attainment_level`); NaN or inf (dropped) never attains."""
        lim = self.limits(self.attainment_level if level is None else level)
        ok = np.ones(len(slowdowns["ttft"]), dtype=bool)
        for m in METRICS:
            ok &= slowdowns[m] <= lim[m]
        return ok

    def evaluate(self, slowdowns: dict[str, np.ndarray], dropped: int = 0) -> dict[str, object]:
        """Attainment at every level, the percentile checks and ``slo_met``; ``slowdowns`` holds
        the completed requests, ``dropped`` more requests count as infinitely slow."""
        n = len(slowdowns["ttft"]) + dropped
        out: dict[str, object] = {}
        if n == 0:
            out["slo_attainment"] = float("nan")
            for p in self.percentiles:
                out[f"slo_attainment_p{p:g}"] = float("nan")
            out["slo_met"] = False
            out["slo_checks"] = {}
            return out
        for p in self.percentiles:
            out[f"slo_attainment_p{p:g}"] = float(self.attained(slowdowns, p).sum()) / n
        out["slo_attainment"] = out[f"slo_attainment_p{self.attainment_level:g}"]
        checks: dict[str, dict[str, float | bool]] = {}
        for m in METRICS:
            sd = np.concatenate([slowdowns[m], np.full(dropped, np.inf)])
            # every level in one call: the same floats as one call each
            vs = np.percentile(sd, self.percentiles, method="inverted_cdf").tolist()
            for p, lim, v in zip(self.percentiles, getattr(self, m), vs, strict=True):
                checks[f"{m}_p{p:g}"] = {"slowdown": v, "limit": lim, "ok": bool(v <= lim)}
        out["slo_checks"] = checks
        out["slo_met"] = all(bool(c["ok"]) for c in checks.values())
        return out


def unloaded_latencies(
    prompt_tokens: np.ndarray,
    output_tokens: np.ndarray,
    prompt_time: Callable[[np.ndarray], Any],
    token_time_1: float,
    kv_transfer_s_per_token: float,
    kv_latency_s: float,
    disaggregated: bool,
) -> dict[str, np.ndarray]:
    """Per-request TTFT0, TBT0 and E2E0 alone on an idle cluster (see the module docstring).

    ``prompt_time`` maps an array of prompt token counts to seconds; ``token_time_1`` is one
    decode iteration of a batch of one.
    """
    p = np.asarray(prompt_tokens, dtype=np.float64)
    o = np.asarray(output_tokens, dtype=np.int64)
    ttft = np.asarray(prompt_time(p), dtype=np.float64)
    multi = o > 1
    xfer = ((p + 1) * kv_transfer_s_per_token + kv_latency_s) * multi if disaggregated else 0.0 * p
    decode = xfer + (o - 1) * token_time_1
    tbt = np.where(multi, decode / np.maximum(o - 1, 1), 0.0)
    return {"ttft": ttft, "tbt": tbt, "e2e": ttft + decode}


def slowdowns(
    measured: dict[str, np.ndarray], unloaded: dict[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """``measured / unloaded`` per metric; a zero unloaded TBT (one output token) gives 1."""
    out = {}
    for m in METRICS:
        u = unloaded[m]
        with np.errstate(divide="ignore", invalid="ignore"):
            out[m] = np.where(u > 0, measured[m] / np.where(u > 0, u, 1.0), 1.0)
    return out
