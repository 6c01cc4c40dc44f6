"""Huawei Cloud VM requests (the VMAgent ``Huawei-East-1`` format): ``huawei-vm:PATH``.

A CSV of ``vmid,cpu,memory,time,type`` rows (cpu in cores, memory in GB, time in seconds from
the trace start, type 0 = create and 1 = delete), sorted by time, with that header or without
one (the same five columns in that order). The published dataset (30 days of one Huawei Cloud
region, East China: 125,430 creations and 116,313 deletions of 15 VM types) is CC-BY-NC-4.0 and
not shipped; point the loader at your copy. ``synthetic:vm`` generates a trace with the same
statistics (:mod:`rlsched.data.synthetic_vm`).

Malformed input raises :class:`~rlsched.errors.DatasetError` naming file, line and field: a
cell that is not a number, a negative cpu or memory, a type other than 0 / 1, a time earlier
than the previous row's, a vmid that is not an integer, or the creation of a vmid that is live
(created and not deleted since). The deletion of a vmid that is not live is valid (the VM was
created before the trace started) and is ignored at replay.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from rlsched.core.vm import COLUMNS, VMRequests
from rlsched.data._util import abs_path, existing_file, read_rows, req_float
from rlsched.data.dataset import Dataset
from rlsched.data.registry import register
from rlsched.errors import DatasetError

LICENSE = (
    "CC-BY-NC-4.0 (Huawei Cloud VM placement dataset; not shipped: point the loader at your copy)"
)

REAL_FIELDS = {
    "vmid": "vmid",
    "cpu": "cpu (cores)",
    "mem": "memory (GB)",
    "time": "time (s)",
    "type": "type (0 create, 1 delete)",
}


def _header_or_data(first: list[str], path: Path) -> bool:
    """True when the first row is the header; False when it is a data row (headerless)."""
    cells = [c.strip().lower() for c in first]
    if set(COLUMNS) <= set(cells):
        return True
    if len(cells) >= len(COLUMNS):
        try:
            [float(c) for c in cells[: len(COLUMNS)]]
            return False
        except ValueError:
            pass
    raise DatasetError(
        f"expected the header {','.join(COLUMNS)} or {len(COLUMNS)} numeric columns in that "
        f"order, got {','.join(first)[:120]!r}",
        source=path,
        line=1,
    )


def _slow_column(path: Path, cells: list[str], lines: list[int], field: str) -> None:
    """Find and report the first cell of a column that is not a number."""
    for v, line in zip(cells, lines, strict=True):
        req_float(v, path, line, field)
    raise AssertionError("unreachable: numpy rejected a column every cell of which parses")


def _to_array(path: Path, cells: list[str], lines: list[int], field: str) -> np.ndarray:
    try:
        return np.asarray(cells, dtype=np.str_).astype(np.float64)
    except ValueError:
        _slow_column(path, cells, lines, field)
        raise


def read_huawei_vm(path: str | Path) -> VMRequests:
    """Parse and validate one VM request file (see the module docstring)."""
    p = existing_file(path, "VM request file")
    rows, lines = read_rows(p)
    if not rows:
        raise DatasetError(f"empty file, expected rows of {','.join(COLUMNS)}", source=p, line=1)
    if _header_or_data(rows[0], p):
        header = [c.strip().lower() for c in rows[0]]
        idx = [header.index(c) for c in COLUMNS]
        rows, lines = rows[1:], lines[1:]
        if not rows:
            raise DatasetError("no requests after the header", source=p, line=2)
    else:
        idx = list(range(len(COLUMNS)))
    width = max(idx) + 1
    for row, line in zip(rows, lines, strict=True):
        if len(row) < width:
            missing = next(c for c, i in zip(COLUMNS, idx, strict=True) if i >= len(row))
            raise DatasetError(
                f"row has {len(row)} cells, expected {width}", source=p, line=line, field=missing
            )
    cols = {c: [r[i] for r in rows] for c, i in zip(COLUMNS, idx, strict=True)}
    vals = {c: _to_array(p, cols[c], lines, c) for c in COLUMNS}
    line_arr = np.asarray(lines, dtype=np.int64)
    for c in ("vmid", "type"):
        v = vals[c]
        frac = ~np.isfinite(v) | (v != np.round(v))
        if frac.any():
            i = int(np.argmax(frac))
            raise DatasetError(
                f"{cols[c][i].strip()!r} is not an integer", source=p, line=lines[i], field=c
            )
    try:  # exact for ids beyond 2^53, which the float parse above would round
        vmid = np.asarray(cols["vmid"], dtype=np.str_).astype(np.int64)
    except (ValueError, OverflowError):  # "12.0" and the like: integral floats
        vmid = vals["vmid"].astype(np.int64)
    reqs = VMRequests(vmid, vals["cpu"], vals["memory"], vals["time"], vals["type"])
    bad = (vals["type"] != 0) & (vals["type"] != 1)  # before the int8 cast could wrap it
    if bad.any():
        i = int(np.argmax(bad))
        raise DatasetError(
            f"{cols['type'][i].strip()} is not 0 (create) or 1 (delete)",
            source=p,
            line=lines[i],
            field="type",
        )
    return reqs.validate(p, line_arr)


def vm_dataset(
    name: str, reqs: VMRequests, *, description: str, source: str, license: str = ""
) -> Dataset:
    """A :class:`Dataset` holding a VM trace (no workflows)."""
    return Dataset(
        name=name,
        workflows=[],
        description=description,
        source=source,
        license=license,
        real_fields=dict(REAL_FIELDS),
        trace=reqs,
    )


def load_huawei_vm(path: str, params: dict[str, str]) -> Dataset:
    reqs = read_huawei_vm(path)
    s = reqs.summary()
    desc = (
        f"Huawei Cloud VM requests: {s['creations']:,} creations, {s['deletions']:,} deletions "
        f"over {s['span_days']:.1f} days, {s['vm_types']} VM types"
    )
    return vm_dataset(f"huawei-vm:{path}", reqs, description=desc, source=str(path))


register(
    "huawei-vm",
    load_huawei_vm,
    "Huawei Cloud VM requests (VMAgent's Huawei-East-1 format: vmid,cpu,memory,time,type; "
    "type 0 create, 1 delete), for rlsched/VMPlacement-v0; header optional",
    ["huawei-vm:/data/Huawei-East-1.csv"],
    LICENSE,
    canonical_path=abs_path,
)
