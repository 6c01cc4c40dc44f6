"""Azure Functions traces: 2019 (per-minute counts) and 2021 (per invocation).

**2019** (``azure-functions:example``, ``azure-functions:DIR?day=1``). Three files joined on
``HashOwner, HashApp, HashFunction``: invocations per function and minute
(``HashOwner,HashApp,HashFunction,Trigger,1..1440``), duration percentiles in ms
(``Average``, ...), allocated-memory percentiles in MB (``AverageAllocatedMb``, ...). In the
full dataset memory is per *app* (``app_memory_percentiles`` has no ``HashFunction``), so we
join memory on owner+app then; the shipped example has it per function.

Each (function, minute) with a count > 0 becomes a one-task workflow submitted at
``(minute - 1) * 60`` s whose single instance serves ``count`` requests, each lasting the
function's average duration. Functions without a duration row are skipped (the model needs a
runtime); functions without a memory row get the core's memory and CPU defaults.

* memory: ``AverageAllocatedMb / 1000`` GB. rlsched uses decimal GB (1e9 bytes); if the trace's
  MB are MiB this understates memory by 4.9 %, well inside the spread of its percentiles.
* cpu: the trace has none. Like AWS Lambda, which gives one vCPU per 1,769 MB, we request
  ``MB / 1769`` cores, at least 0.1.

**2021** (``azure-functions-2021:200``, ``azure-functions-2021:PATH``): ``app,func,
end_timestamp,duration`` in seconds; one one-task workflow per invocation submitted at
``end_timestamp - duration``. The trace records neither CPU nor memory, so the core rules give
each invocation 1 core and the 128 MB memory floor.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from rlsched.core.workload import Task, Workflow
from rlsched.data._util import (
    RULES,
    CsvTable,
    abs_path,
    existing_file,
    int_param,
    req_float,
    shipped,
    to_float,
)
from rlsched.data.dataset import Dataset
from rlsched.data.registry import register
from rlsched.errors import DatasetError

MB_PER_CORE = 1769.0
"""AWS Lambda allocates CPU in proportion to memory: one full vCPU at 1,769 MB."""
MIN_CORES = 0.1
LICENSE_2019 = "MIT (vhive-serverless/invitro @ a1df629; Azure Functions 2019 trace format)"
LICENSE_2021 = "MIT (vhive-serverless/invitro @ a1df629; Azure Functions 2021 trace format)"

EXAMPLE_2019 = (
    "azure2019-example-invocations.csv",
    "azure2019-example-durations.csv",
    "azure2019-example-memory.csv",
)


def full_2019_files(directory: Path, day: int) -> tuple[Path, Path, Path]:
    """Names of day ``day`` in the full Azure Functions 2019 dataset."""
    d = f"d{day:02d}"
    return (
        directory / f"invocations_per_function_md.anon.{d}.csv",
        directory / f"function_durations_percentiles.anon.{d}.csv",
        directory / f"app_memory_percentiles.anon.{d}.csv",
    )


def short(h: str) -> str:
    return h[:12]


def _read_durations(path: Path) -> dict[tuple[str, str, str], float]:
    table = CsvTable(path, ("HashOwner", "HashApp", "HashFunction", "Average"))
    c = table.cols
    out: dict[tuple[str, str, str], float] = {}
    for line, row in table.rows():
        ms = req_float(row[c["Average"]], path, line, "Average", minimum=0)
        out[(row[c["HashOwner"]], row[c["HashApp"]], row[c["HashFunction"]])] = ms
    return out


def _read_memory(path: Path) -> tuple[dict[tuple[str, ...], float], bool]:
    """Allocated MB keyed by (owner, app, function) or, in the full dataset, (owner, app)."""
    table = CsvTable(path, ("HashOwner", "HashApp", "AverageAllocatedMb"))
    per_function = "HashFunction" in table.header
    c = table.cols
    f = table.header.index("HashFunction") if per_function else -1
    out: dict[tuple[str, ...], float] = {}
    for line, row in table.rows():
        mb = req_float(row[c["AverageAllocatedMb"]], path, line, "AverageAllocatedMb", minimum=0)
        key = (row[c["HashOwner"]], row[c["HashApp"]])
        out[(*key, row[f]) if per_function else key] = mb
    return out, per_function


def read_azure2019(
    invocations: Path,
    durations: Path,
    memory: Path | None,
    *,
    minutes: int | None = None,
    functions: int | None = None,
) -> tuple[list[Workflow], dict[str, int]]:
    """One-task workflows per (function, minute); also counts of what was skipped."""
    dur = _read_durations(existing_file(durations, "durations file"))
    mem, per_function = _read_memory(existing_file(memory, "memory file")) if memory else ({}, True)
    table = CsvTable(
        existing_file(invocations, "invocations file"),
        ("HashOwner", "HashApp", "HashFunction", "Trigger"),
    )
    minute_cols = table.header[4:]
    if not minute_cols or minute_cols != [str(i + 1) for i in range(len(minute_cols))]:
        raise DatasetError(
            "expected minute columns 1, 2, ... after Trigger",
            source=invocations,
            line=1,
            field=minute_cols[0] if minute_cols else "1",
        )
    m = len(minute_cols) if minutes is None else min(minutes, len(minute_cols))
    rows: list[Any] = []
    for line, row in table.rows():
        if functions is not None and len(rows) >= functions:
            break
        try:
            counts = np.asarray(row[4 : 4 + m], dtype=np.float64)
        except ValueError:
            for k, v in enumerate(row[4 : 4 + m]):
                to_float(v, invocations, line, minute_cols[k])  # raises on the bad cell
            raise
        if not np.all(np.isfinite(counts)) or np.any(counts < 0):
            bad = int(np.flatnonzero(~np.isfinite(counts) | (counts < 0))[0])
            raise DatasetError(
                f"invocation count {row[4 + bad]!r} is not a count >= 0",
                source=invocations,
                line=line,
                field=minute_cols[bad],
            )
        rows.append((row[0], row[1], row[2], counts))
    apps_of: dict[str, set[tuple[str, str]]] = {}
    for o, a, f, _ in rows:
        apps_of.setdefault(f, set()).add((o, a))
    stats = {"functions": 0, "no_duration": 0, "no_memory": 0}
    found: list[tuple[int, int, Task]] = []
    for k, (o, a, f, counts) in enumerate(rows):
        ms = dur.get((o, a, f))
        if ms is None:
            stats["no_duration"] += 1
            continue
        stats["functions"] += 1
        mb = mem.get((o, a, f) if per_function else (o, a))
        stats["no_memory"] += mb is None
        ftype = short(f) if len(apps_of[f]) == 1 else f"{short(a)}.{short(f)}"
        for minute in np.flatnonzero(counts > 0):
            found.append(
                (
                    int(minute),
                    k,
                    Task(
                        name=f"{ftype}@{minute + 1}",
                        type=ftype,
                        runtime=ms / 1000.0,
                        cores=None if mb is None else max(MIN_CORES, mb / MB_PER_CORE),
                        memory_gb=None if mb is None else mb / 1000.0,
                        requests=int(counts[minute]),
                    ),
                )
            )
    found.sort(key=lambda x: (x[0], x[1]))
    wfs = [Workflow(name=t.name, tasks=[t], submit_time=minute * 60.0) for minute, _, t in found]
    return wfs, stats


def _provenance_2019(stats: dict[str, int]) -> tuple[dict[str, str], dict[str, str]]:
    n, miss = stats["functions"], stats["no_memory"]
    real = {
        "type": "HashFunction (first 12 hex digits; app-qualified if shared by apps)",
        "requests": "invocations file: count in the minute",
        "exec_time": "durations file: Average (ms) / 1000",
        "arrival_time": "invocations file: (minute - 1) * 60 s (minute resolution)",
        "mem_request": "memory file: AverageAllocatedMb / 1000 (decimal GB, at least 128 MB)",
    }
    derived = {
        "cpu_request": f"AverageAllocatedMb / {MB_PER_CORE:g} cores, at least {MIN_CORES} "
        "(AWS-Lambda-style memory-proportional CPU; the trace has no CPU)",
        "cpu_usage": RULES["cpu_usage"],
        "io_network": RULES["io_network"],
        "io_disk": RULES["io_disk"],
    }
    if miss:
        real["mem_request"] += f" ({n - miss} of {n} functions)"
        derived["mem_request"] = f"{RULES['mem_request']} (other {miss} functions)"
        derived["cpu_request"] += f"; 1 core for the {miss} functions without memory"
    return real, derived


def _dataset_2019(
    name: str,
    files: Iterable[Path | None],
    wfs: list[Workflow],
    stats: dict[str, int],
    license: str,
) -> Dataset:
    real, derived = _provenance_2019(stats)
    for wf in wfs:
        wf.real_fields, wf.derived_fields = real, derived
    desc = (
        f"Azure Functions 2019 trace: {stats['functions']} functions, {len(wfs)} "
        "(function, minute) invocation groups"
    )
    if stats["no_duration"]:
        desc += f"; {stats['no_duration']} functions without a duration row skipped"
    return Dataset(
        name=name,
        workflows=wfs,
        description=desc,
        source=", ".join(str(f) for f in files if f is not None),
        license=license,
        real_fields=real,
        derived_fields=derived,
    )


def load_azure2019(path: str, params: dict[str, str]) -> Dataset:
    """``azure-functions:example`` or ``azure-functions:DIR?day=N`` (full dataset layout)."""
    source = f"azure-functions:{path}"
    minutes = int_param(params, "minutes", source, minimum=1)
    functions = int_param(params, "functions", source, minimum=1)
    day = int_param(params, "day", source, minimum=1)
    if path == "example":
        if day is not None:
            raise DatasetError(
                "'day' applies to a directory of the full dataset, not to the example",
                source=source,
                field="day",
            )
        inv_f, dur_f, mem_f = (shipped("functions", f) for f in EXAMPLE_2019)
        files: tuple[Path, Path, Path | None] = (inv_f, dur_f, mem_f)
        license = LICENSE_2019
    else:
        d = Path(path)
        if not d.is_dir():
            raise DatasetError(
                "not a directory (expected 'example' or a directory holding "
                "the full Azure Functions 2019 dataset)",
                source=path,
            )
        inv, durf, memf = full_2019_files(d, day or 1)
        files = (inv, durf, memf if memf.is_file() else None)
        license = "Azure Public Dataset (CC-BY-4.0)"
    wfs, stats = read_azure2019(*files, minutes=minutes, functions=functions)
    return _dataset_2019(source, files, wfs, stats, license)


def azure2019_siblings(invocations: Path) -> tuple[Path, Path, Path | None]:
    """Durations and memory files that belong to an invocations file, by naming convention."""
    n = invocations.name
    for inv, dur, mem in (
        ("invocations_per_function_md", "function_durations_percentiles", "app_memory_percentiles"),
        ("invocations", "durations", "memory"),
    ):
        if inv in n:
            d = invocations.with_name(n.replace(inv, dur))
            m = invocations.with_name(n.replace(inv, mem))
            if d.is_file():
                return invocations, d, m if m.is_file() else None
    raise DatasetError(
        "Azure Functions 2019 invocations file without a durations file beside "
        "it (expected function_durations_percentiles.* or *durations*)",
        source=invocations,
    )


def load_azure2019_file(path: Path) -> Dataset:
    files = azure2019_siblings(path)
    wfs, stats = read_azure2019(*files)
    return _dataset_2019(f"file:{path}", files, wfs, stats, "")


# ---------------------------------------------------------------------------- 2021


def read_azure2021(path: Path, limit: int | None = None) -> list[Workflow]:
    table = CsvTable(
        existing_file(path, "Azure Functions 2021 file"),
        ("app", "func", "end_timestamp", "duration"),
    )
    c = table.cols
    wfs: list[Workflow] = []
    for line, row in table.rows():
        if limit is not None and len(wfs) >= limit:
            break
        end = req_float(row[c["end_timestamp"]], path, line, "end_timestamp")
        dur = req_float(row[c["duration"]], path, line, "duration", minimum=0)
        ftype = short(row[c["func"]])
        task = Task(name=f"{ftype}#{len(wfs)}", type=ftype, runtime=dur)
        wfs.append(Workflow(name=task.name, tasks=[task], submit_time=end - dur))
    real = {
        "type": "func (first 12 hex digits)",
        "exec_time": "duration (s)",
        "arrival_time": "end_timestamp - duration",
    }
    derived = {
        "cpu_request": "1 core (core default; the trace has no CPU data)",
        "cpu_usage": RULES["cpu_usage"],
        "mem_request": "128 MB (core memory floor; the trace has no memory or I/O data)",
        "io_network": RULES["io_network"],
        "io_disk": RULES["io_disk"],
        "requests": "1 per invocation",
    }
    for wf in wfs:
        wf.real_fields, wf.derived_fields = real, derived
    return wfs


def _dataset_2021(name: str, path: Path, wfs: list[Workflow], license: str) -> Dataset:
    w = wfs[0] if wfs else None
    return Dataset(
        name=name,
        workflows=wfs,
        description=f"Azure Functions 2021 invocation trace: {len(wfs)} invocations",
        source=str(path),
        license=license,
        real_fields=dict(w.real_fields) if w else {},
        derived_fields=dict(w.derived_fields) if w else {},
    )


def load_azure2021(path: str, params: dict[str, str]) -> Dataset:
    """``azure-functions-2021:200`` (shipped sample) or ``azure-functions-2021:PATH``."""
    source = f"azure-functions-2021:{path}"
    limit = int_param(params, "limit", source, minimum=1)
    if path == "200":
        p, license = shipped("functions", "azure2021-200.csv"), LICENSE_2021
    else:
        p, license = Path(path), "Azure Public Dataset (CC-BY-4.0)"
    return _dataset_2021(source, p, read_azure2021(p, limit), license)


def load_azure2021_file(path: Path) -> Dataset:
    return _dataset_2021(f"file:{path}", path, read_azure2021(path), "")


def canonical_path(path: str) -> str:
    """Shipped names stay; user paths become absolute."""
    return path if path in ("example", "200") else abs_path(path)


register(
    "azure-functions",
    load_azure2019,
    "Azure Functions 2019: one-task workflow per (function, minute) with invocations; "
    "'example' is the shipped 3-function sample, or a directory of the full dataset "
    "(invocations_per_function_md.anon.dNN.csv etc.) with day=N; minutes=N keeps the first N "
    "minutes, functions=N the first N functions",
    [
        "azure-functions:example",
        "azure-functions:example?minutes=60",
        "azure-functions:/data/azurefunctions-dataset2019?day=1&functions=1000",
    ],
    LICENSE_2019,
    params={"minutes": None, "functions": None, "day": None},
    canonical_path=canonical_path,
)
register(
    "azure-functions-2021",
    load_azure2021,
    "Azure Functions 2021 invocation trace (app,func,end_timestamp,duration): one one-task "
    "workflow per invocation; '200' is the shipped 199-invocation sample, or a path to the full "
    "file; limit=N keeps the first N invocations",
    [
        "azure-functions-2021:200",
        "azure-functions-2021:/data/AzureFunctionsInvocationTrace"
        "ForTwoWeeksJan2021.txt?limit=100000",
    ],
    LICENSE_2021,
    params={"limit": None},
    canonical_path=canonical_path,
)
