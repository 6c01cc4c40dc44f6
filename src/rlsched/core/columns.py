"""Frozen dataclasses of equal-length numpy columns (request traces)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np


def coerce_columns(obj: Any, dtypes: Mapping[str, Any]) -> int:
    """Set each field of the frozen dataclass ``obj`` named in ``dtypes`` to a contiguous 1-D
    array of that dtype; the row count. A column of another length than the first is a
    ValueError naming both."""
    n: int | None = None
    first = next(iter(dtypes))
    for name, dtype in dtypes.items():
        arr = np.ascontiguousarray(np.asarray(getattr(obj, name)).reshape(-1), dtype=dtype)
        object.__setattr__(obj, name, arr)
        if n is None:
            n = len(arr)
        elif len(arr) != n:
            raise ValueError(f"column {name!r} has {len(arr)} entries, {first} has {n}")
    return n or 0
