"""Function traces (Azure 2019 / 2021) and Alibaba batch jobs (CloudSimPy, v2018)."""

from __future__ import annotations

import csv
import shutil
from collections import defaultdict
from pathlib import Path

import pytest

from rlsched.data import load_dataset
from rlsched.data.alibaba import parse_v2018_task_name
from rlsched.errors import DatasetError

# ------------------------------------------------------------------ Azure 2019


def read_rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


def test_azure2019_example(shipped_file) -> None:
    ds = load_dataset("azure-functions:example")
    inv = read_rows(shipped_file("functions", "azure2019-example-invocations.csv"))
    dur = {
        r["HashFunction"]: float(r["Average"])
        for r in read_rows(shipped_file("functions", "azure2019-example-durations.csv"))
    }
    mem = {
        r["HashFunction"]: float(r["AverageAllocatedMb"])
        for r in read_rows(shipped_file("functions", "azure2019-example-memory.csv"))
    }
    groups = [
        (r["HashFunction"], m, int(r[str(m)]))
        for r in inv
        for m in range(1, 1441)
        if int(r[str(m)]) > 0
    ]
    assert len(ds.workflows) == len(groups)
    assert sum(w.tasks[0].requests for w in ds.workflows) == sum(c for *_, c in groups)
    for wf in ds.workflows:
        (t,) = wf.tasks
        f = next(h for h in dur if h.startswith(t.type))
        assert t.runtime == pytest.approx(dur[f] / 1000)
        assert t.memory_gb == pytest.approx(mem[f] / 1000)
        assert t.cores == pytest.approx(max(0.1, mem[f] / 1769))
        assert wf.submit_time % 60 == 0 and 0 <= wf.submit_time < 86400
    assert ds.real_fields["requests"] and "1769" in ds.derived_fields["cpu_request"]
    first = load_dataset("azure-functions:example?minutes=60")
    assert all(w.submit_time < 3600 for w in first.workflows)
    assert len(first.workflows) == sum(1 for _, m, _ in groups if m <= 60)


