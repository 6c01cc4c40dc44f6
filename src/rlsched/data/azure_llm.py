"""LLM inference request traces: ``azure-llm:code``, ``azure-llm:conv``, ``azure-llm:PATH``.

Two CSV formats, recognised by their header:

- the Azure LLM inference trace 2023 (``TIMESTAMP,ContextTokens,GeneratedTokens``; timestamps
  like ``2023-11-16 18:17:03.9799600``), shipped for the ``code`` (8,819 requests) and ``conv``
  (19,366 requests) services, one hour each;
- Splitwise's trace format (``request_id,request_type,application_id,arrival_timestamp,
  batch_size,prompt_size,token_size``; arrival in seconds; ``request_type`` must be 2, a
  generative LLM request). A row with ``batch_size`` b > 1 becomes b identical requests at the
  same time; ``application_id`` is not used (one application).

Arrival times become seconds from the first request; rows are sorted stably by arrival. Output
tokens count the first token (which the prefill produces). Malformed input raises
:class:`~rlsched.errors.DatasetError` naming file, line and field.

Parameters (``azure-llm:conv?rate_scale=2&poisson=1&seed=3&duration=600``), applied in this
order: ``start`` and ``end`` keep the requests recorded in ``[start, end)`` seconds from the
trace's first arrival (a time split: ``azure-llm:code?end=1800`` and ``?start=1800`` share no
request; :mod:`rlsched.splits` knows it), ``poisson=1`` re-draws arrivals as a Poisson
process of the trace's mean rate (seeded by ``seed``; sizes keep their order), ``rate_scale``
divides arrival times (2 = twice the rate), ``duration`` keeps the requests arriving in the
first ``duration`` seconds of the result.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from rlsched.core.llm.trace import AZURE_COLUMNS, SPLITWISE_COLUMNS, LLMRequests, transform
from rlsched.data._util import (
    abs_path,
    existing_file,
    float_param,
    int_param,
    read_rows,
    shipped,
)
from rlsched.data.dataset import Dataset
from rlsched.data.registry import load_dataset, register
from rlsched.errors import DatasetError

SHIPPED = {
    "code": "AzureLLMInferenceTrace_code.csv",
    "conv": "AzureLLMInferenceTrace_conv.csv",
}
LICENSE = (
    "CC-BY-4.0 (Azure LLM inference trace 2023, Microsoft; cite Patel et al., Splitwise, ISCA 2024)"
)
REAL_FIELDS_AZURE = {
    "arrival": "TIMESTAMP (s from the first request)",
    "prompt_tokens": "ContextTokens",
    "output_tokens": "GeneratedTokens",
}
REAL_FIELDS_SPLITWISE = {
    "arrival": "arrival_timestamp (s)",
    "prompt_tokens": "prompt_size",
    "output_tokens": "token_size",
}
LLM_REQUEST_TYPE = 2


def _read_rows(path: Path) -> tuple[list[str], list[list[str]], list[int]]:
    rows, lines = read_rows(path)
    if not rows:
        raise DatasetError("empty file, expected a CSV header", source=path, line=1)
    header = [c.strip() for c in rows[0]]
    return header, rows[1:], lines[1:]


def sniff(header: list[str], path: Path) -> str:
    """``azure`` or ``splitwise`` from a header row."""
    cols = set(header)
    if set(AZURE_COLUMNS) <= cols:
        return "azure"
    if set(SPLITWISE_COLUMNS) <= cols:
        return "splitwise"
    raise DatasetError(
        f"unrecognised header {','.join(header)[:120]!r}: expected the Azure LLM trace "
        f"({','.join(AZURE_COLUMNS)}) or Splitwise's ({','.join(SPLITWISE_COLUMNS)})",
        source=path,
        line=1,
    )


def _column(
    path: Path, header: list[str], rows: list[list[str]], lines: list[int], name: str
) -> list[str]:
    i = header.index(name)
    for row, line in zip(rows, lines, strict=True):
        if len(row) <= i:
            raise DatasetError(
                f"row has {len(row)} cells, header has {len(header)}",
                source=path,
                line=line,
                field=name,
            )
    return [r[i].strip() for r in rows]


def _numbers(path: Path, cells: list[str], lines: list[int], field: str) -> np.ndarray:
    try:
        v = np.asarray(cells, dtype=np.str_).astype(np.float64)
    except ValueError:
        v = None
    if v is not None and np.isfinite(v).all():
        return v
    for c, line in zip(cells, lines, strict=True):
        try:
            x = float(c)
        except ValueError:
            what = "empty value" if not c else f"{c!r} is not a number"
            raise DatasetError(what, source=path, line=line, field=field) from None
        if not np.isfinite(x):
            raise DatasetError(f"{c!r} is not finite", source=path, line=line, field=field)
    raise AssertionError("unreachable")


def _counts(
    path: Path, cells: list[str], lines: list[int], field: str, minimum: int = 1
) -> np.ndarray:
    """Integer cells >= ``minimum`` (``12.0`` is accepted as 12)."""
    v = _numbers(path, cells, lines, field)
    bad = (v != np.round(v)) | (v < minimum)
    if bad.any():
        i = int(np.argmax(bad))
        what = "an integer" if v[i] != np.round(v[i]) else f"an integer >= {minimum}"
        raise DatasetError(f"{cells[i]!r} is not {what}", source=path, line=lines[i], field=field)
    return v.astype(np.int64)


def _timestamps(path: Path, cells: list[str], lines: list[int]) -> np.ndarray:
    """Seconds from the earliest timestamp."""
    try:
        t = np.asarray(cells, dtype=np.str_).astype("datetime64[ns]")
        ok = not np.isnat(t).any()
    except ValueError:
        ok = False
    if not ok:
        for c, line in zip(cells, lines, strict=True):
            try:
                if np.isnat(np.datetime64(c, "ns")):
                    raise ValueError
            except ValueError:
                raise DatasetError(
                    f"{c!r} is not a timestamp like 2023-11-16 18:17:03.9799600",
                    source=path,
                    line=line,
                    field="TIMESTAMP",
                ) from None
        raise AssertionError("unreachable")
    ns = t.astype(np.int64)
    return (ns - ns.min()).astype(np.float64) / 1e9


def read_llm_trace(path: str | Path) -> tuple[LLMRequests, str]:
    """Parse one trace file; returns the requests and the format (``azure`` / ``splitwise``)."""
    p = existing_file(path, "LLM request trace")
    header, rows, lines = _read_rows(p)
    fmt = sniff(header, p)
    if not rows:
        raise DatasetError("no requests after the header", source=p, line=2)
    col = {c: _column(p, header, rows, lines, c) for c in header if c}
    if fmt == "azure":
        arrival = _timestamps(p, col["TIMESTAMP"], lines)
        prompt = _counts(p, col["ContextTokens"], lines, "ContextTokens")
        output = _counts(p, col["GeneratedTokens"], lines, "GeneratedTokens")
        rid = np.arange(len(rows), dtype=np.int64)
    else:
        kind = _counts(p, col["request_type"], lines, "request_type", minimum=0)
        if (kind != LLM_REQUEST_TYPE).any():
            i = int(np.argmax(kind != LLM_REQUEST_TYPE))
            raise DatasetError(
                f"request_type {kind[i]} is not {LLM_REQUEST_TYPE} (a generative LLM request)",
                source=p,
                line=lines[i],
                field="request_type",
            )
        arrival = _numbers(p, col["arrival_timestamp"], lines, "arrival_timestamp")
        if (arrival < 0).any():
            i = int(np.argmax(arrival < 0))
            raise DatasetError(
                f"{arrival[i]:g} is negative", source=p, line=lines[i], field="arrival_timestamp"
            )
        rid = _counts(p, col["request_id"], lines, "request_id", minimum=0)
        batch = _counts(p, col["batch_size"], lines, "batch_size")
        prompt = _counts(p, col["prompt_size"], lines, "prompt_size")
        output = _counts(p, col["token_size"], lines, "token_size")
        if (batch > 1).any():
            arrival, prompt, output, rid = (
                np.repeat(a, batch) for a in (arrival, prompt, output, rid)
            )
        arrival = arrival - arrival.min()
    return LLMRequests(arrival, prompt, output, rid), fmt


def _path_of(path: str) -> Path:
    return shipped("llm", SHIPPED[path]) if path in SHIPPED else Path(path).expanduser()


def load_azure_llm(path: str, params: dict[str, str]) -> Dataset:
    source = f"azure-llm:{path}"
    rate = float_param(params, "rate_scale", source, default=1.0)
    poisson = int_param(params, "poisson", source, minimum=0, default=0)
    if poisson not in (0, 1):
        raise DatasetError("parameter poisson must be 0 or 1", source=source, field="poisson")
    seed = int_param(params, "seed", source, minimum=0, default=0)
    duration = float_param(params, "duration", source, default=None)
    start = float_param(params, "start", source, positive=False, default=0.0)
    end = float_param(params, "end", source, default=None)
    assert rate is not None and seed is not None and start is not None
    if start < 0:
        raise DatasetError(f"parameter start={start:g} must be >= 0", source=source, field="start")
    if end is not None and not end > start:
        raise DatasetError(
            f"parameter end={end:g} must be above start={start:g}", source=source, field="end"
        )
    file = _path_of(path)
    reqs, fmt = read_llm_trace(file)
    base = reqs.summary()
    windowed = start > 0 or end is not None
    if windowed:  # a time window of the trace as recorded, before anything else
        kept = reqs.window(start, end)
        if len(kept) < 2:
            raise DatasetError(
                f"the window [{start:g}, {'end' if end is None else f'{end:g}'}) s holds "
                f"{len(kept)} requests of {len(reqs):,} (the trace spans {reqs.span:,.0f} s)",
                source=source,
                field="start",
            )
        reqs = kept
    reqs = transform(reqs, rate_scale=rate, poisson=bool(poisson), seed=seed, duration=duration)
    what = {"azure": "Azure LLM inference trace", "splitwise": "Splitwise-format trace"}[fmt]
    desc = (
        f"{what}: {len(reqs):,} LLM requests over {reqs.span:,.0f} s "
        f"(file: {base['requests']:,} over {base.get('span_s', 0.0):,.0f} s)"
    )
    if windowed:
        desc += f"; recorded seconds [{start:g}, {'end' if end is None else f'{end:g}'})"
    if rate != 1.0 or poisson or duration is not None:
        desc += f"; rate x{rate:g}" + (f", Poisson arrivals seed {seed}" if poisson else "")
        desc += f", first {duration:g} s" if duration is not None else ""
    derived = {}
    if poisson:
        derived["arrival"] = f"Poisson process with the trace's mean rate (seed {seed})"
    real = dict(REAL_FIELDS_AZURE if fmt == "azure" else REAL_FIELDS_SPLITWISE)
    if poisson:
        real.pop("arrival")
    return Dataset(
        name=source,
        workflows=[],
        description=desc,
        source=str(file),
        license=LICENSE if path in SHIPPED else "",
        real_fields=real,
        derived_fields=derived,
        trace=reqs,
    )


def _canonical(path: str) -> str:
    return path if path in SHIPPED else abs_path(path)


register(
    "azure-llm",
    load_azure_llm,
    "LLM inference requests (arrival, prompt tokens, output tokens) for the LLM serving "
    "simulator (rlsched.core.llm): the shipped Azure LLM inference traces 2023, azure-llm:conv "
    "(19,366 requests) and azure-llm:code (8,819), or a user's file in the Azure or Splitwise "
    "format (sniffed by header); ?start=0&end=1800 keep a window of the recorded trace (seconds "
    "from its first arrival: a time split), ?rate_scale=2&poisson=1&seed=0&duration=600 then "
    "scale the rate, re-draw Poisson arrivals, keep the first seconds",
    [
        "azure-llm:conv",
        "azure-llm:code?rate_scale=2",
        "azure-llm:/data/my_trace.csv",
        "azure-llm:./splitwise_trace.csv?rate_scale=2&poisson=1&seed=0",
        "azure-llm:code?end=1800",
    ],
    LICENSE,
    params={
        "rate_scale": "1", "poisson": "0", "seed": "0", "duration": None, "start": "0",
        "end": None,
    },
    canonical_path=_canonical,
)


def load_requests(
    name_or_path: str | Path,
    rate_scale: float = 1.0,
    poisson: bool = False,
    seed: int = 0,
    duration: float | None = None,
) -> LLMRequests:
    """Requests of a dataset name (``azure-llm:conv``, ``azure-llm:code``,
    ``azure-llm:PATH?rate_scale=2``), of a bare ``code`` / ``conv``, or of a trace file path.

    The keyword arguments are applied on top of the name's own parameters, in the loader's
    order: Poisson resampling (seeded), then rate scaling, then the ``duration`` cut (seconds of
    the scaled trace); the result starts at time 0.
    """
    s = str(name_or_path).strip()
    p = Path(s).expanduser()
    if ":" not in s or (p.is_file() and not s.lower().startswith("azure-llm:")):
        s = f"azure-llm:{p.absolute() if p.is_file() else s}"
    ds = load_dataset(s)
    reqs = ds.trace
    if not isinstance(reqs, LLMRequests):
        raise DatasetError(
            f"dataset {ds.name!r} holds {ds.kind}, not LLM requests (use azure-llm:...)",
            source=s,
        )
    return transform(reqs, rate_scale=rate_scale, poisson=poisson, seed=seed, duration=duration)
