"""Iteration latency from Splitwise's measured performance model.

The shipped ``splitwise_perf_model.csv`` (splitwise-sim's ``data/perf_model.csv``, MIT) holds
1,260 profiling runs of ``llama2-70b`` (tensor parallelism 2, 4, 8) and ``bloom-176b`` (8) on
``a100-80gb``, ``h100-80gb`` and ``h100-80gb-pcap`` DGX machines, 5 repetitions per point. Units,
checked against the file: ``prompt_time`` is the prefill time in **milliseconds**,
``token_time`` the time of one decode iteration in **milliseconds**, ``e2e_time`` in ms and
``e2e_time ~= prompt_time + token_size x token_time`` (within a few percent). This module
returns **seconds**.

For each (model, hardware, tensor parallelism):

- ``prompt_time(batch_tokens)``: the median ``prompt_time`` of the rows grouped by
  ``batch_tokens = prompt_size x batch_size`` (as splitwise-sim groups them), linearly
  interpolated between those points;
- ``token_time(batch_size)``: the median ``token_time`` of the rows grouped by ``batch_size``
  (1, 2, 4, ..., 64), linearly interpolated. splitwise-sim feeds the number of tokens in the
  batch to a predictor fitted on ``prompt_size x batch_size``, which for a decode batch of b
  requests reads the curve at b prompt tokens (below its first point); here a decode iteration
  of b requests is read from the rows measured with batch size b, the quantity the profile
  varies.

Outside the measured range: below the first point the first value is kept (a tiny batch costs
what the smallest measured one does, weights are read once either way); above the last point the
curve continues linearly with the secant slope from the first to the last point, never
decreasing (the last segment alone is sometimes negative in the token table, e.g. h100 TP2:
52 ms at 32 -> 42 ms at 64). So every curve is exact at the measured medians, linear and
between its neighbours in between, and non-decreasing outside.

``compat="splitwise-sim"`` reads the table as splitwise-sim's ``DatabasePerformanceModel``
does instead (to reproduce its results): both curves are keyed by ``batch_tokens`` (the token
curve too, so a decode iteration of b requests reads it at b tokens, far below its first
measured point of 128 tokens: about 43 ms whatever the batch) and both are extrapolated
linearly from their first and last segments (scipy's ``interp1d(fill_value="extrapolate")``),
so prompts under the first point get less than its time.
"""

from __future__ import annotations

import csv
import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rlsched.errors import ConfigError, DatasetError

Key = tuple[str, str, int]
#: ways of reading the table: rlsched's (None) or a peer's, reproduced exactly
COMPAT = (None, "splitwise-sim")


@dataclass(frozen=True)
class Curve:
    """A piecewise-linear curve through measured points (x increasing), extended as described
    in the module docstring; ``__call__`` accepts scalars and arrays and returns seconds."""

    x: np.ndarray
    y: np.ndarray
    slope: float
    """Slope used above the last point (the default: the secant, >= 0)."""
    slope_below: float = 0.0
    """Slope used below the first point (the default: 0, the first value is kept)."""

    def __call__(self, v: float | np.ndarray) -> float | np.ndarray:
        vv = np.asarray(v, dtype=np.float64)
        out = np.interp(vv, self.x, self.y)
        out = np.where(vv > self.x[-1], self.y[-1] + self.slope * (vv - self.x[-1]), out)
        if self.slope_below:
            out = np.where(vv < self.x[0], self.y[0] + self.slope_below * (vv - self.x[0]), out)
        return float(out) if out.ndim == 0 else out

    @staticmethod
    def through(x: np.ndarray, y: np.ndarray) -> Curve:
        slope = 0.0
        if len(x) > 1:
            slope = max(0.0, float((y[-1] - y[0]) / (x[-1] - x[0])))
        return Curve(np.asarray(x, float), np.asarray(y, float), slope)

    @staticmethod
    def extrapolated(x: np.ndarray, y: np.ndarray) -> Curve:
        """scipy's ``interp1d(x, y, fill_value="extrapolate")``: the end segments continue."""
        x, y = np.asarray(x, float), np.asarray(y, float)
        if len(x) < 2:
            return Curve(x, y, 0.0)
        lo = float((y[1] - y[0]) / (x[1] - x[0]))
        hi = float((y[-1] - y[-2]) / (x[-1] - x[-2]))
        return Curve(x, y, hi, lo)


