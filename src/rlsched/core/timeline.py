"""An event timeline: a heap of ``(time, seq, payload)``.

The sequence number breaks ties, so events due at the same time come out in the order they were
pushed and a replay under the same seed is identical (Park's timeline does the same).
"""

from __future__ import annotations

import heapq
from typing import Generic, TypeVar

T = TypeVar("T")


class Timeline(Generic[T]):
    """Min-heap of timed events with deterministic tie-breaking."""

    __slots__ = ("_heap", "_seq")

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, T]] = []
        self._seq = 0

    def __copy__(self) -> Timeline[T]:
        """A timeline of its own (pushing to one leaves the other) sharing the events."""
        out: Timeline[T] = Timeline()
        out._heap, out._seq = list(self._heap), self._seq
        return out

    def __len__(self) -> int:
        return len(self._heap)

    def push(self, time: float, payload: T) -> None:
        heapq.heappush(self._heap, (time, self._seq, payload))
        self._seq += 1

    def peek_time(self) -> float:
        """Time of the next event, ``inf`` when empty."""
        return self._heap[0][0] if self._heap else float("inf")

    def pop(self) -> tuple[float, T]:
        time, _, payload = heapq.heappop(self._heap)
        return time, payload

    def pop_until(self, time: float) -> list[tuple[float, T]]:
        """Remove and return every event due at or before ``time``, in order."""
        out: list[tuple[float, T]] = []
        heap = self._heap
        while heap and heap[0][0] <= time:
            t, _, p = heapq.heappop(heap)
            out.append((t, p))
        return out

    def clear(self) -> None:
        self._heap.clear()
        self._seq = 0