def full_layout(tmp_path: Path, shipped_file) -> Path:
    """The example files under the full dataset's names, with app-level memory."""
    d = tmp_path / "azure2019"
    d.mkdir()
    shutil.copy(
        shipped_file("functions", "azure2019-example-invocations.csv"),
        d / "invocations_per_function_md.anon.d01.csv",
    )
    shutil.copy(
        shipped_file("functions", "azure2019-example-durations.csv"),
        d / "function_durations_percentiles.anon.d01.csv",
    )
    rows = read_rows(shipped_file("functions", "azure2019-example-memory.csv"))
    with (d / "app_memory_percentiles.anon.d01.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["HashOwner", "HashApp", "SampleCount", "AverageAllocatedMb"])
        for r in rows:
            w.writerow(
                [r["HashOwner"], r["HashApp"], r["SampleCount"], 2 * float(r["AverageAllocatedMb"])]
            )
    return d


def test_azure2019_directory_joins_memory_per_app(tmp_path, shipped_file) -> None:
    d = full_layout(tmp_path, shipped_file)
    ds = load_dataset(f"azure-functions:{d}?day=1")
    ex = load_dataset("azure-functions:example")
    assert len(ds.workflows) == len(ex.workflows)
    for a, b in zip(ds.workflows, ex.workflows, strict=True):
        assert a.tasks[0].memory_gb == pytest.approx(2 * b.tasks[0].memory_gb)
    # the invocations file alone, sniffed: the others are found by name
    assert len(load_dataset(str(d / "invocations_per_function_md.anon.d01.csv")).workflows) == len(
        ex.workflows
    )
    with pytest.raises(DatasetError, match="d02"):
        load_dataset(f"azure-functions:{d}?day=2")


def test_azure2019_broken(tmp_path, shipped_file) -> None:
    d = full_layout(tmp_path, shipped_file)
    inv = d / "invocations_per_function_md.anon.d01.csv"
    lines = inv.read_text().splitlines()
    cells = lines[2].split(",")
    cells[10] = "many"
    lines[2] = ",".join(cells)
    inv.write_text("\n".join(lines) + "\n")
    with pytest.raises(DatasetError) as e:
        load_dataset(f"azure-functions:{d}")
    assert f"{inv.name}:3: field '7'" in str(e.value)
    dur = d / "function_durations_percentiles.anon.d01.csv"
    dur.write_text(dur.read_text().replace("Average,", "Avg,", 1))
    with pytest.raises(DatasetError) as e:
        load_dataset(f"azure-functions:{d}")
    assert f"{dur.name}:1: field 'Average'" in str(e.value)


# ------------------------------------------------------------------ Azure 2021


def test_azure2021_sample(shipped_file) -> None:
    ds = load_dataset("azure-functions-2021:200")
    rows = read_rows(shipped_file("functions", "azure2021-200.csv"))
    assert len(ds.workflows) == len(rows) == 199
    for wf, r in zip(ds.workflows, rows, strict=True):
        (t,) = wf.tasks
        assert t.runtime == float(r["duration"])
        assert wf.submit_time == pytest.approx(float(r["end_timestamp"]) - float(r["duration"]))
        assert t.type == r["func"][:12]
        assert t.cores is None and t.memory_gb is None
    inst = ds.instances()
    assert set(inst.cpu_request.tolist()) == {1.0}
    assert set(inst.mem_request.tolist()) == {0.128}
    assert "mem_request" in ds.derived_fields and "exec_time" in ds.real_fields
    assert len(load_dataset("azure-functions-2021:200?limit=10").workflows) == 10


@pytest.mark.parametrize(
    "edit, where",
    [
        (lambda ls: [ls[0].replace("duration", "dur"), *ls[1:]], ":1: field 'duration'"),
        (lambda ls: [*ls[:5], ls[5].rsplit(",", 1)[0] + ",-3", *ls[6:]], ":6: field 'duration'"),
        (lambda ls: [*ls[:7], ls[7].replace(",", ",x", 2), *ls[8:]], ":8: field 'end_timestamp'"),
    ],
)
def test_azure2021_broken(tmp_path, shipped_file, edit, where) -> None:
    lines = shipped_file("functions", "azure2021-200.csv").read_text().splitlines()
    p = tmp_path / "inv2021.csv"
    p.write_text("\n".join(edit(lines)) + "\n")
    with pytest.raises(DatasetError) as e:
        load_dataset(f"azure-functions-2021:{p}")
    assert f"inv2021.csv{where}" in str(e.value)


# ------------------------------------------------------------------ Alibaba CloudSimPy


def test_cloudsimpy_counts(shipped_file) -> None:
    rows = read_rows(shipped_file("alibaba", "cloudsimpy-jobs.csv"))
    jobs: dict[str, list[dict[str, str]]] = defaultdict(list)
    for r in rows:
        jobs[r["job_id"]].append(r)
    ds = load_dataset("alibaba:cloudsimpy-jobs")
    assert len(rows) == 31756 and len(jobs) == 5216
    assert len(ds.workflows) == len(jobs)
    assert sum(len(w) for w in ds.workflows) == len(rows)
    assert sum(t.instances for w in ds.workflows for t in w.tasks) == sum(
        min(int(r["instances_num"]), 16) for r in rows
    )
    for wf in ds.workflows[:200]:
        rs = jobs[wf.name.removeprefix("job")]
        assert wf.submit_time == min(float(r["submit_time"]) for r in rs)
        for t, r in zip(wf.tasks, rs, strict=True):
            assert t.parents == ()
            assert t.runtime == float(r["duration"])
            assert t.cores == float(r["cpu"])
            assert t.memory_gb == pytest.approx(float(r["memory"]) * 64)
    small = load_dataset("alibaba:cloudsimpy-jobs?max_instances=2&machine_memory_gb=100")
    assert max(t.instances for w in small.workflows for t in w.tasks) == 2
    t0 = small.workflows[0].tasks[0]
    assert t0.memory_gb == pytest.approx(float(rows[0]["memory"]) * 100)
    assert "machine_memory_gb=100" in small.derived_fields["mem_request"]


def test_cloudsimpy_broken(tmp_path, shipped_file) -> None:
    lines = shipped_file("alibaba", "cloudsimpy-jobs.csv").read_text().splitlines()[:50]
    p = tmp_path / "jobs.csv"
    p.write_text("\n".join([lines[0].replace(",cpu,", ",cpus,"), *lines[1:]]) + "\n")
    with pytest.raises(DatasetError) as e:
        load_dataset(f"alibaba:{p}")
    assert "jobs.csv:1: field 'cpu'" in str(e.value)
    bad = lines[:]
    cells = bad[10].split(",")
    cells[2] = "-4"
    bad[10] = ",".join(cells)
    p.write_text("\n".join(bad) + "\n")
    with pytest.raises(DatasetError) as e:
        load_dataset(f"file:{p}")
    assert "jobs.csv:11: field 'duration'" in str(e.value)


# ------------------------------------------------------------------ Alibaba v2018


@pytest.mark.parametrize(
    "name, expected",
    [
        ("M1", (1, ())),
        ("R5_3_4", (5, (3, 4))),
        ("J3_2", (3, (2,))),
        ("M12", (12, ())),
        ("task_abc", None),
        ("task_Nzg3ODAwNDgzMTAwNTIyNTA0NA==", None),
        ("MergeTask", None),
        ("R2_", None),
    ],
)
def test_parse_v2018_task_name(name, expected) -> None:
    assert parse_v2018_task_name(name) == expected


def test_v2018_sample(v2018_sample) -> None:
    ds = load_dataset(f"alibaba-v2018:{v2018_sample}")
    assert [w.name for w in ds.workflows] == ["j_1", "j_2", "j_4"]  # j_3 only failed
    j1 = ds.workflows[0]
    names = [t.name for t in j1.tasks]
    par = {t.name: {names[p] for p in t.parents} for t in j1.tasks}
    assert par == {
        "M1": set(),
        "R2_1": {"M1"},
        "R3_1": {"M1"},
        "J4_2_3": {"R2_1", "R3_1"},
        "R6_5": set(),
    }
    assert "dropped_edges 1" in ds.description and "skipped_rows 1" in ds.description
    r3 = j1.tasks[2]
    assert (r3.runtime, r3.cores, r3.instances, r3.type) == (65.0, 2.0, 16, "type2")
    assert r3.memory_gb == pytest.approx(1.18 / 100 * 64)
    assert j1.submit_time == 100.0
    j2 = ds.workflows[1]
    assert all(t.parents == () for t in j2.tasks)
    assert j2.tasks[1].cores is None and j2.tasks[1].memory_gb is None
    assert ds.real_fields["cpu_request"] == "plan_cpu / 100"
    same = load_dataset(f"alibaba:v2018?path={v2018_sample}")
    assert [w.tasks for w in same.workflows] == [w.tasks for w in ds.workflows]
    sniffed = load_dataset(str(v2018_sample))
    assert [w.tasks for w in sniffed.workflows] == [w.tasks for w in ds.workflows]
    assert len(load_dataset(f"alibaba-v2018:{v2018_sample}?jobs=1").workflows) == 1


def test_v2018_broken(tmp_path, v2018_sample) -> None:
    lines = v2018_sample.read_text().splitlines()
    p = tmp_path / "batch_task.csv"
    p.write_text("\n".join([*lines[:3], "M7,1,j_1,1,Terminated,300,200,100,0.2"]) + "\n")
    with pytest.raises(DatasetError) as e:
        load_dataset(f"alibaba-v2018:{p}")
    assert "batch_task.csv:4: field 'end_time'" in str(e.value)
    p.write_text("\n".join([*lines[:1], "M7,1,j_1,1,Terminated,300,400,lots,0.2"]) + "\n")
    with pytest.raises(DatasetError) as e:
        load_dataset(f"alibaba-v2018:{p}")
    assert "batch_task.csv:2: field 'plan_cpu'" in str(e.value)
