"""WfFormat 1.5 JSON (WfInstances, wfcommons) -> :class:`Workflow`.

Fields read per task (``spec`` = ``workflow.specification.tasks[]``, ``exec`` =
``workflow.execution.tasks[]``, joined on ``id``):

=========== ===================================================================================
Task field  source
=========== ===================================================================================
type        ``exec.command.program``; else the spec name without its ``_ID000123`` / digit
            suffix
runtime     ``exec.runtimeInSeconds`` (required, >= 0)
cores       ``exec.coreCount``
cpu_usage   ``exec.avgCPU / 100`` (avgCPU is a percentage of one core)
memory_gb   ``exec.memoryInBytes / 1e9``
read_bytes  ``exec.readBytes``; else the sum of ``sizeInBytes`` of ``spec.inputFiles``
write_bytes ``exec.writtenBytes``; else the sum of ``sizeInBytes`` of ``spec.outputFiles``
parents     ``spec.parents`` (ids) united with the inverse of ``spec.children``
=========== ===================================================================================

WfInstances record no submit time, so ``submit_time`` is ``None``.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rlsched.core.workload import Task, Workflow
from rlsched.data._util import RULES, coverage, shipped
from rlsched.data.dataset import Dataset
from rlsched.data.registry import register
from rlsched.errors import DatasetError
from rlsched.suggest import did_you_mean

_SUFFIX_RE = re.compile(r"(_ID\d+|_?\d+)$")

#: ``wfinstances:<key>`` -> shipped file in ``rlsched/datasets/workflows``.
WFINSTANCES: dict[str, str] = {
    "helloworld-10": "helloworld-forkjoin-10-chameleon.json",
    "srasearch-22": "srasearch-chameleon-10a-001.json",
    "epigenomics-41": "epigenomics-chameleon-hep-1seq-100k-001.json",
    "blast-43": "blast-chameleon-small-005.json",
    "1000genome-52": "1000genome-chameleon-2ch-100k-001.json",
    "montage-58": "montage-chameleon-2mass-005d-001.json",
}

WFINSTANCES_LICENSE = "LGPL-3.0 (WfInstances, wfcommons/WfInstances @ f085867)"


def task_type_from_name(name: str) -> str:
    """``mProject_ID0000001`` -> ``mProject``; ``cpuhog_forkjoin_00000001`` -> ``cpuhog_forkjoin``.

    Used when a task has no ``command.program``: tasks of one type share a name prefix.
    """
    stripped = _SUFFIX_RE.sub("", name)
    return stripped or name


def _num(
    value: Any, source: str, field: str, task: str, *, required: bool = False, nonneg: bool = True
) -> float | None:
    if value is None:
        if required:
            raise DatasetError(f"task {task!r}: missing value", source=source, field=field)
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise DatasetError(
            f"task {task!r}: {value!r} is not a finite number", source=source, field=field
        )
    if nonneg and value < 0:
        raise DatasetError(f"task {task!r}: {value!r} is negative", source=source, field=field)
    return float(value)


def _get(obj: Any, key: str, source: str, field: str, kind: type = dict) -> Any:
    if not isinstance(obj, dict) or key not in obj:
        raise DatasetError(f"missing '{key}'", source=source, field=field)
    val = obj[key]
    if not isinstance(val, kind):
        raise DatasetError(
            f"'{key}' must be a {kind.__name__}, got {type(val).__name__}",
            source=source,
            field=field,
        )
    return val


def read_json(path: Path) -> Any:
    """Parse a JSON file; a syntax error (e.g. a truncated file) names the file and line."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise DatasetError(f"cannot read: {e.strerror}", source=path) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise DatasetError(
            f"invalid JSON: {e.msg} (column {e.colno})", source=path, line=e.lineno
        ) from None


