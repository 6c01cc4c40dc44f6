"""DAG helpers shared by every workflow representation (parents given as index tuples)."""

from __future__ import annotations

import heapq
from collections.abc import Sequence

import numpy as np


def children_of(parents: Sequence[Sequence[int]]) -> list[list[int]]:
    """Direct successors of each node, from each node's direct predecessors."""
    kids: list[list[int]] = [[] for _ in parents]
    for i, ps in enumerate(parents):
        for p in ps:
            kids[p].append(i)
    return kids


def topological_order(
    parents: Sequence[Sequence[int]], priority: Sequence[float] | np.ndarray | None = None
) -> list[int]:
    """Kahn's algorithm: every node after its parents; among ready nodes the highest
    ``priority`` first (ties, or no priority: the lowest index).

    Raises ``ValueError`` on a cycle.
    """
    n = len(parents)
    indeg = [len(ps) for ps in parents]
    kids = children_of(parents)
    if priority is None:
        heap: list[tuple[float, int]] = [(0.0, i) for i in range(n) if indeg[i] == 0]
    else:
        heap = [(-float(priority[i]), i) for i in range(n) if indeg[i] == 0]
    heapq.heapify(heap)
    order: list[int] = []
    while heap:
        _, i = heapq.heappop(heap)
        order.append(i)
        for c in kids[i]:
            indeg[c] -= 1
            if indeg[c] == 0:
                heapq.heappush(heap, (0.0 if priority is None else -float(priority[c]), c))
    if len(order) != n:
        raise ValueError("the graph has a cycle")
    return order
