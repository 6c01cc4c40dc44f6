"""WfFormat 1.5 (WfInstances) loading on the shipped files and on broken copies."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from rlsched.core.workload import Workflow
from rlsched.data import load_dataset
from rlsched.data.wfformat import WFINSTANCES, load_wfformat_file, task_type_from_name
from rlsched.errors import DatasetError

COUNTS = {
    "helloworld-10": 10,
    "srasearch-22": 22,
    "epigenomics-41": 41,
    "blast-43": 43,
    "1000genome-52": 52,
    "montage-58": 58,
}


def assert_topological(wf: Workflow) -> None:
    pos = np.empty(len(wf), dtype=int)
    pos[wf.topological_order()] = np.arange(len(wf))
    assert sorted(wf.topological_order().tolist()) == list(range(len(wf)))
    for i, t in enumerate(wf.tasks):
        for p in t.parents:
            assert pos[p] < pos[i]


@pytest.mark.parametrize("key", list(COUNTS))
def test_shipped_workflow_counts_and_dag(key: str, shipped_file) -> None:
    ds = load_dataset(f"wfinstances:{key}")
    assert len(ds.workflows) == 1
    wf = ds.workflows[0]
    raw = json.loads(shipped_file("workflows", WFINSTANCES[key]).read_text())
    spec = raw["workflow"]["specification"]["tasks"]
    assert len(wf) == COUNTS[key] == len(spec)
    assert_topological(wf)
    # every spec edge is present, by name
    names = [t.name for t in wf.tasks]
    for t, s in zip(wf.tasks, spec, strict=True):
        assert {names[p] for p in t.parents} == set(s["parents"])
    assert wf.submit_time is None
    assert all(t.runtime >= 0 for t in wf.tasks)
    assert ds.real_fields["exec_time"] == "execution.tasks[].runtimeInSeconds"
    assert wf.critical_path() > 0


def test_montage_structure() -> None:
    wf = load_dataset("wfinstances:montage-58").workflows[0]
    roots = {t.type for t in wf.tasks if not t.parents}
    assert roots == {"mProject"}
    types = {t.type for t in wf.tasks}
    assert {"mProject", "mDiffFit", "mConcatFit", "mBgModel", "mBackground"} <= types
    for t in wf.tasks:
        if t.type == "mDiffFit":
            assert {wf.tasks[p].type for p in t.parents} == {"mProject"}


def test_fields_follow_the_trace(shipped_file) -> None:
    path = shipped_file("workflows", WFINSTANCES["montage-58"])
    raw = json.loads(path.read_text())
    sizes = {f["id"]: f["sizeInBytes"] for f in raw["workflow"]["specification"]["files"]}
    ex = {e["id"]: e for e in raw["workflow"]["execution"]["tasks"]}
    wf, _ = load_wfformat_file(path)
    for t, s in zip(wf.tasks, raw["workflow"]["specification"]["tasks"], strict=True):
        e = ex[s["id"]]
        assert t.runtime == e["runtimeInSeconds"]
        assert t.type == e["command"]["program"]
        assert t.cpu_usage == pytest.approx(e["avgCPU"] / 100)
        if "memoryInBytes" in e:
            assert t.memory_gb == pytest.approx(e["memoryInBytes"] / 1e9)
        assert t.read_bytes == pytest.approx(sum(sizes[f] for f in s["inputFiles"]))
        assert t.write_bytes == pytest.approx(sum(sizes[f] for f in s["outputFiles"]))


def test_real_vs_derived_reporting() -> None:
    blast = load_dataset("wfinstances:blast-43")
    # blast (Makeflow) records coreCount, readBytes, writtenBytes and memory
    for f in ("cpu_request", "io_network", "io_disk", "mem_request", "cpu_usage", "type"):
        assert f in blast.real_fields, f
    montage = load_dataset("wfinstances:montage-58")
    # Pegasus montage has no coreCount and no readBytes: derived by the core rules
    assert "cpu_request" in montage.derived_fields
    assert "cpu_request" not in montage.real_fields
    assert "inputFiles" in montage.derived_fields["io_network"]
    for ds in (blast, montage):
        assert "arrival_time" in ds.derived_fields
        assert ds.workflows[0].real_fields
        assert ds.license.startswith("LGPL-3.0")


def test_several_and_all() -> None:
    two = load_dataset("wfinstances:montage-58,blast-43")
    assert [w.name for w in two.workflows] == ["montage-58", "blast-43"]
    every = load_dataset("wfinstances:all")
    assert len(every.workflows) == 6
    assert sum(len(w) for w in every.workflows) == sum(COUNTS.values())
    with pytest.raises(DatasetError, match="montage-99"):
        load_dataset("wfinstances:montage-99")


def test_type_from_name() -> None:
    assert task_type_from_name("mProject_ID0000001") == "mProject"
    assert task_type_from_name("cpuhog_forkjoin_00000001") == "cpuhog_forkjoin"
    assert task_type_from_name("split_fasta_ID000001") == "split_fasta"
    assert task_type_from_name("123") == "123"


# ----------------------------------------------------------------- broken copies


@pytest.fixture
def montage(shipped_file) -> dict:
    return json.loads(shipped_file("workflows", WFINSTANCES["montage-58"]).read_text())


def write(tmp_path: Path, doc: dict, name: str = "broken.json") -> Path:
    p = tmp_path / name
    p.write_text(json.dumps(doc, indent=1))
    return p


def load_err(path: Path) -> DatasetError:
    with pytest.raises(DatasetError) as e:
        load_dataset(f"file:{path}")
    assert path.name in str(e.value)
    return e.value


def test_truncated_json_names_file_and_line(tmp_path, shipped_file) -> None:
    text = shipped_file("workflows", WFINSTANCES["montage-58"]).read_text()
    p = tmp_path / "truncated.json"
    p.write_text(text[: len(text) // 2])
    err = load_err(p)
    assert err.line is not None and err.line > 100
    assert f"truncated.json:{err.line}" in str(err)


@pytest.mark.parametrize(
    "path, field",
    [
        (("workflow",), "workflow"),
        (("workflow", "specification"), "workflow.specification"),
        (("workflow", "specification", "tasks"), "workflow.specification.tasks"),
        (("workflow", "execution"), "workflow.execution"),
    ],
)
def test_missing_sections(tmp_path, montage, path, field) -> None:
    obj = montage
    for k in path[:-1]:
        obj = obj[k]
    del obj[path[-1]]
    err = load_err(write(tmp_path, montage))
    assert err.field == field
    assert f"'{field}'" in str(err)


def test_task_without_execution_record(tmp_path, montage) -> None:
    gone = montage["workflow"]["execution"]["tasks"].pop(3)
    err = load_err(write(tmp_path, montage))
    assert gone["id"] in str(err)
    assert err.field == "workflow.execution.tasks"


@pytest.mark.parametrize(
    "value, word", [(-1.5, "negative"), ("fast", "not a finite number"), (None, "missing")]
)
def test_bad_runtime(tmp_path, montage, value, word) -> None:
    e = montage["workflow"]["execution"]["tasks"][5]
    if value is None:
        del e["runtimeInSeconds"]
    else:
        e["runtimeInSeconds"] = value
    err = load_err(write(tmp_path, montage))
    assert word in str(err)
    assert e["id"] in str(err)
    assert err.field == "workflow.execution.tasks[5].runtimeInSeconds"


def test_unknown_parent(tmp_path, montage) -> None:
    montage["workflow"]["specification"]["tasks"][7]["parents"].append("mGhost_ID9")
    err = load_err(write(tmp_path, montage))
    assert "mGhost_ID9" in str(err)
    assert err.field == "workflow.specification.tasks[7].parents"


def test_cycle(tmp_path, montage) -> None:
    tasks = montage["workflow"]["specification"]["tasks"]
    # make a root depend on one of its descendants
    root = tasks[0]
    child = root["children"][0]
    root["parents"].append(child)
    err = load_err(write(tmp_path, montage))
    assert "cycle" in str(err)
    assert root["id"] in str(err)
