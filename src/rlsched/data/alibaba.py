"""Alibaba batch jobs: the CloudSimPy jobs file and cluster-trace-v2018 ``batch_task.csv``.

**CloudSimPy** (``alibaba:cloudsimpy-jobs``): ``,submit_time,duration,cpu,memory,job_id,
task_id,instances_num,disk``, one row per task. One workflow per ``job_id`` (rows of a job are
contiguous), one task per row. Its ``task_id``\\ s are plain numbers, so the jobs have no DAG
edges and the tasks are independent. A few jobs list tasks submitted seconds apart; the job is
submitted at its earliest ``submit_time``.

**v2018** (``alibaba-v2018:PATH`` or ``alibaba:v2018?path=PATH``): headerless
``task_name,instance_num,job_name,task_type,status,start_time,end_time,plan_cpu,plan_mem``.
The DAG is in the task names (see :func:`parse_v2018_task_name`). Only ``Terminated`` rows have
a runtime (``end_time - start_time``); other rows are skipped and counted. An edge to a task id
that is not in the job (the real trace has such, e.g. for tasks that never ran) is dropped and
counted; a job whose names form a cycle keeps its tasks but loses its edges. The job is submitted
at its earliest ``start_time`` (the table has no submit time).

Both formats normalise memory to a machine: ``memory`` is a fraction of one machine and
``plan_mem`` a percentage. We scale by ``machine_memory_gb`` (default 64 GB, an assumed
reference machine since Alibaba does not publish machine memory). CPU: ``cpu`` is in cores,
``plan_cpu`` is 100 per core. Tasks may run hundreds of instances; ``max_instances`` (default 16)
caps the instances per task so that one job does not flood a small simulated cluster.
"""

from __future__ import annotations

import re
from pathlib import Path

from rlsched.core.workload import Task, Workflow
from rlsched.data._util import (
    RULES,
    CsvTable,
    abs_path,
    existing_file,
    float_param,
    int_param,
    req_float,
    shipped,
    to_float,
)
from rlsched.data.dataset import Dataset
from rlsched.data.registry import register
from rlsched.errors import DatasetError

DEFAULT_MACHINE_MEMORY_GB = 64.0
DEFAULT_MAX_INSTANCES = 16
CLOUDSIMPY_LICENSE = "MIT (RobertLexis/CloudSimPy @ c103672; from Alibaba cluster-trace-v2018)"
CLOUDSIMPY_COLUMNS = (
    "submit_time",
    "duration",
    "cpu",
    "memory",
    "job_id",
    "task_id",
    "instances_num",
)
V2018_COLUMNS = (
    "task_name",
    "instance_num",
    "job_name",
    "task_type",
    "status",
    "start_time",
    "end_time",
    "plan_cpu",
    "plan_mem",
)

_V2018_NAME = re.compile(r"^[A-Za-z]+(\d+)((?:_\d+)*)$")


def parse_v2018_task_name(name: str) -> tuple[int, tuple[int, ...]] | None:
    """``R5_3_4`` -> ``(5, (3, 4))``: task 5 of its job depends on tasks 3 and 4.

    The leading letters (M, R, J, ...) do not matter. Returns ``None`` for names that carry no
    DAG information, e.g. ``task_Nzg3...``: such tasks are independent.
    """
    m = _V2018_NAME.match(name.strip())
    if m is None:
        return None
    parents = tuple(int(p) for p in m.group(2).split("_")[1:])
    return int(m.group(1)), parents


def _params(params: dict[str, str], source: str) -> tuple[int, float]:
    cap = int_param(params, "max_instances", source, minimum=1, default=DEFAULT_MAX_INSTANCES)
    mem = float_param(params, "machine_memory_gb", source, default=DEFAULT_MACHINE_MEMORY_GB)
    assert cap is not None and mem is not None
    return cap, mem


