"""Several replicas on one machine, for ``make cluster-demo``, the cluster tests and
``benchmarks/bench_cluster.py``: a throwaway PostgreSQL (:mod:`rlsched.serve.pg_local`),
``rlsched serve --store URL`` replicas and ``rlsched learn`` processes on loopback, and a
load of clients sending ``/predict`` and idempotent ``/update`` round-robin over the replicas
(retrying on another replica after a failure), with a log to check against the database.

``python -m rlsched.serve.cluster`` runs the demo: PostgreSQL, 3 replicas, an active and a
standby learner, 8 clients for a short load, a summary; everything is cleaned up at exit.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from rlsched.serve.pg_local import LocalPostgres

N_NODES = 4
DIM = 2 * N_NODES + 2


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-c", "from rlsched.cli import main; main()", *args]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    src = str(Path(__file__).resolve().parents[2])  # this checkout's src/ first
    env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.setdefault("OMP_NUM_THREADS", "1")
    return env


@dataclass
class Replica:
    """One ``rlsched serve --store URL`` process on fixed ports (a restart reuses them)."""

    store_url: str
    index: int
    log_dir: Path
    http_port: int = field(default_factory=free_port)
    grpc_port: int = field(default_factory=free_port)
    extra: tuple[str, ...] = ()
    proc: subprocess.Popen[bytes] | None = None
    starts: int = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}"

    def start(self) -> None:
        self.starts += 1
        log = open(self.log_dir / f"replica{self.index}.log", "ab")  # noqa: SIM115
        self.proc = subprocess.Popen(
            _cli("serve", "--store", self.store_url, "--state-dim", str(DIM), "--action-dim",
                 str(DIM), "--http-port", str(self.http_port), "--grpc-port",
                 str(self.grpc_port), "--drain-grace", "2", *self.extra),
            stdout=log, stderr=subprocess.STDOUT, env=_env(), start_new_session=True,
        )  # fmt: skip
        log.close()

    def wait_ready(self, timeout: float = 60.0) -> float:
        """Seconds until ``/readyz`` answered 200."""
        import httpx

        t0 = time.monotonic()
        while True:
            if self.proc is not None and self.proc.poll() is not None:
                raise RuntimeError(f"replica {self.index} exited:\n{self.log_tail()}")
            try:
                if httpx.get(self.url + "/readyz", timeout=1.0).status_code == 200:
                    return time.monotonic() - t0
            except httpx.HTTPError:
                pass
            if time.monotonic() - t0 > timeout:
                raise RuntimeError(f"replica {self.index} not ready:\n{self.log_tail()}")
            time.sleep(0.05)

    def kill(self, sig: int = signal.SIGKILL) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(30)

    def log_tail(self, n: int = 3000) -> str:
        p = self.log_dir / f"replica{self.index}.log"
        return p.read_text(errors="replace")[-n:] if p.exists() else ""


@dataclass
class Learner:
    """One ``rlsched learn`` process; :meth:`metric` reads its ``/metrics``."""

    store_url: str
    index: int
    log_dir: Path
    args: tuple[str, ...] = ("--gate", "none", "--interval", "1", "--min-experiences", "64")
    metrics_port: int = field(default_factory=free_port)
    proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        log = open(self.log_dir / f"learner{self.index}.log", "ab")  # noqa: SIM115
        self.proc = subprocess.Popen(
            _cli("learn", "--store", self.store_url, "--metrics-port", str(self.metrics_port),
                 *self.args),
            stdout=log, stderr=subprocess.STDOUT, env=_env(), start_new_session=True,
        )  # fmt: skip
        log.close()

    def metrics(self) -> dict[str, float]:
        import httpx

        text = httpx.get(f"http://127.0.0.1:{self.metrics_port}/metrics", timeout=2).text
        out = {}
        for line in text.splitlines():
            m = re.match(r"^(rlsched_\w+(?:\{[^}]*\})?) (\S+)$", line)
            if m:
                out[m.group(1)] = float(m.group(2))
        return out

    def metric(self, name: str, default: float = float("nan")) -> float:
        try:
            return self.metrics().get(name, default)
        except Exception:
            return default

    def wait_metrics(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while math.isnan(self.metric("rlsched_learner_active")):  # no /metrics yet
            if self.proc is not None and self.proc.poll() is not None:
                raise RuntimeError(f"learner {self.index} exited:\n{self.log_tail()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"learner {self.index} has no /metrics:\n{self.log_tail()}")
            time.sleep(0.1)

    def kill(self, sig: int = signal.SIGKILL) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(30)

    def log_tail(self, n: int = 3000) -> str:
        p = self.log_dir / f"learner{self.index}.log"
        return p.read_text(errors="replace")[-n:] if p.exists() else ""


class Cluster:
    """PostgreSQL + ``replicas`` servers + ``learners`` learners, all on loopback."""

    def __init__(self, root: Path, replicas: int = 3, learners: int = 2,
                 learner_args: tuple[str, ...] | None = None,
                 pg: LocalPostgres | None = None, fsync: bool = True) -> None:  # fmt: skip
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self._own_pg = pg is None
        # its own temp folder (the server's user must reach it)
        self.pg = pg or LocalPostgres.create(fsync=fsync)
        self.replicas = [Replica(self.pg.url, i, self.root) for i in range(replicas)]
        kw: dict[str, Any] = {} if learner_args is None else {"args": learner_args}
        self.learners = [Learner(self.pg.url, i, self.root, **kw) for i in range(learners)]

    def start(self) -> Cluster:
        # the first replica creates the schema and the fresh policy; the others then start
        # together (as a Deployment's pods do)
        self.replicas[0].start()
        self.replicas[0].wait_ready()
        for r in self.replicas[1:]:
            r.start()
        for r in self.replicas[1:]:
            r.wait_ready()
        for ln in self.learners:
            ln.start()
            ln.wait_metrics()
        return self

    def active_learner(self, timeout: float = 30.0) -> Learner:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for ln in self.learners:
                if ln.proc is not None and ln.proc.poll() is None and \
                        ln.metric("rlsched_learner_active") == 1.0:  # fmt: skip
                    return ln
            time.sleep(0.1)
        raise RuntimeError("no active learner")

    def served_versions(self) -> list[Any]:
        """The model version each replica's ``/readyz`` reports (None: no answer)."""
        import httpx

        out = []
        for r in self.replicas:
            try:
                out.append(httpx.get(r.url + "/readyz", timeout=2).json().get("model_version"))
            except httpx.HTTPError:
                out.append(None)
        return out

    def claimed_batches(self) -> int:
        """Open batches locked by a consumer now (a learner mid-run holds its claim)."""
        import psycopg

        with psycopg.connect(self.pg.url, connect_timeout=5) as c:
            total = (c.execute(
                "SELECT COUNT(*) FROM rlsched_progress WHERE remaining > 0").fetchone() or (0,))[0]
            free = (c.execute(
                "SELECT COUNT(*) FROM (SELECT 1 FROM rlsched_progress WHERE remaining > 0 "
                "FOR UPDATE SKIP LOCKED) AS x").fetchone() or (0,))[0]
            c.rollback()
        return int(total) - int(free)

    def sql(self, query: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        import psycopg

        with psycopg.connect(self.pg.url, autocommit=True, connect_timeout=5) as c:
            return c.execute(query, params).fetchall()

    def stop(self) -> None:
        members: list[Learner | Replica] = [*self.learners, *self.replicas]
        procs = [p.proc for p in members if p.proc is not None]
        for p in procs:  # all drain at once
            with contextlib.suppress(Exception):
                p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(10)
        if self._own_pg:
            self.pg.destroy()

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


# ---------------------------------------------------------------------------- load
@dataclass
class LoadLog:
    """What the clients saw (their own log, to check against the database)."""

    acked: dict[str, int] = field(default_factory=dict)  # idempotency key -> experiences
    predicts: int = 0
    predict_latency: list[float] = field(default_factory=list)
    updates: int = 0
    update_latency: list[float] = field(default_factory=list)
    update_ok_at: list[float] = field(default_factory=list)  # time.time() of each ack
    # (time.time() when the failure was seen, replica index, what): calls that failed (each
    # was retried on another replica). The end, not the start: a call sent just before a kill
    # fails at the kill, however long it had been waiting for its answer
    predict_failures: list[tuple[float, int, str]] = field(default_factory=list)
    update_failures: list[tuple[float, int, str]] = field(default_factory=list)
    update_status: dict[int, int] = field(default_factory=dict)
    predict_status: dict[int, int] = field(default_factory=dict)
    unretried: int = 0  # calls given up on (no replica answered in time)
    lock: threading.Lock = field(default_factory=threading.Lock)


def run_load(
    urls: list[str],
    seconds: float,
    clients: int = 8,
    batch: int = 16,
    update_every: int = 2,
    log: LoadLog | None = None,
    stop: threading.Event | None = None,
    retry_for: float = 30.0,
    key_prefix: str = "",
) -> LoadLog:
    """``clients`` threads for ``seconds``: each alternates ``/predict`` and (every
    ``update_every``-th call) an idempotent ``/update`` of ``batch`` experiences, round-robin
    over ``urls``. A failed call (connection error, 5xx) is retried on the next replica with
    the same Idempotency-Key; a replica that failed is skipped until its ``/readyz`` answers
    again (as a Service's endpoints drop a pod that is not ready)."""
    import httpx

    log = log or LoadLog()
    stop = stop or threading.Event()
    # keys (and bodies) of this load only: a later load must not repeat an earlier one's
    key_prefix = key_prefix or f"L{time.time_ns()}-"
    down_until = [0.0] * len(urls)
    deadline = time.monotonic() + seconds

    def usable(i: int) -> bool:
        return time.monotonic() >= down_until[i]

    def mark_down(i: int) -> None:
        down_until[i] = time.monotonic() + 0.5

        def probe() -> None:  # readiness probe: back in rotation once ready
            while not stop.is_set():
                try:
                    if httpx.get(urls[i] + "/readyz", timeout=1).status_code == 200:
                        down_until[i] = 0.0
                        return
                except httpx.HTTPError:
                    pass
                down_until[i] = time.monotonic() + 0.5
                time.sleep(0.2)

        threading.Thread(target=probe, daemon=True).start()

    def client(ci: int) -> None:
        rng = np.random.default_rng([ci, len(key_prefix), *key_prefix.encode()])
        http = [httpx.Client(base_url=u, timeout=10.0) for u in urls]
        seq = 0
        k = ci
        try:
            while time.monotonic() < deadline and not stop.is_set():
                seq += 1
                is_update = seq % update_every == 0
                if is_update:
                    key = f"{key_prefix}c{ci}-{seq}"
                    body = {
                        "states": rng.random((batch, DIM)).round(4).tolist(),
                        "actions": rng.integers(0, DIM, batch).tolist(),
                        "rewards": rng.normal(size=batch).round(4).tolist(),
                        "dones": (rng.random(batch) < 0.1).tolist(),
                    }
                    path, headers = "/update", {"Idempotency-Key": key}
                else:
                    body = {"state": rng.random(DIM).round(4).tolist()}
                    path, headers = "/predict", {}
                give_up = time.monotonic() + retry_for
                while True:
                    k = (k + 1) % len(urls)
                    if not usable(k):
                        if not any(usable(j) for j in range(len(urls))):
                            time.sleep(0.05)
                        continue
                    t0 = time.perf_counter()
                    try:
                        r = http[k].post(path, json=body, headers=headers)
                        code, what = r.status_code, f"HTTP {r.status_code}"
                    except httpx.HTTPError as e:
                        code, what = 0, type(e).__name__
                    dt = time.perf_counter() - t0
                    with log.lock:
                        st = log.update_status if is_update else log.predict_status
                        st[code] = st.get(code, 0) + 1
                        if code == 200:
                            if is_update:
                                log.updates += 1
                                log.update_latency.append(dt)
                                log.update_ok_at.append(time.time())
                                log.acked[key] = batch
                            else:
                                log.predicts += 1
                                log.predict_latency.append(dt)
                            break
                        (log.update_failures if is_update else log.predict_failures).append(
                            (time.time(), k, what)
                        )
                    if code == 0:
                        mark_down(k)
                    elif code == 503:
                        time.sleep(0.05)  # Retry-After says 5 s; a client may try elsewhere
                    if time.monotonic() > give_up:
                        with log.lock:
                            log.unretried += 1
                        break
        finally:
            for h in http:
                h.close()

    threads = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(seconds + retry_for + 30)
    stop.set()
    return log


def check_exactly_once(cluster: Cluster, log: LoadLog) -> dict[str, int]:
    """Every acknowledged key stored exactly once: (keys acked, keys found, batches,
    experiences stored by these keys, extra batches without an acked key)."""
    rows = cluster.sql(
        "SELECT i.key, b.n FROM rlsched_idempotency i JOIN rlsched_batches b ON b.id = i.batch_id"
    )
    stored = {k: int(n) for k, n in rows}
    batches = int(cluster.sql("SELECT COUNT(*) FROM rlsched_batches")[0][0])
    missing = [k for k in log.acked if k not in stored]
    wrong = [k for k, n in log.acked.items() if stored.get(k, n) != n]
    return {
        "acked": len(log.acked),
        "missing": len(missing),
        "wrong_size": len(wrong),
        "batches": batches,
        "keys": len(stored),
        "duplicates": batches - len(stored),  # a batch per key: more batches = stored twice
        "acked_experiences": sum(log.acked.values()),
    }


def percentile(xs: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(xs), q)) if xs else float("nan")


