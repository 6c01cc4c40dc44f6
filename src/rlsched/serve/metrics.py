"""Prometheus metrics of one :class:`~rlsched.serve.service.SchedulerService` (own registry).

* ``rlsched_requests_total{transport,endpoint,code}``: requests answered (HTTP status or gRPC
  code); ``rlsched_request_errors_total{...}`` the failed ones (HTTP >= 400, gRPC not OK; a client
  that disconnected before its answer, HTTP 499 / gRPC CANCELLED, is counted in requests only);
* ``rlsched_request_duration_seconds{transport,endpoint}``: latency (sub-millisecond buckets);
* ``rlsched_model_version`` (-1: none), ``rlsched_model_swaps_total``;
* ``rlsched_experiences_stored_total`` (acknowledged by this process),
  ``rlsched_experiences_in_store{consumed}`` (rows in the store, read at scrape time);
* ``rlsched_learner_updates_total{result}``: accepted (published), rejected, skipped,
  discarded (the served version changed while it trained), error;
  ``rlsched_learner_running``;
* ``rlsched_uptime_seconds``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.exposition import generate_latest
from prometheus_client.registry import Collector

log = logging.getLogger("rlsched.serve")

LATENCY_BUCKETS = (
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
)  # fmt: skip

# a client that went away (HTTP 499, gRPC CANCELLED) is not a failure of the service
_NOT_FAILED = ("OK", "499", "CANCELLED")

# learner.status() keys counted as accepted / rejected updates (first one present wins)
_ACCEPTED_KEYS = ("published", "accepted")
_REJECTED_KEYS = ("rejected",)


def _first_number(d: dict[str, Any], keys: tuple[str, ...]) -> float | None:
    for k in keys:
        v = d.get(k)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return float(v)
    return None


class _ServiceCollector(Collector):
    """Values read from the service, its store and its learner when Prometheus scrapes."""

    def __init__(self, service: Any) -> None:
        self.service = service

    def collect(self) -> Iterator[Any]:
        svc = self.service
        v = svc.model_version
        g = GaugeMetricFamily("rlsched_model_version", "Served model registry version (-1: none).")
        g.add_metric([], -1 if v is None else v)
        yield g
        c = CounterMetricFamily("rlsched_model_swaps", "Swaps of the served model.")
        c.add_metric([], svc.swaps)
        yield c
        c = CounterMetricFamily(
            "rlsched_experiences_stored", "Experiences acknowledged by this process."
        )
        c.add_metric([], svc.experiences_stored)
        yield c
        g = GaugeMetricFamily("rlsched_uptime_seconds", "Seconds since the service started.")
        g.add_metric([], svc.uptime_s)
        yield g
        if svc.store is not None:
            g = GaugeMetricFamily(
                "rlsched_experiences_in_store", "Experiences in the store.", labels=["consumed"]
            )
            try:
                g.add_metric(["false"], svc.store.count(consumed=False))
                g.add_metric(["true"], svc.store.count(consumed=True))
                yield g
            except Exception:  # closed store during shutdown
                log.debug("store count failed", exc_info=True)
        st = svc.learner_status()
        if st is not None:
            c = CounterMetricFamily(
                "rlsched_learner_updates", "Online learner updates by result.", labels=["result"]
            )
            for label, keys in (
                ("accepted", _ACCEPTED_KEYS),
                ("rejected", _REJECTED_KEYS),
                ("skipped", ("skipped",)),
                ("discarded", ("discarded",)),
                ("error", ("errors",)),
            ):
                c.add_metric([label], _first_number(st, keys) or 0.0)
            yield c
            g = GaugeMetricFamily("rlsched_learner_running", "1 while the learner thread runs.")
            g.add_metric([], 1.0 if st.get("running") else 0.0)
            yield g


class ServiceMetrics:
    """Request counters and histograms shared by the HTTP and gRPC servers."""

    content_type = CONTENT_TYPE_LATEST

    def __init__(self, service: Any) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "rlsched_requests", "Requests answered.", ["transport", "endpoint", "code"],
            registry=self.registry,
        )  # fmt: skip
        self.errors = Counter(
            "rlsched_request_errors", "Requests that failed (HTTP >= 400, gRPC not OK).",
            ["transport", "endpoint", "code"], registry=self.registry,
        )  # fmt: skip
        self.latency = Histogram(
            "rlsched_request_duration_seconds", "Request latency inside the server.",
            ["transport", "endpoint"], buckets=LATENCY_BUCKETS, registry=self.registry,
        )  # fmt: skip
        self.registry.register(_ServiceCollector(service))
        self._children: dict[tuple[str, str, str], tuple[Any, Any, Any]] = {}

    def observe(self, transport: str, endpoint: str, code: str | int, seconds: float) -> None:
        key = (transport, endpoint, str(code))
        ch = self._children.get(key)
        if ch is None:
            failed = key[2] not in _NOT_FAILED and not (key[2].isdigit() and int(key[2]) < 400)
            ch = (
                self.requests.labels(*key),
                self.latency.labels(transport, endpoint),
                self.errors.labels(*key) if failed else None,
            )
            self._children[key] = ch
        ch[0].inc()
        ch[1].observe(seconds)
        if ch[2] is not None:
            ch[2].inc()

    def render(self) -> bytes:
        return generate_latest(self.registry)
