"""Helpers shared by the loaders: shipped files, checked CSV reading, typed params, provenance.

Every error is a :class:`~rlsched.errors.DatasetError` naming the file and line or field, so a
user can fix a broken trace without reading a traceback.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterator, Sequence
from importlib.resources import files
from pathlib import Path

from rlsched.errors import DatasetError

#: Rules of :mod:`rlsched.core.workload` a loader cites when the trace lacks a field.
RULES: dict[str, str] = {
    "cpu_request": "no CPU request in the trace: cpu_usage rounded up to 0.25 core, else 1 core",
    "cpu_usage": "no measured CPU usage in the trace: equal to cpu_request",
    "mem_request": "no memory in the trace: clip(bytes read + written, 128 MB, 8 GB)",
    "io_network": "no I/O in the trace: 0 MB/s",
    "io_disk": "no I/O in the trace: 0 MB/s",
    "requests": "1 invocation per instance",
    "arrival_time": "workflow submit time + earliest start (longest chain of parent runtimes)",
}


def shipped(family: str, filename: str) -> Path:
    """Path of a data file shipped in ``rlsched/datasets/<family>/``.

    The wheel installs the package unzipped, so the resource is a real file; loaders want a
    path for their error messages.
    """
    return Path(str(files("rlsched.datasets").joinpath(family, filename)))


def abs_path(path: str) -> str:
    """Canonical form of a user path: absolute, ``~`` expanded, symlinks kept."""
    return str(Path(path).expanduser().absolute())


def existing_file(path: str | Path, what: str = "file") -> Path:
    p = Path(path).expanduser()
    if not p.is_file():
        raise DatasetError(f"{what} not found", source=p)
    return p


def to_float(
    value: str,
    source: Path | str,
    line: int,
    field: str,
    *,
    minimum: float | None = None,
    allow_empty: bool = False,
) -> float | None:
    """Parse one CSV cell as a finite float (``None`` for an empty cell when allowed)."""
    v = value.strip()
    if not v:
        if allow_empty:
            return None
        raise DatasetError("empty value, expected a number", source=source, line=line, field=field)
    try:
        x = float(v)
    except ValueError:
        raise DatasetError(
            f"{value!r} is not a number", source=source, line=line, field=field
        ) from None
    if not math.isfinite(x):
        raise DatasetError(f"{value!r} is not finite", source=source, line=line, field=field)
    if minimum is not None and x < minimum:
        raise DatasetError(
            f"{x:g} is negative" if minimum == 0 else f"{x:g} < {minimum:g}",
            source=source,
            line=line,
            field=field,
        )
    return x


def req_float(
    value: str, source: Path | str, line: int, field: str, minimum: float | None = None
) -> float:
    x = to_float(value, source, line, field, minimum=minimum)
    assert x is not None
    return x


def read_rows(path: Path) -> tuple[list[list[str]], list[int]]:
    """Every non-blank row of a CSV file and its 1-based line number (for files read whole;
    :class:`CsvTable` streams a file with a required header)."""
    with path.open(newline="", encoding="utf-8-sig") as fh:
        reader = csv.reader(fh)
        rows: list[list[str]] = []
        lines: list[int] = []
        try:
            for row in reader:
                if not row or (len(row) == 1 and not row[0].strip()):
                    continue
                rows.append(row)
                lines.append(reader.line_num)
        except csv.Error as e:
            raise DatasetError(f"malformed CSV: {e}", source=path, line=reader.line_num) from None
    return rows, lines


class CsvTable:
    """A CSV file with a header, read row by row with 1-based file line numbers.

    ``cols`` maps each required column to its index; a missing column is reported with the
    header line (1) and the column name.
    """

    def __init__(self, path: Path, required: Sequence[str], *, header: Sequence[str] | None = None):
        self.path = path
        self._fh = path.open(newline="", encoding="utf-8-sig")
        self._reader = csv.reader(self._fh)
        if header is None:
            try:
                header = [h.strip() for h in next(self._reader)]
            except StopIteration:
                self._fh.close()
                raise DatasetError(
                    "empty file, expected a CSV header", source=path, line=1
                ) from None
        self.header = list(header)
        self.cols: dict[str, int] = {}
        for name in required:
            if name not in self.header:
                self._fh.close()
                raise DatasetError(
                    f"missing column (header has {', '.join(self.header)[:200]})",
                    source=path,
                    line=1,
                    field=name,
                )
            self.cols[name] = self.header.index(name)

    def rows(self) -> Iterator[tuple[int, list[str]]]:
        """``(line, cells)`` for every non-blank row; short rows are an error."""
        width = len(self.header)
        try:
            for row in self._reader:
                line = self._reader.line_num
                if not row or (len(row) == 1 and not row[0].strip()):
                    continue
                if len(row) < width:
                    missing = self.header[len(row)]
                    raise DatasetError(
                        f"row has {len(row)} cells, header has {width}",
                        source=self.path,
                        line=line,
                        field=missing,
                    )
                yield line, row
        except csv.Error as e:
            raise DatasetError(
                f"malformed CSV: {e}", source=self.path, line=self._reader.line_num
            ) from None
        finally:
            self._fh.close()


def int_param(
    params: dict[str, str],
    key: str,
    source: str,
    *,
    minimum: int | None = None,
    default: int | None = None,
) -> int | None:
    """A dataset-name parameter as an int, or ``default`` when absent."""
    raw = params.get(key)
    if raw is None or raw == "":
        return default
    try:
        v = int(raw)
    except ValueError:
        raise DatasetError(
            f"parameter {key}={raw!r} is not an integer", source=source, field=key
        ) from None
    if minimum is not None and v < minimum:
        raise DatasetError(f"parameter {key}={v} must be >= {minimum}", source=source, field=key)
    return v


def float_param(
    params: dict[str, str],
    key: str,
    source: str,
    *,
    positive: bool = True,
    default: float | None = None,
) -> float | None:
    raw = params.get(key)
    if raw is None or raw == "":
        return default
    try:
        v = float(raw)
    except ValueError:
        raise DatasetError(
            f"parameter {key}={raw!r} is not a number", source=source, field=key
        ) from None
    if not math.isfinite(v) or (positive and v <= 0):
        raise DatasetError(
            f"parameter {key}={raw} must be a positive number", source=source, field=key
        )
    return v


def coverage(
    field: str,
    have: int,
    total: int,
    real_desc: str,
    rule: str,
    real: dict[str, str],
    derived: dict[str, str],
) -> None:
    """File ``field`` under real, derived or both, depending on how many tasks had the column."""
    if total and have == total:
        real[field] = real_desc
    elif have == 0:
        derived[field] = rule
    else:
        real[field] = f"{real_desc} ({have} of {total} tasks)"
        derived[field] = f"{rule} (other {total - have} tasks)"