def _fields(
    mem_col: str,
    cpu_col: str,
    machine_gb: float,
    cap: int,
    *,
    dag: bool,
    type_desc: str,
    type_real: bool,
) -> tuple[dict[str, str], dict[str, str]]:
    real = {
        "exec_time": "duration" if not dag else "end_time - start_time",
        "cpu_request": cpu_col,
        "arrival_time": (
            "job submit time (earliest submit_time of its rows); tasks are independent"
        )
        if not dag
        else "job's earliest start_time + earliest start in the name-encoded DAG",
    }
    derived = {
        "mem_request": f"{mem_col} x machine_memory_gb={machine_gb:g} GB (assumed "
        "reference machine; the trace normalises memory), at least 128 MB",
        "cpu_usage": RULES["cpu_usage"] + " (the trace has only the plan)",
        "io_network": RULES["io_network"],
        "io_disk": RULES["io_disk"],
        "requests": RULES["requests"],
    }
    (real if type_real else derived)["type"] = type_desc
    return real, derived


def read_cloudsimpy(
    path: Path,
    *,
    max_instances: int = DEFAULT_MAX_INSTANCES,
    machine_memory_gb: float = DEFAULT_MACHINE_MEMORY_GB,
) -> tuple[list[Workflow], dict[str, int]]:
    table = CsvTable(existing_file(path, "CloudSimPy jobs file"), CLOUDSIMPY_COLUMNS)
    c = table.cols
    jobs: dict[str, list[Task]] = {}
    submit: dict[str, float] = {}
    capped = 0
    for line, row in table.rows():
        job = row[c["job_id"]].strip()
        if not job:
            raise DatasetError("empty job_id", source=path, line=line, field="job_id")
        sub = req_float(row[c["submit_time"]], path, line, "submit_time", minimum=0)
        dur = req_float(row[c["duration"]], path, line, "duration", minimum=0)
        cpu = req_float(row[c["cpu"]], path, line, "cpu", minimum=0)
        mem = req_float(row[c["memory"]], path, line, "memory", minimum=0)
        n = req_float(row[c["instances_num"]], path, line, "instances_num", minimum=1)
        if n != int(n):
            raise DatasetError(
                f"{n:g} is not a whole number", source=path, line=line, field="instances_num"
            )
        capped += n > max_instances
        tasks = jobs.setdefault(job, [])
        submit[job] = min(sub, submit.get(job, sub))
        tasks.append(
            Task(
                name=f"task{row[c['task_id']].strip()}",
                type=f"job{job}",
                runtime=dur,
                cores=cpu,
                memory_gb=mem * machine_memory_gb,
                instances=min(int(n), max_instances),
            )
        )
    wfs = [Workflow(name=f"job{j}", tasks=ts, submit_time=submit[j]) for j, ts in jobs.items()]
    return wfs, {"capped_tasks": capped}


#: ``part=``: a time-ordered split of the jobs (by submission): the first 60% train, the next
#: 20% validation, the last 20% test (rlsched.splits uses them as KubeScheduling-v0's sets).
PARTS = {"train": (0.0, 0.6), "validation": (0.6, 0.8), "test": (0.8, 1.0)}


def split_part(wfs: list[Workflow], part: str | None, name: str) -> list[Workflow]:
    """The jobs of ``part`` (None or ``all``: every job), in submission order."""
    if part in (None, "all"):
        return wfs
    if part not in PARTS:
        raise DatasetError(
            f"part {part!r} is not one of all, {', '.join(PARTS)}", source=name, field="part"
        )
    lo, hi = PARTS[part]
    order = sorted(wfs, key=lambda w: w.submit_time or 0.0)
    n = len(order)
    return order[round(lo * n) : round(hi * n)]


