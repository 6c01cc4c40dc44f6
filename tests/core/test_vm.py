"""VMRequests: dtypes, deletion targets, validation messages, summary statistics."""

import numpy as np
import pytest

from rlsched.core.vm import VMRequests
from rlsched.errors import DatasetError


def _trace() -> VMRequests:
    return VMRequests.from_rows(
        [
            (7, 1, 2, 0, 1),  # deletes a VM created before the trace: refers to nothing
            (1, 2, 4, 0, 0),
            (2, 4, 8, 10, 0),
            (1, 2, 4, 3600, 1),  # vm 1 lived 1 h
            (1, 1, 1, 3700, 0),  # id 1 again, now a new VM
            (1, 1, 1, 3700, 1),  # ... deleted at once
            (1, 1, 1, 3800, 1),  # not live any more
            (3, 2, 4, 86400, 0),
        ]
    )


def test_columns_and_counts() -> None:
    tr = _trace()
    assert len(tr) == 8 and tr.creations == 4 and tr.deletions == 4
    assert tr.vmid.dtype == np.int64 and tr.type.dtype == np.int8
    assert tr.cpu.dtype == tr.mem.dtype == tr.time.dtype == np.float64
    assert tr.kind == "vm-requests"
    with pytest.raises(ValueError, match="entries"):
        VMRequests(np.arange(3), np.ones(2), np.ones(3), np.zeros(3), np.zeros(3))
    empty = VMRequests.from_rows([])
    assert len(empty) == 0 and empty.targets.shape == (0,)


def test_targets_follow_live_ids() -> None:
    tr = _trace()
    assert tr.targets.tolist() == [-1, -1, -1, 1, -1, 4, -1, -1]
    np.testing.assert_array_equal(tr.lifetimes(), [3600.0, 0.0])
    assert tr.alive().tolist() == [0, 1, 2, 1, 2, 1, 1, 2]


def test_validate_accepts_good_trace() -> None:
    tr = _trace()
    assert tr.validate() is tr


@pytest.mark.parametrize(
    ("rows", "line", "field", "words"),
    [
        ([(1, -1, 2, 0, 0)], 1, "cpu", "negative"),
        ([(1, 1, 2, 0, 0), (2, 1, -2, 1, 0)], 2, "memory", "negative"),
        ([(1, 1, 2, 0, 0), (2, 1, 2, 1, 3)], 2, "type", "not 0"),
        ([(1, 1, 2, 5, 0), (2, 1, 2, 4, 0)], 2, "time", "sorted"),
        ([(1, 1, 2, 0, 0), (1, 1, 2, 1, 0)], 2, "vmid", "created again while live"),
        ([(1, float("nan"), 2, 0, 0)], 1, "cpu", "not finite"),
    ],
)
def test_validate_names_row_and_field(rows, line, field, words) -> None:
    with pytest.raises(DatasetError) as e:
        VMRequests.from_rows(rows).validate("trace.csv")
    assert (e.value.source, e.value.line, e.value.field) == ("trace.csv", line, field)
    assert words in str(e.value) and str(e.value).startswith(f"trace.csv:{line}: field")


def test_validate_reports_first_bad_row_and_file_lines() -> None:
    rows = [(1, 1, 2, 0, 0), (1, 1, 2, 1, 0), (2, -1, 2, 2, 0), (3, 1, 2, 0, 0)]
    with pytest.raises(DatasetError) as e:
        VMRequests.from_rows(rows).validate("f.csv", np.array([2, 5, 9, 12]))
    assert e.value.line == 5 and e.value.field == "vmid" and "line 2" in str(e.value)


def test_summary_statistics() -> None:
    s = _trace().summary()
    assert s["creations"] == 4 and s["deletions"] == 4
    assert s["deletions_of_unknown_vms"] == 2 and s["deleted_fraction"] == 0.5
    assert s["alive_at_end"] == 2 and s["peak_alive"] == 2
    assert s["span_days"] == pytest.approx(1.0)
    assert s["vm_types"] == 3
    assert next(iter(s["vm_type_mix"])) == "2 cpu / 4 GB"  # the most frequent first
    assert s["mean_lifetime_h"] == pytest.approx(0.5)
    assert s["mean_cpu"] == pytest.approx(9 / 4)
    assert (
        len(
            VMRequests.from_rows([(i, i + 1, 1, i, 0) for i in range(12)]).summary(top=3)[
                "vm_type_mix"
            ]
        )
        == 4
    )


def test_write_csv(tmp_path) -> None:
    p = _trace().write_csv(tmp_path / "t.csv")
    lines = p.read_text().splitlines()
    assert lines[0] == "vmid,cpu,memory,time,type" and lines[1] == "7,1,2,0,1"
    assert len(lines) == 9
