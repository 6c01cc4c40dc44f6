"""huawei-vm: loader edge cases; synthetic:vm: the generator's published statistics."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

from rlsched.core.vm import VMRequests
from rlsched.data import load_dataset, resolve
from rlsched.data.huawei_vm import LICENSE, read_huawei_vm
from rlsched.data.synthetic_vm import PUBLISHED, VM_TYPES, generate_vm_requests
from rlsched.errors import DatasetError

GOOD = """vmid,cpu,memory,time,type
0,4,16,0.0,0
1,8,16,2.0,0
2,16,32,2.0,0

3,1,1,55.0,0
0,4,16,60.0,1
99,1,1,61.0,1
4,2,4,83.0,0
"""


def _write(tmp_path: Path, text: str, name: str = "vm.csv") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


# ------------------------------------------------------------------ loader


def test_loads_header_file(tmp_path) -> None:
    tr = read_huawei_vm(_write(tmp_path, GOOD))
    assert len(tr) == 7 and tr.creations == 5 and tr.deletions == 2
    assert tr.vmid.tolist() == [0, 1, 2, 3, 0, 99, 4]
    assert tr.cpu.tolist() == [4, 8, 16, 1, 4, 1, 2]
    assert tr.time[-1] == 83.0 and tr.type.tolist() == [0, 0, 0, 0, 1, 1, 0]
    # the deletion of vm 99 (never created here) is valid and refers to nothing
    assert tr.targets.tolist() == [-1, -1, -1, -1, 0, -1, -1]


def test_headerless_and_reordered_header(tmp_path) -> None:
    body = GOOD.split("\n", 1)[1]
    a = read_huawei_vm(_write(tmp_path, GOOD))
    b = read_huawei_vm(_write(tmp_path, body, "nohead.csv"))
    for col in ("vmid", "cpu", "mem", "time", "type"):
        np.testing.assert_array_equal(getattr(a, col), getattr(b, col))
    reordered = "type,time,memory,cpu,vmid,extra\n0,0,16,4,0,x\n1,5,16,4,0,y\n"
    c = read_huawei_vm(_write(tmp_path, reordered, "re.csv"))
    assert c.cpu.tolist() == [4, 4] and c.mem.tolist() == [16, 16] and c.type.tolist() == [0, 1]


def test_roundtrip_through_write_csv(tmp_path) -> None:
    tr = generate_vm_requests(500, 2, seed=3)
    back = read_huawei_vm(tr.write_csv(tmp_path / "rt.csv"))
    for col in ("vmid", "cpu", "mem", "time", "type"):
        np.testing.assert_array_equal(getattr(tr, col), getattr(back, col))
    back = read_huawei_vm(tr.write_csv(tmp_path / "rt2.csv", header=False))
    np.testing.assert_array_equal(tr.vmid, back.vmid)


@pytest.mark.parametrize(
    ("text", "line", "field", "words"),
    [
        ("vmid,cpu,memory,time,type\n0,4,16,0,0\n1,four,16,1,0\n", 3, "cpu", "not a number"),
        ("vmid,cpu,memory,time,type\n0,4,16,0,0\n1,4,,1,0\n", 3, "memory", "empty"),
        ("vmid,cpu,memory,time,type\n0,-4,16,0,0\n", 2, "cpu", "negative"),
        ("vmid,cpu,memory,time,type\n0,4,-1,0,0\n", 2, "memory", "negative"),
        ("vmid,cpu,memory,time,type\n0,4,16,0,0\n1,4,16,1,2\n", 3, "type", "not 0"),
        ("vmid,cpu,memory,time,type\n0,4,16,0,0\n1,4,16,1,0.5\n", 3, "type", "integer"),
        ("vmid,cpu,memory,time,type\n0,4,16,5,0\n\n1,4,16,1,0\n", 4, "time", "sorted"),
        ("vmid,cpu,memory,time,type\n0,4,16,0,0\n0,4,16,1,0\n", 3, "vmid", "while live"),
        ("vmid,cpu,memory,time,type\n0.5,4,16,0,0\n", 2, "vmid", "integer"),
        ("vmid,cpu,memory,time,type\n0,4,16\n", 2, "time", "cells"),
        ("0,4,16,0,0\n1,x,16,1,0\n", 2, "cpu", "not a number"),
    ],
)
def test_malformed_rows_name_file_line_field(tmp_path, text, line, field, words) -> None:
    p = _write(tmp_path, text)
    with pytest.raises(DatasetError) as e:
        read_huawei_vm(p)
    assert e.value.line == line and e.value.field == field, str(e.value)
    assert words in str(e.value)
    assert str(e.value).startswith(f"{p}:{line}: field '{field}'")


def test_recreation_after_deletion_is_fine(tmp_path) -> None:
    tr = read_huawei_vm(
        _write(tmp_path, "vmid,cpu,memory,time,type\n0,1,1,0,0\n0,1,1,1,1\n0,2,2,2,0\n")
    )
    assert tr.creations == 2


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("", "empty file"),
        ("\n\n", "empty file"),
        ("vmid,cpu,memory,time,type\n", "no requests"),
        ("id,cores,gb,t,kind\n0,1,1,0,0\n", "expected the header"),
    ],
)
def test_empty_or_unrecognised_files(tmp_path, text, words) -> None:
    with pytest.raises(DatasetError, match=words) as e:
        read_huawei_vm(_write(tmp_path, text))
    assert e.value.line in (1, 2)


def test_missing_file(tmp_path) -> None:
    with pytest.raises(DatasetError, match="not found"):
        load_dataset(f"huawei-vm:{tmp_path / 'nope.csv'}")


def test_registry_scheme(tmp_path) -> None:
    p = _write(tmp_path, GOOD)
    ds = load_dataset(f"huawei-vm:{p}")
    assert resolve(f"huawei-vm:{p}") == f"huawei-vm:{p}"  # already absolute
    assert ds.kind == "vm-requests" and ds.workflows == [] and isinstance(ds.trace, VMRequests)
    assert ds.license == LICENSE and "5 creations" in ds.description
    assert ds.trace.summary()["deletions_of_unknown_vms"] == 1


# ------------------------------------------------------------------ generator


def test_generator_matches_published_statistics() -> None:
    t0 = time.perf_counter()
    tr = generate_vm_requests(PUBLISHED["creations"], PUBLISHED["days"], seed=0)
    assert time.perf_counter() - t0 < 2.0
    tr.validate()
    s = tr.summary()
    assert s["creations"] == 125_430
    assert s["deletions"] == pytest.approx(116_313, rel=0.005)
    assert s["deletions_of_unknown_vms"] == 0
    assert s["vm_types"] == 15
    assert s["span_days"] <= 30 and s["span_days"] > 29.9
    cre = tr.type == 0
    small = (tr.cpu[cre] == 1) & (tr.mem[cre] <= 2)
    assert small.mean() > 2 / 3  # "more than 2/3 of the requests: 1U and at most 2G"
    assert s["alive_at_end"] > 8000 and s["peak_alive"] >= s["alive_at_end"]
    # every flavour fits one server of two 40-core / 90 GB NUMA nodes
    assert tr.cpu.max() <= 80 and tr.mem.max() <= 180
    assert {(c, m) for c, m, _ in tr.flavours()} == {(c, m) for c, m, _ in VM_TYPES}
    # diurnal: more arrivals in the afternoon than at night
    hour = (tr.time[cre] % 86400) // 3600
    assert np.mean((hour >= 12) & (hour < 16)) > 2 * np.mean((hour >= 0) & (hour < 4))


def test_generator_deterministic_and_scaled() -> None:
    a = load_dataset("synthetic:vm?creations=4000&seed=5").trace
    b = generate_vm_requests(4000, 30, seed=5)
    c = generate_vm_requests(4000, 30, seed=6)
    for col in ("vmid", "cpu", "mem", "time", "type"):
        np.testing.assert_array_equal(getattr(a, col), getattr(b, col))
    assert not np.array_equal(a.time, c.time)
    assert a.creations == 4000
    assert a.deletions / a.creations == pytest.approx(116_313 / 125_430, abs=0.02)
    short = generate_vm_requests(2000, 3, seed=0)
    assert short.time.max() < 3 * 86400 and short.deletions < 0.9 * short.creations


def test_generator_parameters() -> None:
    ds = load_dataset("synthetic:vm?creations=300&days=2&seed=1")
    assert ds.kind == "vm-requests" and ds.license.startswith("generated")
    assert ds.name == "synthetic:vm?creations=300&days=2&seed=1"
    assert "cpu" in ds.derived_fields
    with pytest.raises(DatasetError, match="creations"):
        load_dataset("synthetic:vm?creations=0")
    with pytest.raises(DatasetError, match="days"):
        load_dataset("synthetic:vm?days=-1")
    with pytest.raises(DatasetError, match="unknown parameter"):
        load_dataset("synthetic:vm?workflows=3")


def test_file_scheme_recognises_a_vm_trace_by_its_header(tmp_path) -> None:
    from rlsched.data import clear_cache, load_dataset

    p = tmp_path / "vms.csv"
    p.write_text("vmid,cpu,memory,time,type\n1,2,4,0,0\n2,4,8,1,0\n1,2,4,2,1\n")
    clear_cache()
    ds = load_dataset(f"file:{p}")
    assert ds.kind == "vm-requests" and ds.workflows == []
    assert ds.trace.creations == 2 and ds.trace.deletions == 1
    assert ds.summary()["instances"] == 0  # no workflows: summary still works