def load_cloudsimpy_path(path: Path, name: str, params: dict[str, str], license: str) -> Dataset:
    cap, mem = _params(params, name)
    wfs, stats = read_cloudsimpy(path, max_instances=cap, machine_memory_gb=mem)
    wfs = split_part(wfs, params.get("part"), name)
    real, derived = _fields(
        "memory",
        "cpu (cores)",
        mem,
        cap,
        dag=False,
        type_desc="job_id (the tasks of a job are taken to share an image; "
        "the file has no function type)",
        type_real=False,
    )
    for wf in wfs:
        wf.real_fields, wf.derived_fields = real, derived
    n_tasks = sum(len(w) for w in wfs)
    return Dataset(
        name=name,
        workflows=wfs,
        source=str(path),
        license=license,
        description=(
            f"Alibaba batch jobs (CloudSimPy): {len(wfs)} jobs, {n_tasks} independent "
            f"tasks; {stats['capped_tasks']} tasks capped to {cap} instances"
        ),
        real_fields=real,
        derived_fields=derived,
    )


def read_v2018(
    path: Path,
    *,
    max_instances: int = DEFAULT_MAX_INSTANCES,
    machine_memory_gb: float = DEFAULT_MACHINE_MEMORY_GB,
    jobs: int | None = None,
) -> tuple[list[Workflow], dict[str, int]]:
    """Jobs of a headerless ``batch_task.csv`` with their name-encoded DAGs."""
    table = CsvTable(existing_file(path, "batch_task file"), (), header=V2018_COLUMNS)
    rows: dict[str, list[tuple[str, int, str, float, float | None, float | None, float]]] = {}
    stats = {
        "skipped_rows": 0,
        "dropped_edges": 0,
        "duplicate_ids": 0,
        "cyclic_jobs": 0,
        "capped_tasks": 0,
    }
    for line, row in table.rows():
        name, inst, job, ttype, status = (x.strip() for x in row[:5])
        if status != "Terminated":
            stats["skipped_rows"] += 1
            continue
        if job not in rows and jobs is not None and len(rows) >= jobs:
            continue
        start = req_float(row[5], path, line, "start_time", minimum=0)
        end = req_float(row[6], path, line, "end_time", minimum=0)
        if end < start:
            raise DatasetError(
                f"end_time {end:g} < start_time {start:g} (negative runtime)",
                source=path,
                line=line,
                field="end_time",
            )
        n = req_float(inst, path, line, "instance_num", minimum=0)
        cpu = to_float(row[7], path, line, "plan_cpu", minimum=0, allow_empty=True)
        mem = to_float(row[8], path, line, "plan_mem", minimum=0, allow_empty=True)
        stats["capped_tasks"] += n > max_instances
        rows.setdefault(job, []).append(
            (
                name,
                max(1, min(int(n), max_instances)),
                f"type{ttype}",
                end - start,
                None if cpu is None else cpu / 100.0,
                None if mem is None else mem / 100.0 * machine_memory_gb,
                start,
            )
        )
    wfs = []
    for job, items in rows.items():
        ids: dict[int, int] = {}
        parsed = []
        for k, item in enumerate(items):
            p = parse_v2018_task_name(item[0])
            parsed.append(p)
            if p is not None:
                if p[0] in ids:
                    stats["duplicate_ids"] += 1
                else:
                    ids[p[0]] = k
        parents: list[tuple[int, ...]] = []
        for k, p in enumerate(parsed):
            ps: list[int] = []
            for pid in p[1] if p else ():
                idx = ids.get(pid)
                if idx is None or idx == k:
                    stats["dropped_edges"] += 1
                elif idx not in ps:
                    ps.append(idx)
            parents.append(tuple(ps))

        def build(pars: list[tuple[int, ...]], job: str = job, items: list = items) -> Workflow:
            tasks = [
                Task(
                    name=it[0],
                    type=it[2],
                    runtime=it[3],
                    parents=pars[k],
                    cores=it[4],
                    memory_gb=it[5],
                    instances=it[1],
                )
                for k, it in enumerate(items)
            ]
            return Workflow(name=job, tasks=tasks, submit_time=min(it[6] for it in items))

        try:
            wfs.append(build(parents))
        except ValueError:  # a cycle in the names
            stats["cyclic_jobs"] += 1
            wfs.append(build([() for _ in items]))
    return wfs, stats


