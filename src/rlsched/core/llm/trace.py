"""LLM inference requests: arrival time, prompt tokens, output tokens (numpy only).

:class:`LLMRequests` is the replayable trace the serving simulator consumes: one row per
request, sorted by arrival, times in seconds from the first arrival. The data layer
(:mod:`rlsched.data.azure_llm`) parses the Azure LLM inference trace
(``TIMESTAMP,ContextTokens,GeneratedTokens``) and Splitwise's trace format
(``request_id,request_type,application_id,arrival_timestamp,batch_size,prompt_size,token_size``)
into it (:func:`rlsched.data.azure_llm.load_requests` loads a dataset name or a file).

Transforms return new traces and never touch the arrays of the one they start from (datasets are
cached and shared):

- :meth:`LLMRequests.resample_poisson`: arrivals replaced by a seeded Poisson process with the
  trace's mean rate (``n`` arrivals over the same span); prompt and output sizes keep their order.
- :meth:`LLMRequests.scale_rate`: arrival times divided by ``rate_scale`` (2 = twice the rate,
  every inter-arrival time halved).
- :meth:`LLMRequests.head`: the requests arriving in the first ``duration`` seconds.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from rlsched.core.columns import coerce_columns

#: Column names of Splitwise's trace format, in order (the format :meth:`write_csv` writes).
SPLITWISE_COLUMNS = (
    "request_id",
    "request_type",
    "application_id",
    "arrival_timestamp",
    "batch_size",
    "prompt_size",
    "token_size",
)
#: Column names of the Azure LLM inference trace.
AZURE_COLUMNS = ("TIMESTAMP", "ContextTokens", "GeneratedTokens")


@dataclass(frozen=True)
class LLMRequests:
    """Requests as columns: ``arrival`` float64 seconds (the first at 0 unless cut or built so),
    ``prompt_tokens`` and ``output_tokens`` int64 (both >= 1; the first output token comes out
    of the prefill), ``request_id`` int64.

    Build from arrays (converted to those dtypes and sorted stably by arrival). Treat the arrays
    as read-only.
    """

    arrival: np.ndarray
    prompt_tokens: np.ndarray
    output_tokens: np.ndarray
    request_id: np.ndarray
    kind: ClassVar[str] = "llm-requests"

    def __post_init__(self) -> None:
        cols = {
            "arrival": np.float64,
            "prompt_tokens": np.int64,
            "output_tokens": np.int64,
            "request_id": np.int64,
        }
        n = coerce_columns(self, cols)
        if n and np.any(np.diff(self.arrival) < 0):
            order = np.argsort(self.arrival, kind="stable")
            for name in cols:
                object.__setattr__(self, name, getattr(self, name)[order])
        if n and (self.prompt_tokens.min() < 1 or self.output_tokens.min() < 1):
            raise ValueError("prompt_tokens and output_tokens must be >= 1")

    @staticmethod
    def from_arrays(
        arrival: Any, prompt_tokens: Any, output_tokens: Any, request_id: Any = None
    ) -> LLMRequests:
        """From sequences; ``request_id`` defaults to 0..n-1 in the given order."""
        arrival = np.asarray(arrival, dtype=np.float64)
        if request_id is None:
            request_id = np.arange(len(arrival))
        return LLMRequests(arrival, prompt_tokens, output_tokens, request_id)

    def __len__(self) -> int:
        return int(self.arrival.shape[0])

    @property
    def span(self) -> float:
        """Seconds from the first to the last arrival."""
        return float(self.arrival[-1] - self.arrival[0]) if len(self) > 1 else 0.0

    # ------------------------------------------------------------------ transforms
    def scale_rate(self, rate_scale: float) -> LLMRequests:
        """Arrival times divided by ``rate_scale`` (> 0): 2 doubles the request rate."""
        if not rate_scale > 0 or not np.isfinite(rate_scale):
            raise ValueError(f"rate_scale must be a positive number, got {rate_scale}")
        if rate_scale == 1.0:
            return self
        return LLMRequests(
            self.arrival / rate_scale, self.prompt_tokens, self.output_tokens, self.request_id
        )

    def scale_sizes(self, prompt_scale: float = 1.0, output_scale: float = 1.0) -> LLMRequests:
        """Every request's prompt and output tokens multiplied (rounded, at least 1): another
        request mix at the same arrivals (``prompt_scale=2``: prompts twice as long)."""
        for name, v in (("prompt_scale", prompt_scale), ("output_scale", output_scale)):
            if not v > 0 or not np.isfinite(v):
                raise ValueError(f"{name} must be a positive number, got {v}")
        if prompt_scale == 1.0 and output_scale == 1.0:
            return self

        def scaled(x: np.ndarray, f: float) -> np.ndarray:
            return x if f == 1.0 else np.maximum(1, np.rint(x * f)).astype(np.int64)

        return LLMRequests(
            self.arrival,
            scaled(self.prompt_tokens, prompt_scale),
            scaled(self.output_tokens, output_scale),
            self.request_id,
        )

    def resample_poisson(self, seed: int = 0) -> LLMRequests:
        """Arrivals re-drawn as a Poisson process with the trace's mean rate.

        ``n`` arrivals, the first at the trace's first arrival, exponential gaps with mean
        ``span / (n - 1)`` (``numpy.random.default_rng(seed)``); the i-th request keeps its sizes.
        """
        n = len(self)
        if n < 2:
            return self
        rng = np.random.default_rng(seed)
        gaps = rng.exponential(self.span / (n - 1), n - 1)
        arrival = self.arrival[0] + np.concatenate([[0.0], np.cumsum(gaps)])
        return LLMRequests(arrival, self.prompt_tokens, self.output_tokens, self.request_id)

    def resample_bursty(
        self, seed: int = 0, sigma: float = 0.75, window: float = 30.0
    ) -> LLMRequests:
        """Arrivals re-drawn as a Cox process: the trace's mean rate times a log-normal factor
        ``exp(sigma x Z - sigma^2 / 2)`` per ``window`` seconds (``Z`` standard normal, one per
        window), so that some windows get bursts and others lulls.

        :meth:`resample_poisson`'s arrivals (the same ``seed``) are warped through the inverse
        of the cumulative rate, scaled to the same span: ``n`` arrivals, the first and the span
        kept, so the mean rate is the trace's; the i-th request keeps its sizes.
        """
        if not sigma >= 0 or not window > 0:
            raise ValueError(f"burst sigma must be >= 0 and window > 0, got {sigma}, {window}")
        base = self.resample_poisson(seed)
        n = len(base)
        if n < 2 or sigma == 0:
            return base
        rng = np.random.default_rng([seed, 1])  # apart from the Poisson draws of the same seed
        t0, span = base.arrival[0], base.arrival[-1] - base.arrival[0]
        k = max(1, int(np.ceil(span / window)))
        factor = np.exp(sigma * rng.standard_normal(k) - sigma**2 / 2)
        edges = np.linspace(0.0, span, k + 1)
        cum = np.concatenate([[0.0], np.cumsum(factor)])
        cum *= span / cum[-1]  # the cumulative rate, in the time of a constant rate
        arrival = t0 + np.interp(base.arrival - t0, cum, edges)
        return LLMRequests(arrival, base.prompt_tokens, base.output_tokens, base.request_id)

    def head(self, duration: float) -> LLMRequests:
        """Requests arriving before ``duration`` seconds after the first arrival."""
        return self.window(0.0, duration)

    def window(self, start: float, end: float | None = None) -> LLMRequests:
        """Requests arriving in ``[start, end)`` seconds after the first arrival (None: to the
        last); the whole trace is returned as it is."""
        if not (n := len(self)):
            return self
        t0 = self.arrival[0]
        i0 = int(np.searchsorted(self.arrival, t0 + start, side="left"))
        i1 = n if end is None else int(np.searchsorted(self.arrival, t0 + end, side="left"))
        return self if (i0, i1) == (0, n) else self.take(slice(i0, i1))

    def take(self, index: Any) -> LLMRequests:
        """A subset of the rows (index, slice or boolean mask)."""
        return LLMRequests(
            self.arrival[index],
            self.prompt_tokens[index],
            self.output_tokens[index],
            self.request_id[index],
        )

    def shifted_to_zero(self) -> LLMRequests:
        """The same trace with the first arrival at time 0."""
        if not len(self) or self.arrival[0] == 0.0:
            return self
        return LLMRequests(
            self.arrival - self.arrival[0], self.prompt_tokens, self.output_tokens, self.request_id
        )

    # ------------------------------------------------------------------ I/O and facts
    def write_csv(self, path: str | Path, fmt: str = "splitwise") -> Path:
        """Write the trace in Splitwise's format (``fmt="splitwise"``, times in seconds) or the
        Azure format (``fmt="azure"``, timestamps from 2023-11-16 00:00:00)."""
        p = Path(path)
        if fmt == "splitwise":
            lines = [",".join(SPLITWISE_COLUMNS)]
            lines += [
                f"{rid},2,0,{t!r},1,{pt},{ot}"
                for rid, t, pt, ot in zip(
                    self.request_id.tolist(),
                    self.arrival.tolist(),
                    self.prompt_tokens.tolist(),
                    self.output_tokens.tolist(),
                    strict=True,
                )
            ]
        elif fmt == "azure":
            base = np.datetime64("2023-11-16T00:00:00", "ns")
            stamps = base + np.round(self.arrival * 1e9).astype("timedelta64[ns]")
            lines = [",".join(AZURE_COLUMNS)]
            lines += [
                f"{str(s).replace('T', ' ')[:27]},{pt},{ot}"
                for s, pt, ot in zip(
                    stamps, self.prompt_tokens.tolist(), self.output_tokens.tolist(), strict=True
                )
            ]
        else:
            raise ValueError(f"fmt must be 'splitwise' or 'azure', got {fmt!r}")
        p.write_text("\n".join(lines) + "\n")
        return p

    def summary(self) -> dict[str, object]:
        """Facts for ``rlsched datasets show``."""
        n = len(self)
        out: dict[str, object] = {"requests": n}
        if not n:
            return out
        span = self.span
        out.update(
            {
                "span_s": span,
                "rate_per_s": (n - 1) / span if span > 0 else float("inf"),
                "prompt_tokens_mean": float(self.prompt_tokens.mean()),
                "prompt_tokens_p50": float(np.median(self.prompt_tokens)),
                "prompt_tokens_max": int(self.prompt_tokens.max()),
                "output_tokens_mean": float(self.output_tokens.mean()),
                "output_tokens_p50": float(np.median(self.output_tokens)),
                "output_tokens_max": int(self.output_tokens.max()),
            }
        )
        return out


def transform(
    reqs: LLMRequests,
    *,
    rate_scale: float = 1.0,
    poisson: bool = False,
    seed: int = 0,
    duration: float | None = None,
) -> LLMRequests:
    """Poisson resampling, rate scaling, ``duration`` cut, first arrival moved to 0."""
    if poisson:
        reqs = reqs.resample_poisson(seed)
    reqs = reqs.scale_rate(rate_scale).shifted_to_zero()
    if duration is not None:
        reqs = reqs.head(duration)
    return reqs
