"""VM requests: a replayable trace of VM creations and deletions (numpy only).

One row per event, sorted by time, in the Huawei Cloud / VMAgent format
``vmid,cpu,memory,time,type`` (``type`` 0 creates VM ``vmid``, 1 deletes it). A deletion
refers to the live VM of that ``vmid``: the latest creation of the id not yet deleted. A
deletion of an id that is not live (created before the trace starts, or already deleted) is
not an error: it refers to nothing and a replay ignores it. A second creation of a live id is
an error, because later deletions would be ambiguous. A deletion row's own ``cpu`` / ``memory``
are not used: a replay frees what the creation took.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from rlsched.core.columns import coerce_columns
from rlsched.errors import DatasetError

CREATE, DELETE = 0, 1
#: Column names of the CSV format, in order.
COLUMNS = ("vmid", "cpu", "memory", "time", "type")


@dataclass(frozen=True)
class VMRequests:
    """VM creation / deletion events as columns (``vmid`` int64, ``cpu`` and ``mem`` float64
    cores and GB, ``time`` float64 seconds, ``type`` int8: 0 create, 1 delete).

    Build with :meth:`from_rows` or from arrays (converted to those dtypes); :meth:`validate`
    checks the invariants a replay relies on. Treat the arrays as read-only: datasets are
    cached and shared.
    """

    vmid: np.ndarray
    cpu: np.ndarray
    mem: np.ndarray
    time: np.ndarray
    type: np.ndarray
    kind: ClassVar[str] = "vm-requests"

    def __post_init__(self) -> None:
        cols = {
            "vmid": np.int64,
            "cpu": np.float64,
            "mem": np.float64,
            "time": np.float64,
            "type": np.int8,
        }
        coerce_columns(self, cols)

    # ------------------------------------------------------------------ construction
    @staticmethod
    def from_rows(rows: Iterable[Sequence[float]]) -> VMRequests:
        """From ``(vmid, cpu, mem, time, type)`` tuples, e.g. a hand-written trace."""
        arr = [tuple(r) for r in rows]
        if any(len(r) != 5 for r in arr):
            raise ValueError("each row needs 5 values: vmid, cpu, mem, time, type")
        cols = list(zip(*arr, strict=True)) if arr else [(), (), (), (), ()]
        return VMRequests(*(np.asarray(c) for c in cols))

    def write_csv(self, path: str | Path, header: bool = True) -> Path:
        """Write the trace as ``vmid,cpu,memory,time,type`` rows (with the header)."""
        p = Path(path)
        lines = [",".join(COLUMNS)] if header else []
        lines += [
            f"{v},{c:g},{m:g},{t:g},{k}"
            for v, c, m, t, k in zip(
                self.vmid.tolist(),
                self.cpu.tolist(),
                self.mem.tolist(),
                self.time.tolist(),
                self.type.tolist(),
                strict=True,
            )
        ]
        p.write_text("\n".join(lines) + "\n")
        return p

    # ------------------------------------------------------------------ basic facts
    def __len__(self) -> int:
        return int(self.vmid.shape[0])

    @property
    def creations(self) -> int:
        return int(np.count_nonzero(self.type == CREATE))

    @property
    def deletions(self) -> int:
        return int(np.count_nonzero(self.type == DELETE))

    @functools.cached_property
    def targets(self) -> np.ndarray:
        """For each event: the event index of the creation a deletion removes, ``-1`` for a
        creation or for a deletion of an id that is not live (ignored by a replay).

        Vectorised: events are grouped by ``vmid`` in time order; a deletion removes the
        previous event of its group when that is a creation (two deletions in a row: the
        second refers to nothing).
        """
        n = len(self)
        out = np.full(n, -1, dtype=np.int64)
        if n == 0:
            return out
        order = np.lexsort((np.arange(n), self.vmid))
        prev = np.empty(n, dtype=np.int64)
        prev[0] = -1
        prev[1:] = order[:-1]
        same = np.zeros(n, dtype=bool)
        same[1:] = self.vmid[order[1:]] == self.vmid[order[:-1]]
        hit = same & (self.type[order] == DELETE)
        hit[hit] &= self.type[prev[hit]] == CREATE
        out[order[hit]] = prev[hit]
        return out

    def lifetimes(self) -> np.ndarray:
        """Deletion time minus creation time of every VM deleted within the trace."""
        tgt = self.targets
        d = np.flatnonzero(tgt >= 0)
        return self.time[d] - self.time[tgt[d]]

    # ------------------------------------------------------------------ validation
    def validate(
        self, source: str | Path | None = None, lines: np.ndarray | None = None
    ) -> VMRequests:
        """Raise :class:`~rlsched.errors.DatasetError` on the first broken row.

        Checks: cpu and memory finite and >= 0, time finite and non-decreasing, type 0 or 1,
        and no creation of an id that is live (created and not yet deleted). ``lines`` maps
        row index -> file line for the message (default: row index + 1). Returns ``self``.
        """
        src = source if source is not None else "<vm requests>"
        problems: list[tuple[int, str, str]] = []  # (row, field, message): the first is raised
        for name, col in (("cpu", self.cpu), ("memory", self.mem), ("time", self.time)):
            bad = ~np.isfinite(col)
            if name != "time":
                bad |= col < 0
            if bad.any():
                i = int(np.argmax(bad))
                v = col[i]
                msg = f"{v:g} is negative" if np.isfinite(v) else f"{v} is not finite"
                problems.append((i, name, msg))
        bad = (self.type != CREATE) & (self.type != DELETE)
        if bad.any():
            i = int(np.argmax(bad))
            problems.append((i, "type", f"{int(self.type[i])} is not 0 (create) or 1 (delete)"))
        back = np.diff(self.time) < 0
        if back.any():
            i = int(np.argmax(back)) + 1
            problems.append(
                (
                    i,
                    "time",
                    f"{self.time[i]:g} is earlier than the previous row's {self.time[i - 1]:g} "
                    "(the trace must be sorted by time)",
                )
            )
        # a creation whose previous event of the same id is a creation: created while live
        n = len(self)
        if n > 1:
            order = np.lexsort((np.arange(n), self.vmid))
            same = self.vmid[order[1:]] == self.vmid[order[:-1]]
            dup = same & (self.type[order[1:]] == CREATE) & (self.type[order[:-1]] == CREATE)
            if dup.any():
                k = np.flatnonzero(dup)
                rows = order[1:][k]
                j = int(np.argmin(rows))
                i, first = int(rows[j]), int(order[:-1][k[j]])
                where = int(lines[first]) if lines is not None else first + 1
                problems.append(
                    (
                        i,
                        "vmid",
                        f"vm {int(self.vmid[i])} is created again while live (created at line "
                        f"{where}, not deleted since)",
                    )
                )
        if problems:
            i, field, msg = min(problems)
            line = int(lines[i]) if lines is not None else i + 1
            raise DatasetError(msg, source=src, line=line, field=field)
        return self

    # ------------------------------------------------------------------ statistics
    def flavours(self) -> list[tuple[float, float, int]]:
        """``(cpu, mem, creations)`` per distinct VM type, most frequent first."""
        c = self.type == CREATE
        if not c.any():
            return []
        pairs = np.stack([self.cpu[c], self.mem[c]], axis=1)
        uniq, counts = np.unique(pairs, axis=0, return_counts=True)
        order = np.argsort(-counts, kind="stable")
        return [(float(uniq[i, 0]), float(uniq[i, 1]), int(counts[i])) for i in order]

    def alive(self) -> np.ndarray:
        """Number of live VMs after each event (deletions of ids not live do not count)."""
        step = np.where(self.type == CREATE, 1, 0) - (self.targets >= 0)
        return np.cumsum(step)

    def summary(self, top: int = 8) -> dict[str, Any]:
        """Facts for ``rlsched datasets show``: counts, span, VM-type mix, lifetimes."""
        n_c, n_d = self.creations, self.deletions
        matched = int(np.count_nonzero(self.targets >= 0))
        span = float(self.time[-1] - self.time[0]) if len(self) else 0.0
        fl = self.flavours()
        mix = {f"{c:g} cpu / {m:g} GB": f"{k / max(n_c, 1):.1%} ({k:,})" for c, m, k in fl[:top]}
        if len(fl) > top:
            rest = sum(k for *_, k in fl[top:])
            mix[f"{len(fl) - top} other types"] = f"{rest / max(n_c, 1):.1%} ({rest:,})"
        life = self.lifetimes()
        cre = self.type == CREATE
        alive = self.alive()
        return {
            "events": len(self),
            "creations": n_c,
            "deletions": n_d,
            "deletions_of_unknown_vms": n_d - matched,
            "deleted_fraction": matched / n_c if n_c else 0.0,
            "alive_at_end": int(alive[-1]) if len(alive) else 0,
            "peak_alive": int(alive.max()) if len(alive) else 0,
            "span_days": span / 86400.0,
            "vm_types": len(fl),
            "vm_type_mix": mix,
            "mean_cpu": float(self.cpu[cre].mean()) if n_c else 0.0,
            "mean_mem_gb": float(self.mem[cre].mean()) if n_c else 0.0,
            "mean_lifetime_h": float(life.mean() / 3600.0) if len(life) else float("nan"),
            "median_lifetime_h": float(np.median(life) / 3600.0) if len(life) else float("nan"),
        }