def load_v2018_path(path: Path, name: str, params: dict[str, str], license: str = "") -> Dataset:
    cap, mem = _params(params, name)
    jobs = int_param(params, "jobs", name, minimum=1)
    wfs, stats = read_v2018(path, max_instances=cap, machine_memory_gb=mem, jobs=jobs)
    real, derived = _fields(
        "plan_mem / 100",
        "plan_cpu / 100",
        mem,
        cap,
        dag=True,
        type_desc="task_type",
        type_real=True,
    )
    for wf in wfs:
        wf.real_fields, wf.derived_fields = real, derived
    desc = (
        f"Alibaba cluster-trace-v2018 batch_task: {len(wfs)} jobs, "
        f"{sum(len(w) for w in wfs)} tasks; " + ", ".join(f"{k} {v}" for k, v in stats.items())
    )
    return Dataset(
        name=name,
        workflows=wfs,
        source=str(path),
        license=license,
        description=desc,
        real_fields=real,
        derived_fields=derived,
    )


def load_alibaba(path: str, params: dict[str, str]) -> Dataset:
    """``alibaba:cloudsimpy-jobs``, ``alibaba:v2018?path=FILE`` or ``alibaba:FILE.csv``."""
    name = f"alibaba:{path}"
    if path == "v2018":
        if not params.get("path"):
            raise DatasetError(
                "alibaba:v2018 needs ?path=batch_task.csv", source=name, field="path"
            )
        p = {k: v for k, v in params.items() if k != "path"}
        return load_v2018_path(Path(params["path"]).expanduser(), name, p)
    if "path" in params:
        raise DatasetError("'path' applies to alibaba:v2018 only", source=name, field="path")
    if "jobs" in params:
        raise DatasetError(
            "'jobs' applies to v2018 batch_task files only", source=name, field="jobs"
        )
    if path == "cloudsimpy-jobs":
        return load_cloudsimpy_path(
            shipped("alibaba", "cloudsimpy-jobs.csv"), name, params, CLOUDSIMPY_LICENSE
        )
    return load_cloudsimpy_path(Path(path), name, params, "")


def load_alibaba_v2018(path: str, params: dict[str, str]) -> Dataset:
    return load_v2018_path(Path(path), f"alibaba-v2018:{path}", params)


def canonical_path(path: str) -> str:
    return path if path in ("cloudsimpy-jobs", "v2018") else abs_path(path)


_PARAMS: dict[str, str | None] = {
    "max_instances": str(DEFAULT_MAX_INSTANCES),
    "machine_memory_gb": f"{DEFAULT_MACHINE_MEMORY_GB:g}",
}
register(
    "alibaba",
    load_alibaba,
    "Alibaba batch jobs: 'cloudsimpy-jobs' is the shipped CloudSimPy file (5,216 jobs of "
    "independent tasks), 'v2018?path=batch_task.csv' a cluster-trace-v2018 batch_task file with "
    "name-encoded DAGs; a path loads a user's CloudSimPy-format file",
    [
        "alibaba:cloudsimpy-jobs",
        "alibaba:cloudsimpy-jobs?max_instances=4&machine_memory_gb=96",
        "alibaba:cloudsimpy-jobs?part=test",
        "alibaba:v2018?path=/data/batch_task.csv&jobs=1000",
    ],
    CLOUDSIMPY_LICENSE,
    params={**_PARAMS, "path": None, "jobs": None, "part": None},
    canonical_path=canonical_path,
)
register(
    "alibaba-v2018",
    load_alibaba_v2018,
    "Alibaba cluster-trace-v2018 batch_task.csv (headerless); DAGs from task names, "
    "Terminated rows only; jobs=N keeps the first N jobs",
    ["alibaba-v2018:/data/batch_task.csv?jobs=1000"],
    "Alibaba cluster-trace-v2018 (see alibaba/clusterdata)",
    params={**_PARAMS, "jobs": None},
    canonical_path=abs_path,
)
