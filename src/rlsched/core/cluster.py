"""A cluster of nodes as numpy arrays: capacity, requests, usage, price and billing.

Resources are indexed ``CPU, MEM, NET, DISK`` (cores, GB, MB/s, MB/s). Requests (the minimum a
placed instance reserves, used for admission) cover cpu and memory; usage (what running instances
actually consume, used for contention) covers all four.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

CPU, MEM, NET, DISK = 0, 1, 2, 3
RESOURCES = ("cpu", "mem", "net", "disk")


@dataclass(frozen=True)
class NodeType:
    """One kind of node; prices are public on-demand list prices used as a realistic scale."""

    name: str
    cpu: float
    """Cores."""
    mem: float
    """GB."""
    net: float
    """Network bandwidth, MB/s."""
    disk: float
    """Disk bandwidth, MB/s."""
    price: float
    """Dollars per hour while billed."""


#: Default node catalog: AWS EC2 us-east-1 on-demand Linux list prices (2024), a stand-in for
#: edge servers of several sizes; network and disk bandwidth by instance class (MB/s).
EDGE_CATALOG: tuple[NodeType, ...] = (
    NodeType("c5.xlarge", 4, 8, 600, 300, 0.17),
    NodeType("m5.xlarge", 4, 16, 600, 300, 0.192),
    NodeType("c5.2xlarge", 8, 16, 1200, 500, 0.34),
    NodeType("m5.2xlarge", 8, 32, 1200, 500, 0.384),
    NodeType("c5.4xlarge", 16, 32, 1200, 800, 0.68),
    NodeType("m5.4xlarge", 16, 64, 1200, 800, 0.768),
    NodeType("m5.8xlarge", 32, 128, 1250, 1000, 1.536),
)


class Cluster:
    """Node state in arrays of shape ``(N,)`` / ``(N, R)``; no Python loop over nodes."""

    def __init__(
        self,
        capacity: np.ndarray,
        price: np.ndarray,
        names: list[str] | None = None,
        active: np.ndarray | None = None,
    ) -> None:
        capacity = np.asarray(capacity, dtype=np.float64)
        if capacity.ndim != 2 or capacity.shape[1] != 4:
            raise ValueError("capacity must have shape (N, 4): cpu, mem, net, disk")
        if np.any(capacity <= 0):
            raise ValueError("every node capacity must be positive")
        self.capacity = capacity
        self.price = np.asarray(price, dtype=np.float64).reshape(len(capacity))
        self.names = names or [f"node-{i}" for i in range(len(capacity))]
        self.active = (
            np.ones(len(capacity), dtype=bool) if active is None else np.asarray(active, bool)
        )
        self.requested = np.zeros((len(capacity), 2))
        self.usage = np.zeros((len(capacity), 4))
        self.free_cpu = self.capacity[:, 0].copy()
        self.free_mem = self.capacity[:, 1].copy()
        self._fit_cpu = np.where(self.active, self.free_cpu, -np.inf)

    @property
    def num_nodes(self) -> int:
        return int(self.capacity.shape[0])

    @classmethod
    def sample(
        cls,
        num_nodes: int,
        rng: np.random.Generator,
        catalog: tuple[NodeType, ...] = EDGE_CATALOG,
        price_jitter: float = 0.2,
    ) -> Cluster:
        """A heterogeneous cluster drawn from ``catalog``.

        Edge sites price the same hardware differently, so each node's price is the list price
        times a uniform factor in ``[1 - price_jitter, 1 + price_jitter]``.
        """
        kinds = rng.integers(0, len(catalog), size=num_nodes)
        cap = np.array([[c.cpu, c.mem, c.net, c.disk] for c in catalog])[kinds]
        price = np.array([c.price for c in catalog])[kinds]
        price = price * rng.uniform(1 - price_jitter, 1 + price_jitter, size=num_nodes)
        names = [f"{catalog[k].name}-{i}" for i, k in enumerate(kinds)]
        return cls(cap, price, names)

    def reset(self) -> None:
        """Empty every node; picks up changes made to ``active`` since the last reset."""
        self.requested.fill(0.0)
        self.usage.fill(0.0)
        self.free_cpu = self.capacity[:, 0].copy()
        self.free_mem = self.capacity[:, 1].copy()
        self._fit_cpu = np.where(self.active, self.free_cpu, -np.inf)

    def free(self) -> np.ndarray:
        """Unreserved (cpu, mem) per node, shape ``(N, 2)``."""
        return self.capacity[:, :2] - self.requested

    def fits(self, cpu: float, mem: float) -> np.ndarray:
        """Nodes that are active and have ``cpu`` cores and ``mem`` GB unreserved."""
        # inactive nodes hold -inf in _fit_cpu, so two comparisons decide; the tolerance keeps
        # float residue of released requests from blocking an exact fit
        return (self._fit_cpu >= cpu - 1e-9) & (self.free_mem >= mem - 1e-9)

    def set_active(self, node: int, active: bool) -> None:
        """Take a node out of service (it keeps its running work) or bring it back."""
        self.active[node] = active
        self._fit_cpu[node] = self.free_cpu[node] if active else -np.inf

    def place(self, node: int, cpu: float, mem: float, usage: tuple[float, ...]) -> None:
        """Reserve ``cpu``/``mem`` and add ``usage`` (cpu, mem, net, disk) on ``node``."""
        # scalar updates of one row: cheaper than row arithmetic at this size
        r, u = self.requested, self.usage
        r[node, 0] += cpu
        r[node, 1] += mem
        self.free_cpu[node] -= cpu
        self.free_mem[node] -= mem
        if self.active[node]:
            self._fit_cpu[node] = self.free_cpu[node]
        u[node, 0] += usage[0]
        u[node, 1] += usage[1]
        u[node, 2] += usage[2]
        u[node, 3] += usage[3]

    def release(self, node: int, cpu: float, mem: float, usage: tuple[float, ...]) -> None:
        """Undo :meth:`place`; an emptied node reads exactly zero despite float rounding."""
        r, u = self.requested, self.usage
        rc, rm = r[node, 0] - cpu, r[node, 1] - mem
        r[node, 0] = rc if rc > 1e-9 else 0.0
        r[node, 1] = rm if rm > 1e-9 else 0.0
        self.free_cpu[node] = self.capacity[node, 0] - r[node, 0]
        self.free_mem[node] = self.capacity[node, 1] - r[node, 1]
        if self.active[node]:
            self._fit_cpu[node] = self.free_cpu[node]
        for k in range(4):
            v = u[node, k] - usage[k]
            u[node, k] = v if v > 1e-9 else 0.0

    def utilization(self) -> np.ndarray:
        """Usage / capacity per resource, shape ``(N, 4)``; above 1 means oversubscribed."""
        return self.usage / self.capacity


class Billing:
    """Per-node billing periods: a node is billed from its first placement while idle until its
    last instance ends plus a keep-alive period; cost is committed as periods extend.

    ``committed_cost()`` never decreases: it only grows when a placement extends a period.
    """

    def __init__(self, price_per_hour: np.ndarray, keepalive: float) -> None:
        self.rate = np.asarray(price_per_hour, dtype=np.float64) / 3600.0
        self.keepalive = float(keepalive)
        n = len(self.rate)
        self.billed_until = np.full(n, -np.inf)
        self.period_start = np.zeros(n)
        self.closed = np.zeros(n)

    def reset(self) -> None:
        self.billed_until.fill(-np.inf)
        self.period_start.fill(0.0)
        self.closed.fill(0.0)

    def delta(self, node: int, now: float, busy_until: float) -> float:
        """Cost a placement on ``node`` at ``now`` running until ``busy_until`` would add."""
        until = float(self.billed_until[node])
        end = busy_until + self.keepalive
        if until < now:
            return float(self.rate[node]) * (end - now)
        return float(self.rate[node]) * max(0.0, end - until)

    def extend(self, node: int, now: float, busy_until: float) -> float:
        """Bill ``node`` through ``busy_until + keepalive``; returns the cost added."""
        until = float(self.billed_until[node])
        rate = float(self.rate[node])
        end = busy_until + self.keepalive
        if until < now:  # idle: close the old period, open a new one now
            if until != -np.inf:
                self.closed[node] += rate * (until - self.period_start[node])
            self.period_start[node] = now
            self.billed_until[node] = end
            return rate * (end - now)
        if end > until:
            self.billed_until[node] = end
            return rate * (end - until)
        return 0.0

    def committed_cost(self) -> float:
        """Dollars committed so far: closed periods plus open periods through their end."""
        open_ = np.where(np.isfinite(self.billed_until), self.billed_until - self.period_start, 0)
        return float(self.closed.sum() + (self.rate * open_).sum())

    def billed(self, now: float) -> np.ndarray:
        """Nodes billed at ``now``."""
        return self.billed_until >= now

    def remaining(self, now: float) -> np.ndarray:
        """Seconds of billing already committed after ``now`` per node (0 when idle)."""
        return np.maximum(self.billed_until - now, 0.0)


@dataclass(frozen=True)
class NodeView:
    """What a node-scoring heuristic sees, whatever the env: arrays over nodes.

    Envs that can be scheduled by the node heuristics expose ``node_view(observation)``.
    """

    capacity: np.ndarray
    """``(N, R)`` allocatable amount per resource (R >= 2: cpu, mem first)."""
    requested: np.ndarray
    """``(N, R)`` amount already reserved by placed work."""
    demand: np.ndarray
    """``(R,)`` what the pending item requests."""
    price: np.ndarray | None = None
    """``(N,)`` price per hour, if the env has one."""
    load: np.ndarray | None = None
    """``(N,)`` current load in [0, inf) (actual usage, not requests), if the env has one."""
    fallback_action: int | None = None
    """Action to take when no node is valid, for envs whose actions ``0..N-1`` pick a node and
    later actions do something else (e.g. delay a pod); None: actions are exactly the nodes."""
