"""``rlsched learn --store URL``: the online learner as its own process, for replicas that
share a PostgreSQL store. It runs the same :class:`~rlsched.serve.learner.OnlineLearner` as
``rlsched serve --learn``.

Exactly one learner trains: it holds ``pg_try_advisory_lock`` on a dedicated session (its
own connection, outside the pool). Others are standbys that retry the lock every
``failover / 5`` seconds. The lock is released when its session ends: at once when the
learner exits or is killed (the server sees the socket close), and on a silent network loss
after the TCP keepalives set on that session (idle ``failover / 2`` s, then 3 probes
``failover / 10`` s apart) declare it dead. So a standby takes over within ``failover``
seconds; the active learner checks its session before each run and steps down when it is
gone. Each run consumes in one transaction (see
:meth:`PgExperienceStore.consumption`), so even two learners racing could not consume an
experience twice, and a killed one consumes nothing.

Its ``/metrics`` (Prometheus text) on ``--metrics-port``: role (active / standby), lag in
experiences, time and outcome of the last run, versions published, runs by outcome.
"""

from __future__ import annotations

import contextlib
import logging
import math
import signal
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from rlsched.serve.learner import OnlineLearner, kube_gate
from rlsched.serve.pg import LEARNER_LOCK, Database
from rlsched.serve.pg_registry import PgRegistry
from rlsched.serve.pg_store import PgExperienceStore

log = logging.getLogger("rlsched.learn")

OUTCOMES = ("published", "rejected", "skipped", "discarded", "errors")


class LeaderLock:
    """The advisory lock on its own session (autocommit; TCP keepalives on both ends)."""

    def __init__(self, conninfo: str, failover: float) -> None:
        self.conninfo = conninfo
        self.failover = float(failover)
        self.conn: Any = None

    def _connect(self) -> Any:
        import psycopg

        idle = max(1, math.floor(self.failover / 2))
        every = max(1, math.floor(self.failover / 10))
        conn = psycopg.connect(
            self.conninfo, autocommit=True, keepalives=1, keepalives_idle=idle,
            keepalives_interval=every, keepalives_count=3,
        )  # fmt: skip
        # the server's side: a learner host that vanished frees the lock after these
        conn.execute(f"SET tcp_keepalives_idle = {idle}")
        conn.execute(f"SET tcp_keepalives_interval = {every}")
        conn.execute("SET tcp_keepalives_count = 3")
        return conn

    def try_acquire(self) -> bool:
        try:
            if self.conn is None or self.conn.closed:
                self.conn = self._connect()
            row = self.conn.execute("SELECT pg_try_advisory_lock(%s)", (LEARNER_LOCK,)).fetchone()
            return bool(row[0])
        except Exception as e:
            log.warning("learner lock: %s", " ".join(str(e).split()))
            self.release()
            return False

    def alive(self) -> bool:
        """The session (and so the lock) still exists."""
        try:
            self.conn.execute("SELECT 1")
            return True
        except Exception:
            self.release()
            return False

    def release(self) -> None:
        conn, self.conn = self.conn, None
        if conn is not None:
            with contextlib.suppress(Exception):
                conn.close()  # ends the session: the lock goes with it


class LearnerMetrics:
    """What ``/metrics`` shows, as Prometheus gauges and counters of its own registry."""

    def __init__(self) -> None:
        from prometheus_client import CollectorRegistry, Counter, Gauge

        self.registry = CollectorRegistry()
        r = self.registry
        self.active = Gauge("rlsched_learner_active", "1 while this learner holds the lock "
                            "and trains, 0 as a standby", registry=r)  # fmt: skip
        self.in_run = Gauge("rlsched_learner_in_run", "1 while a run is in progress", registry=r)
        self.lag = Gauge("rlsched_learner_lag_experiences",
                         "Experiences stored and not yet consumed", registry=r)  # fmt: skip
        self.last_run = Gauge("rlsched_learner_last_run_timestamp_seconds",
                              "Unix time the last run ended", registry=r)  # fmt: skip
        self.last_outcome = Gauge("rlsched_learner_last_outcome",
                                  "1 for the outcome of the last run", ["outcome"],
                                  registry=r)  # fmt: skip
        self.published = Gauge("rlsched_learner_versions_published",
                               "Versions this learner published", registry=r)  # fmt: skip
        self.runs = Counter("rlsched_learner_runs", "Runs by outcome", ["outcome"], registry=r)
        self.takeovers = Counter("rlsched_learner_takeovers",
                                 "Times this learner became the active one", registry=r)
        for o in OUTCOMES:
            self.last_outcome.labels(o).set(0)
            self.runs.labels(o)

    def outcome(self, status: str) -> None:
        for o in OUTCOMES:
            self.last_outcome.labels(o).set(1 if o == status else 0)
        self.runs.labels(status).inc()
        self.last_run.set(time.time())

    def serve(self, host: str, port: int) -> ThreadingHTTPServer:
        from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

        registry = self.registry

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path.split("?")[0] == "/metrics":
                    body, ctype, code = generate_latest(registry), CONTENT_TYPE_LATEST, 200
                elif self.path.split("?")[0] in ("/livez", "/healthz"):
                    body, ctype, code = b'{"status": "alive"}', "application/json", 200
                else:
                    body, ctype, code = b"not found\n", "text/plain", 404
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        srv = ThreadingHTTPServer((host, port), Handler)
        srv.daemon_threads = True
        threading.Thread(target=srv.serve_forever, name="rlsched-learner-metrics",
                         daemon=True).start()  # fmt: skip
        return srv


