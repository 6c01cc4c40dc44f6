"""Pod request traces: the CSV loader (format, defaults, errors) and the seeded generator."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rlsched.core.pods import PodWorkload
from rlsched.data import load_dataset
from rlsched.data.pod_requests import DEFAULT_SPREAD, generate_pods, load_pod_requests_file
from rlsched.errors import DatasetError

FIXTURE = Path(__file__).parent / "fixtures" / "pod_requests_sample.csv"
HEAD = "window,pod,node,requests,cpu,mem"


def _write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "pods.csv"
    p.write_text(text)
    return p


def test_fixture_loads_through_the_registry() -> None:
    ds = load_dataset(f"pod-requests:{FIXTURE}")
    assert ds.kind == "pod-requests" and ds.workflows == []
    wl = ds.trace
    assert isinstance(wl, PodWorkload)
    assert wl.pod_names == ("web-1", "web-2", "batch-1")
    assert wl.node_names == ("node-a", "node-b")
    assert wl.pod_node.tolist() == [0, 0, 1]
    assert wl.requests.tolist() == [[4, 4, 2], [6, 5, 3], [3, 0, 1]]  # web-2: no row in w2
    assert wl.demand_cpu[1].tolist() == [0.6, 0.6, 1.5]
    assert wl.request_cpu.tolist() == [0.5, 0.5, 1.0]
    assert wl.node_cpu.tolist() == [2.0, 4.0] and wl.node_mem.tolist() == [4.0, 8.0]
    assert wl.spread.tolist() == [0.2, 0.2, 0.1]
    assert wl.pod_service == ("web", "web", "batch")
    assert wl.mode == "serial"
    assert "request_cpu" in ds.real_fields and not ds.derived_fields
    assert wl.summary()["requests"] == 28
    par = load_dataset(f"pod-requests:{FIXTURE}?mode=parallel")
    assert par.trace.mode == "parallel"
    with pytest.raises(DatasetError, match="mode"):
        load_dataset(f"pod-requests:{FIXTURE}?mode=batch")


def test_defaults_for_missing_optional_columns(tmp_path: Path) -> None:
    p = _write(tmp_path, f"{HEAD}\n0,a,n1,2,1.0,2.0\n1,a,n1,6,2.0,1.0\n0,b,n2,0,0.5,0.5\n")
    ds = load_pod_requests_file(p)
    wl = ds.trace
    # request-weighted mean size; a pod with no requests: the plain mean
    np.testing.assert_allclose(wl.request_cpu, [(2 * 1.0 + 6 * 2.0) / 8, 0.5])
    np.testing.assert_allclose(wl.request_mem, [(2 * 2.0 + 6 * 1.0) / 8, 0.5])
    # every node: ceil(1.25 x the largest per-node request sum)
    assert wl.node_cpu.tolist() == [3.0, 3.0] and wl.node_mem.tolist() == [2.0, 2.0]
    assert wl.spread.tolist() == [DEFAULT_SPREAD] * 2
    assert {"request_cpu", "node_cpu", "spread"} <= set(ds.derived_fields)
    assert wl.pod_service == ()


@pytest.mark.parametrize(
    ("text", "line", "field"),
    [
        ("window,pod,node,requests,cpu\n0,a,n,1,1\n", 1, "mem"),
        (f"{HEAD}\n0,a,n,1.5,1,1\n", 2, "requests"),
        (f"{HEAD}\n0,a,n,1,1,1\n-1,a,n,1,1,1\n", 3, "window"),
        (f"{HEAD}\n0,a,n,1,-1,1\n", 2, "cpu"),
        (f"{HEAD}\n0,a,n,1,1,x\n", 2, "mem"),
        (f"{HEAD}\n0,a,n,1,1,1\n1,a,m,1,1,1\n", 3, "node"),
        (f"{HEAD}\n0,a,n,1,1,1\n0,a,n,2,1,1\n", 3, "window"),
        (f"{HEAD}\n0,a,n,1,1,1\n0,,n,1,1,1\n", 3, "pod"),
        (f"{HEAD}\n0,a,n,1,1\n", 2, "mem"),
        (f"{HEAD},request_cpu\n0,a,n,1,1,1,1\n1,a,n,1,1,1,2\n", 3, "request_cpu"),
        (f"{HEAD},node_cpu\n0,a,n,1,1,1,4\n0,b,n,1,1,1,8\n", 3, "node_cpu"),
        (f"{HEAD},node_cpu\n0,a,n,1,1,1,0\n", 2, "node_cpu"),
        (f"{HEAD},request_cpu,node_cpu\n0,a,n,1,1,1,3,4\n0,b,n,1,1,1,2,4\n", 2, "node_cpu"),
        (f"{HEAD}\n", 2, None),
        ("", 1, None),
    ],
)
def test_malformed_rows_name_file_line_and_field(
    tmp_path: Path, text: str, line: int, field: str | None
) -> None:
    p = _write(tmp_path, text)
    with pytest.raises(DatasetError) as e:
        load_pod_requests_file(p)
    assert e.value.source == str(p)
    assert e.value.line == line
    assert e.value.field == field


def test_node_allocatable_must_be_given_for_every_node(tmp_path: Path) -> None:
    p = _write(tmp_path, f"{HEAD},node_cpu\n0,a,n,1,1,1,4\n0,b,m,1,1,1,\n")
    with pytest.raises(DatasetError, match="'m' has no node_cpu"):
        load_pod_requests_file(p)


def test_missing_file() -> None:
    with pytest.raises(DatasetError, match="not found"):
        load_dataset("pod-requests:/nonexistent/pods.csv")


def test_generator_is_seeded() -> None:
    a = load_dataset("synthetic:pods?seed=3&windows=50").trace
    b = generate_pods(4, 40, 50, 3, "serial")
    c = generate_pods(4, 40, 50, 4, "serial")
    for f in ("requests", "demand_cpu", "request_cpu", "pod_node", "node_cpu", "spread"):
        np.testing.assert_array_equal(getattr(a, f), getattr(b, f))
    assert not np.array_equal(a.requests, c.requests)


def test_generator_shapes_and_feasibility() -> None:
    ds = load_dataset("synthetic:pods")
    wl = ds.trace
    assert ds.kind == "pod-requests" and ds.workflows == []
    assert (wl.num_nodes, wl.num_pods, wl.num_windows) == (4, 40, 288)
    assert wl.node_names[0] == "node1" and wl.pod_names[0] == "pod1"
    N = wl.num_nodes
    # the initial placement respects the requests (a scheduler placed it) ...
    assert (np.bincount(wl.pod_node, weights=wl.request_cpu, minlength=N) <= wl.node_cpu).all()
    assert (np.bincount(wl.pod_node, weights=wl.request_mem, minlength=N) <= wl.node_mem).all()
    # ... and is unbalanced: some node is much fuller than another
    fill = np.bincount(wl.pod_node, weights=wl.request_cpu, minlength=N) / wl.node_cpu
    assert fill.max() - fill.min() > 0.4
    # round-robin within a service: replicas differ by at most one request per window
    svc = np.array(wl.pod_service)
    for s in np.unique(svc):
        counts = wl.requests[:, svc == s]
        assert (counts.max(axis=1) - counts.min(axis=1) <= 1).all()
    # traffic follows the day
    per_window = wl.requests.sum(axis=1)
    assert per_window.max() > 1.2 * per_window.min()


def test_generator_parallel_mode_and_params() -> None:
    ser = generate_pods(3, 12, 20, 0, "serial")
    par = load_dataset("synthetic:pods?nodes=3&pods=12&windows=20&mode=parallel").trace
    assert par.mode == "parallel"
    np.testing.assert_array_equal(ser.requests, par.requests)
    conc = ser.requests.mean() / 10
    np.testing.assert_allclose(par.demand_cpu * conc, ser.demand_cpu)
    with pytest.raises(DatasetError, match="nodes"):
        load_dataset("synthetic:pods?nodes=0")
    with pytest.raises(DatasetError, match="mode"):
        load_dataset("synthetic:pods?mode=fast")
    one = generate_pods(1, 1, 1, 0, "serial")
    assert one.num_pods == 1 and one.request_cpu[0] <= one.node_cpu[0]