def parse_wfformat_counts(
    data: Any, source: str | Path, name: str | None = None
) -> tuple[Workflow, Counter[str]]:
    """Parse a WfFormat document; also count which optional columns each task had."""
    src = str(source)
    wf = _get(data, "workflow", src, "workflow")
    spec = _get(wf, "specification", src, "workflow.specification")
    spec_tasks = _get(spec, "tasks", src, "workflow.specification.tasks", list)
    if not spec_tasks:
        raise DatasetError("no tasks", source=src, field="workflow.specification.tasks")
    execution = _get(wf, "execution", src, "workflow.execution")
    exec_tasks = _get(execution, "tasks", src, "workflow.execution.tasks", list)
    files = spec.get("files") or []
    sizes: dict[str, float] = {}
    for k, f in enumerate(files):
        if isinstance(f, dict) and "id" in f:
            s = _num(
                f.get("sizeInBytes"),
                src,
                f"workflow.specification.files[{k}].sizeInBytes",
                str(f["id"]),
            )
            if s is not None:
                sizes[str(f["id"])] = s

    ids: list[str] = []
    index: dict[str, int] = {}
    for i, t in enumerate(spec_tasks):
        fld = f"workflow.specification.tasks[{i}].id"
        tid = t.get("id", t.get("name")) if isinstance(t, dict) else None
        if not isinstance(tid, str) or not tid:
            raise DatasetError("task without an id", source=src, field=fld)
        if tid in index:
            raise DatasetError(f"duplicate task id {tid!r}", source=src, field=fld)
        index[tid] = i
        ids.append(tid)
    by_id: dict[str, tuple[int, dict[str, Any]]] = {}
    for j, e in enumerate(exec_tasks):
        if isinstance(e, dict) and isinstance(e.get("id"), str):
            by_id[e["id"]] = (j, e)

    parents: list[list[int]] = [[] for _ in ids]
    for i, t in enumerate(spec_tasks):
        for key, is_parent in (("parents", True), ("children", False)):
            fld = f"workflow.specification.tasks[{i}].{key}"
            rel = t.get(key) or []
            if not isinstance(rel, list):
                raise DatasetError(
                    f"task {ids[i]!r}: '{key}' must be a list", source=src, field=fld
                )
            for other in rel:
                found = index.get(other) if isinstance(other, str) else None
                if found is None:
                    what = "parent" if is_parent else "child"
                    raise DatasetError(
                        f"task {ids[i]!r}: unknown {what} {other!r}", source=src, field=fld
                    )
                if found == i:
                    raise DatasetError(f"task {ids[i]!r} depends on itself", source=src, field=fld)
                p, c = (found, i) if is_parent else (i, found)
                if p not in parents[c]:
                    parents[c].append(p)

    counts: Counter[str] = Counter()
    tasks: list[Task] = []
    for i, (tid, t) in enumerate(zip(ids, spec_tasks, strict=True)):
        if tid not in by_id:
            raise DatasetError(
                f"task {tid!r} has no execution record",
                source=src,
                field="workflow.execution.tasks",
            )
        j, e = by_id[tid]
        pre = f"workflow.execution.tasks[{j}]"
        runtime = _num(
            e.get("runtimeInSeconds"), src, f"{pre}.runtimeInSeconds", tid, required=True
        )
        assert runtime is not None
        cmd = e.get("command")
        program = cmd.get("program") if isinstance(cmd, dict) else None
        if isinstance(program, str) and program:
            ttype = program
            counts["program"] += 1
        else:
            ttype = task_type_from_name(str(t.get("name") or tid))
        cores = _num(e.get("coreCount"), src, f"{pre}.coreCount", tid)
        avg_cpu = _num(e.get("avgCPU"), src, f"{pre}.avgCPU", tid)
        mem = _num(e.get("memoryInBytes"), src, f"{pre}.memoryInBytes", tid)
        read = _num(e.get("readBytes"), src, f"{pre}.readBytes", tid)
        written = _num(e.get("writtenBytes"), src, f"{pre}.writtenBytes", tid)
        counts["cores"] += cores is not None
        counts["avgCPU"] += avg_cpu is not None
        counts["memory"] += mem is not None
        if read is not None:
            counts["readBytes"] += 1
        else:
            read = _file_bytes(t.get("inputFiles"), sizes)
            counts["inputFiles"] += read is not None
        if written is not None:
            counts["writtenBytes"] += 1
        else:
            written = _file_bytes(t.get("outputFiles"), sizes)
            counts["outputFiles"] += written is not None
        tasks.append(
            Task(
                name=tid,
                type=ttype,
                runtime=runtime,
                parents=tuple(parents[i]),
                cores=cores,
                cpu_usage=None if avg_cpu is None else avg_cpu / 100.0,
                memory_gb=None if mem is None else mem / 1e9,
                read_bytes=read,
                write_bytes=written,
            )
        )
    counts["tasks"] = len(tasks)
    _check_acyclic(parents, ids, src)
    wf_name = name or str(data.get("name") or Path(src).stem)
    workflow = Workflow(name=wf_name, tasks=tasks, submit_time=None)
    workflow.real_fields, workflow.derived_fields = provenance(counts)
    return workflow, counts


def _file_bytes(file_ids: Any, sizes: Mapping[str, float]) -> float | None:
    """Sum of known file sizes; ``None`` when the task lists no file with a known size."""
    if not isinstance(file_ids, list):
        return None
    known = [sizes[f] for f in file_ids if isinstance(f, str) and f in sizes]
    return float(sum(known)) if known else None


def _check_acyclic(parents: list[list[int]], ids: list[str], src: str) -> None:
    indeg = [len(p) for p in parents]
    kids: list[list[int]] = [[] for _ in parents]
    for c, ps in enumerate(parents):
        for p in ps:
            kids[p].append(c)
    ready = [i for i, d in enumerate(indeg) if d == 0]
    seen = 0
    while ready:
        i = ready.pop()
        seen += 1
        for c in kids[i]:
            indeg[c] -= 1
            if indeg[c] == 0:
                ready.append(c)
    if seen < len(ids):
        stuck = [ids[i] for i, d in enumerate(indeg) if d > 0]
        raise DatasetError(
            f"dependency cycle among tasks {', '.join(stuck[:5])}"
            f"{' ...' if len(stuck) > 5 else ''}",
            source=src,
            field="workflow.specification.tasks[].parents",
        )


