"""Deep copies that copy only what changes: what env snapshots and simulator copies share."""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any


def lean_deepcopy(
    state: dict[str, Any],
    shared: Iterable[str],
    shallow: Iterable[str],
    memo: dict[int, Any] | None = None,
) -> dict[str, Any]:
    """A deep copy of ``state`` (attribute name -> value) in which the values named in
    ``shared`` (never changed in place) are the same objects and those named in ``shallow``
    (containers whose items never change in place) are copied one level deep; an object met
    twice stays one object in the copy (``memo``, as ``copy.deepcopy``'s)."""
    memo = {} if memo is None else memo
    for name in shared:
        if name in state:
            memo.setdefault(id(state[name]), state[name])
    for name in shallow:
        if name in state and id(state[name]) not in memo:
            memo[id(state[name])] = copy.copy(state[name])
    return copy.deepcopy(state, memo)