class PerfModel:
    """Prefill and decode iteration times per (model, hardware, tensor parallelism)."""

    def __init__(
        self,
        prompt: dict[Key, Curve],
        token: dict[Key, Curve],
        source: str = "",
        compat: str | None = None,
    ) -> None:
        self._prompt = prompt
        self._token = token
        self.source = source
        self.compat = compat
        self._memos: dict[Key, tuple[Callable[[int], float], Callable[[int], float]]] = {}

    # ------------------------------------------------------------------ loading
    @staticmethod
    def load(path: str | Path | None = None, compat: str | None = None) -> PerfModel:
        """The model of ``path`` (a CSV in splitwise-sim's ``perf_model.csv`` format), by default
        the shipped one; cached per path. ``compat="splitwise-sim"``: read as splitwise-sim
        does (module docstring)."""
        if compat not in COMPAT:
            raise ConfigError(f"compat must be None or 'splitwise-sim', got {compat!r}")
        if path is None:
            from importlib.resources import files

            path = str(files("rlsched.datasets").joinpath("llm", "splitwise_perf_model.csv"))
        return _load(str(Path(path).expanduser().absolute()), compat)

    def configurations(self) -> list[Key]:
        """The (model, hardware, tensor_parallel) combinations measured."""
        return sorted(self._prompt)

    def _curve(self, table: dict[Key, Curve], model: str, hardware: str, tp: int) -> Curve:
        try:
            return table[(model, hardware, int(tp))]
        except KeyError:
            known = ", ".join(f"{m}/{h}/TP{t}" for m, h, t in self.configurations())
            raise ConfigError(
                f"no performance data for model {model!r} on {hardware!r} with tensor "
                f"parallelism {tp} (measured: {known})"
            ) from None

    def has(self, model: str, hardware: str, tp: int) -> bool:
        return (model, hardware, int(tp)) in self._prompt

    # ------------------------------------------------------------------ queries
    def prompt_time(
        self, batch_tokens: float | np.ndarray, model: str, hardware: str, tp: int
    ) -> float | np.ndarray:
        """Seconds of one prefill iteration over ``batch_tokens`` prompt tokens."""
        return self._curve(self._prompt, model, hardware, tp)(batch_tokens)

    def token_time(
        self, batch_size: float | np.ndarray, model: str, hardware: str, tp: int
    ) -> float | np.ndarray:
        """Seconds of one decode iteration of ``batch_size`` requests (one token each)."""
        return self._curve(self._token, model, hardware, tp)(batch_size)

    def prompt_curve(self, model: str, hardware: str, tp: int) -> Curve:
        return self._curve(self._prompt, model, hardware, tp)

    def token_curve(self, model: str, hardware: str, tp: int) -> Curve:
        return self._curve(self._token, model, hardware, tp)

    def cached(self, model: str, hardware: str, tp: int) -> tuple[Callable, Callable]:
        """Memoised scalar ``(prompt_time, token_time)`` for one configuration (the simulator's
        hot path): each distinct batch is interpolated once, for every instance of that
        configuration (one pair per configuration and model file, not per instance: a new
        instance would otherwise interpolate afresh what the others already have)."""
        key = (model, hardware, int(tp))
        memos = self._memos
        if key not in memos:
            memos[key] = (_memo(self.prompt_curve(model, hardware, tp)),
                          _memo(self.token_curve(model, hardware, tp)))  # fmt: skip
        return memos[key]


def _memo(curve: Curve) -> Callable[[int], float]:
    @functools.cache
    def f(v: int) -> float:
        return float(curve(v))

    return f


REQUIRED = ("model", "hardware", "tensor_parallel", "prompt_size", "batch_size", "prompt_time")


@functools.cache
def _load(path: str, compat: str | None = None) -> PerfModel:
    p = Path(path)
    if not p.is_file():
        raise DatasetError("performance model file not found", source=p)
    groups_p: dict[Key, dict[float, list[float]]] = {}
    groups_t: dict[Key, dict[float, list[float]]] = {}
    with p.open(newline="", encoding="utf-8-sig") as fh:
        reader = csv.reader(fh)
        header = [h.strip() for h in next(reader, [])]
        for c in (*REQUIRED, "token_time"):
            if c not in header:
                raise DatasetError("missing column", source=p, line=1, field=c)
        idx = {c: header.index(c) for c in (*REQUIRED, "token_time")}
        for row in reader:
            if not row or not "".join(row).strip():
                continue
            line = reader.line_num
            vals: dict[str, float] = {}
            for c in ("tensor_parallel", "prompt_size", "batch_size", "prompt_time", "token_time"):
                try:
                    vals[c] = float(row[idx[c]])
                except (ValueError, IndexError):
                    raise DatasetError(
                        f"{row[idx[c]] if idx[c] < len(row) else ''!r} is not a number",
                        source=p,
                        line=line,
                        field=c,
                    ) from None
                if not np.isfinite(vals[c]) or vals[c] <= 0:
                    raise DatasetError(
                        f"{vals[c]:g} must be a positive number", source=p, line=line, field=c
                    )
            key = (
                row[idx["model"]].strip(),
                row[idx["hardware"]].strip(),
                int(vals["tensor_parallel"]),
            )
            bt = vals["prompt_size"] * vals["batch_size"]
            groups_p.setdefault(key, {}).setdefault(bt, []).append(vals["prompt_time"] / 1e3)
            # splitwise-sim keys the token curve by batch tokens too; rlsched by batch size
            tx = bt if compat == "splitwise-sim" else vals["batch_size"]
            groups_t.setdefault(key, {}).setdefault(tx, []).append(vals["token_time"] / 1e3)
    if not groups_p:
        raise DatasetError("no measurements", source=p, line=2)

    through = Curve.extrapolated if compat == "splitwise-sim" else Curve.through

    def curves(groups: dict[Key, dict[float, list[float]]]) -> dict[Key, Curve]:
        out = {}
        for key, g in groups.items():
            xs = np.array(sorted(g))
            ys = np.array([np.median(g[x]) for x in xs])
            out[key] = through(xs, ys)
        return out

    return PerfModel(curves(groups_p), curves(groups_t), source=str(p), compat=compat)