# ---------------------------------------------------------------------------- demo
def demo(seconds: float = 15.0, root: Path | None = None) -> int:
    """``make cluster-demo``: PostgreSQL, 3 replicas, an active and a standby learner, 8
    clients for ``seconds``; one replica killed and restarted half-way; a summary."""
    import tempfile

    root = root or Path(tempfile.mkdtemp(prefix="rlsched-cluster-"))
    print(f"cluster-demo: PostgreSQL, 3 replicas and 2 learners on loopback (logs in {root})")
    with Cluster(root, replicas=3, learners=2) as c:
        c.start()
        print(f"  PostgreSQL  {c.pg.url} (as an unprivileged user; data in {c.pg.root})")
        for r in c.replicas:
            print(f"  replica {r.index}   {r.url}  gRPC 127.0.0.1:{r.grpc_port}")
        for ln in c.learners:
            print(f"  learner {ln.index}   http://127.0.0.1:{ln.metrics_port}/metrics")
        active = c.active_learner()
        print(f"  learner {active.index} holds the lock; the other is the standby")
        stop = threading.Event()
        log = LoadLog()
        t = threading.Thread(target=run_load, args=([r.url for r in c.replicas], seconds),
                             kwargs={"log": log, "stop": stop}, daemon=True)  # fmt: skip
        t.start()
        time.sleep(seconds / 2)
        victim = c.replicas[1]
        victim.kill()
        print(f"  {seconds / 2:.0f}s: replica 1 killed (SIGKILL); restarting it")
        victim.start()
        victim.wait_ready()
        t.join()
        time.sleep(1.5)  # let the learner catch up
        check = check_exactly_once(c, log)
        versions = c.sql("SELECT current FROM rlsched_registry")[0][0]
        served = []
        import httpx

        for r in c.replicas:
            served.append(httpx.get(r.url + "/readyz", timeout=2).json().get("model_version"))
        runs = c.sql("SELECT status, COUNT(*) FROM rlsched_learner_runs GROUP BY status")
        print("summary:")
        p50, p99 = (percentile(log.predict_latency, q) * 1e3 for q in (50, 99))
        print(f"  /predict  {log.predicts} answered, p50 {p50:.1f} ms, p99 {p99:.1f} ms; "
              f"{len(log.predict_failures)} failed calls (all retried)")  # fmt: skip
        print(f"  /update   {check['acked']} batches acknowledged; in the database: "
              f"{check['keys']} keys, {check['missing']} missing, {check['duplicates']} stored "
              f"twice")  # fmt: skip
        print(f"  learner   runs by outcome {dict(runs)}; current version v{versions}; "
              f"replicas serve {served}")  # fmt: skip
        ok = check["missing"] == 0 and check["duplicates"] == 0 and log.unretried == 0
    if ok:  # everything stopped and PostgreSQL removed; the logs too unless something failed
        import shutil

        shutil.rmtree(root, ignore_errors=True)
        print("OK (stopped and removed everything)")
    else:
        print(f"FAILED (logs kept in {root})")
    return 0 if ok else 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=15.0)
    a = ap.parse_args(argv)
    return demo(a.seconds)


if __name__ == "__main__":
    sys.exit(main())