class LearnerProcess:
    def __init__(
        self,
        url: str,
        *,
        gate: str = "kube",
        interval: float = 30.0,
        failover: float = 10.0,
        min_experiences: int = 256,
        keep_versions: int = 20,
        seed: int = 0,
        name: str | None = None,
    ) -> None:
        if not interval > 0 or not failover > 0:
            raise ValueError("--interval and --failover-timeout must be > 0 seconds")
        self.db = Database(url, max_size=3, application="rlsched-learn")
        self.store = PgExperienceStore(self.db)
        self.registry = PgRegistry(self.db)
        self.name = name or f"{socket.gethostname()}:{_pid()}"
        self.learner = OnlineLearner(
            self.registry, self.store, kube_gate() if gate == "kube" else None,
            min_experiences=min_experiences, keep_versions=keep_versions, seed=seed,
            name=self.name,
        )  # fmt: skip
        self.interval = float(interval)
        self.failover = float(failover)
        self.poll = min(1.0, self.failover / 5)
        self.lock = LeaderLock(self.db.conninfo, self.failover)
        self.metrics = LearnerMetrics()
        self._stop = threading.Event()
        self.active = False

    def stop(self, *_: Any) -> None:
        self._stop.set()

    def _step_active(self) -> None:
        """One run as the active learner, then wait ``interval`` (or until stopped)."""
        self.metrics.in_run.set(1)
        try:
            report = self.learner.run_once()
            status = report.status
        except Exception as e:
            status = "errors"
            log.warning("learner run failed: %s", " ".join(str(e).split()))
        finally:
            self.metrics.in_run.set(0)
        self.metrics.outcome(status)
        self.metrics.published.set(self.learner.counts["published"])
        self._update_lag()
        self._stop.wait(self.interval)

    def _update_lag(self) -> None:
        with contextlib.suppress(Exception):  # a down database: the gauge keeps its value
            self.metrics.lag.set(self.store.count(consumed=False))

    def run(self, echo: Any = print, metrics_host: str = "127.0.0.1",
            metrics_port: int = 9100) -> None:  # fmt: skip
        """Until SIGTERM / SIGINT: standby until the lock is ours, then train every
        ``interval`` seconds while the lock's session lives."""
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, self.stop)
            signal.signal(signal.SIGINT, self.stop)
        srv = self.metrics.serve(metrics_host, metrics_port)
        host, port = srv.server_address[:2]
        host = host.decode() if isinstance(host, bytes) else host
        echo(f"learner {self.name} on {self.db.where}; metrics http://{host}:{port}/metrics")
        echo(f"standby: waiting for the learner lock (failover within {self.failover:g}s)")
        try:
            while not self._stop.is_set():
                if not self.active:
                    if self.lock.try_acquire():
                        self.active = True
                        self.metrics.active.set(1)
                        self.metrics.takeovers.inc()
                        echo("active: holding the learner lock; training")
                    else:
                        self._update_lag()
                        self._stop.wait(self.poll)
                        continue
                if not self.lock.alive():
                    self.active = False
                    self.metrics.active.set(0)
                    echo("standby: lost the learner lock's session")
                    continue
                self._step_active()
        finally:
            self.lock.release()
            srv.shutdown()
            self.db.close()
            echo("learner stopped")


def _pid() -> int:
    import os

    return os.getpid()