def parse_wfformat(data: Any, source: str | Path, name: str | None = None) -> Workflow:
    """One :class:`Workflow` from a parsed WfFormat 1.5 document."""
    return parse_wfformat_counts(data, source, name)[0]


def load_wfformat_file(path: str | Path, name: str | None = None) -> tuple[Workflow, Counter[str]]:
    p = Path(path)
    return parse_wfformat_counts(read_json(p), p, name)


def provenance(counts: Counter[str]) -> tuple[dict[str, str], dict[str, str]]:
    """``(real_fields, derived_fields)`` given how many tasks had each optional column."""
    n = counts["tasks"]
    real: dict[str, str] = {"exec_time": "execution.tasks[].runtimeInSeconds"}
    derived: dict[str, str] = {}
    coverage(
        "type",
        counts["program"],
        n,
        "execution.tasks[].command.program",
        "specification task name without its _ID/digit suffix",
        real,
        derived,
    )
    coverage(
        "cpu_request",
        counts["cores"],
        n,
        "execution.tasks[].coreCount",
        RULES["cpu_request"],
        real,
        derived,
    )
    coverage(
        "cpu_usage",
        counts["avgCPU"],
        n,
        "execution.tasks[].avgCPU / 100",
        RULES["cpu_usage"],
        real,
        derived,
    )
    coverage(
        "mem_request",
        counts["memory"],
        n,
        "execution.tasks[].memoryInBytes / 1e9 (at least 128 MB)",
        RULES["mem_request"],
        real,
        derived,
    )
    for fld, measured, files, word in (
        ("io_network", "readBytes", "inputFiles", "read"),
        ("io_disk", "writtenBytes", "outputFiles", "written"),
    ):
        coverage(
            fld, counts[measured], n, f"execution.tasks[].{measured} / runtime", "", real, derived
        )
        parts = []
        if counts[files]:
            parts.append(
                f"sum of sizeInBytes of the task's {files} / runtime (each file "
                f"{word} once; {counts[files]} of {n} tasks)"
            )
        rest = n - counts[measured] - counts[files]
        if rest:
            parts.append(f"0 MB/s: no {measured} and no sized {files} ({rest} of {n} tasks)")
        if parts:
            derived[fld] = "; ".join(parts)
        else:
            derived.pop(fld, None)
    derived["requests"] = RULES["requests"]
    derived["arrival_time"] = (
        "earliest start (longest chain of parent runtimes); WfInstances "
        "have no submit time, so workflows start at 0 unless given one"
    )
    return real, derived


def dataset_from_parts(
    name: str,
    parts: list[tuple[Workflow, Counter[str]]],
    *,
    description: str,
    source: str,
    license: str,
) -> Dataset:
    total: Counter[str] = Counter()
    for _, c in parts:
        total.update(c)
    real, derived = provenance(total)
    return Dataset(
        name=name,
        workflows=[w for w, _ in parts],
        description=description,
        source=source,
        license=license,
        real_fields=real,
        derived_fields=derived,
    )


def load_wfinstances(path: str, params: dict[str, str]) -> Dataset:
    """``wfinstances:montage-58``, ``wfinstances:montage-58,blast-43``, ``wfinstances:all``."""
    keys = list(WFINSTANCES) if path == "all" else [k.strip() for k in path.split(",")]
    parts = []
    for key in keys:
        if key not in WFINSTANCES:
            raise DatasetError(
                f"unknown WfInstances workflow {key!r}{did_you_mean(key, WFINSTANCES)}; "
                f"shipped: {', '.join(WFINSTANCES)}, all",
                source=f"wfinstances:{path}",
            )
        parts.append(load_wfformat_file(shipped("workflows", WFINSTANCES[key]), name=key))
    files = ", ".join(f"workflows/{WFINSTANCES[k]}" for k in keys)
    return dataset_from_parts(
        f"wfinstances:{path}",
        parts,
        description=f"Real workflow executions from WfInstances ({', '.join(keys)})",
        source=f"rlsched/datasets/{files}",
        license=WFINSTANCES_LICENSE,
    )


def load_wfformat_path(path: str) -> Dataset:
    """A user's WfFormat 1.5 JSON file as a one-workflow dataset."""
    p = Path(path)
    part = load_wfformat_file(p, name=p.stem)
    return dataset_from_parts(
        f"file:{path}", [part], description=f"WfFormat workflow {p.name}", source=str(p), license=""
    )


register(
    "wfinstances",
    load_wfinstances,
    "Real scientific-workflow executions (WfInstances, WfFormat 1.5): "
    + ", ".join(WFINSTANCES)
    + "; a comma list loads several, 'all' loads every one",
    [
        "wfinstances:montage-58",
        "wfinstances:epigenomics-41",
        "wfinstances:montage-58,blast-43",
        "wfinstances:all",
    ],
    WFINSTANCES_LICENSE,
)
