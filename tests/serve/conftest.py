"""Real servers on loopback for the serving tests: uvicorn (in a thread) + grpc.server on
ports the OS picks (bound before use, so no free-port race), over a temp registry with two
fresh policies for N=4 nodes (state_dim = action_dim = 10) and a temp experience store."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest

from rlsched.serve.bundle import PolicyBundle
from rlsched.serve.connections import ServeLimits
from rlsched.serve.grpc_server import GrpcServer
from rlsched.serve.http import LOCAL_HOSTS, create_app
from rlsched.serve.metrics import ServiceMetrics
from rlsched.serve.registry import ModelRegistry
from rlsched.serve.server import _listen, uvicorn_config
from rlsched.serve.service import SchedulerService
from rlsched.serve.store import ExperienceStore

N = 4
S = A = 2 * N + 2
TOKEN = "s3cret-token"
JH = {"Content-Type": "application/json"}  # write routes need it


def make_registry(root: Path, versions: int = 2) -> ModelRegistry:
    reg = ModelRegistry(root)
    if reg.current_version() is None:
        for seed in range(versions):
            reg.publish(PolicyBundle.fresh(S, A, seed=seed), note=f"seed {seed}")
        reg.activate(1)
    return reg


@dataclass
class Live:
    service: SchedulerService
    url: str
    grpc_address: str
    http: httpx.Client
    channel: grpc.Channel
    _stop: list[Any] = field(default_factory=list)

    def stop(self) -> None:
        for fn in reversed(self._stop):
            fn()


def start_live(
    root: Path,
    token: str | None = None,
    host: str = "127.0.0.1",
    limits: ServeLimits | None = None,
    allowed_hosts: tuple[str, ...] | None = LOCAL_HOSTS,
) -> Live:
    reg = make_registry(root / "registry")
    store = ExperienceStore(root / "experiences.sqlite")
    svc = SchedulerService(registry=reg, store=store, token=token)
    metrics = ServiceMetrics(svc)
    limits = limits or ServeLimits()
    app = create_app(svc, metrics, allowed_hosts=allowed_hosts, body_timeout=limits.body_timeout)

    import uvicorn

    sock = _listen(host, 0)
    port = sock.getsockname()[1]
    g = GrpcServer(svc, host, 0, metrics, limits=limits).start()
    server = uvicorn.Server(uvicorn_config(app, limits, "error"))
    t = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    t.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not t.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.01)
    h = f"[{host}]" if ":" in host else host
    live = Live(
        svc,
        f"http://{h}:{port}",
        f"{h}:{g.port}",
        httpx.Client(base_url=f"http://{h}:{port}", timeout=10.0),
        grpc.insecure_channel(f"{h}:{g.port}"),
    )

    def stop_http() -> None:
        server.should_exit = True
        t.join(10)
        sock.close()

    live._stop = [
        svc.close,
        lambda: g.stop(grace=0.5),
        stop_http,
        live.http.close,
        live.channel.close,
    ]
    return live


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    lv = start_live(tmp_path_factory.mktemp("live"))
    yield lv
    lv.stop()


@pytest.fixture(scope="module")
def live_token(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    lv = start_live(tmp_path_factory.mktemp("live_token"), token=TOKEN)
    yield lv
    lv.stop()


# ---------------------------------------------------------------------------- subprocess server
_HTTP_LINE = re.compile(r"^HTTP\s+(http://\S+)")
_GRPC_LINE = re.compile(r"^gRPC\s+(\S+)")


@dataclass
class Proc:
    proc: subprocess.Popen[str]
    url: str
    grpc_address: str
    lines: list[str]


def start_cli(args: list[str], timeout: float = 30.0, env: dict[str, str] | None = None) -> Proc:
    """``rlsched serve ARGS --http-port 0 --grpc-port 0`` in a subprocess; waits for the
    two 'listening' lines and for /health."""
    proc = subprocess.Popen(
        [sys.executable, "-c", "from rlsched.cli import main; main()", "serve", *args,
         "--host", "127.0.0.1", "--http-port", "0", "--grpc-port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )  # fmt: skip
    assert proc.stdout is not None
    lines: list[str] = []
    url = gaddr = None
    deadline = time.monotonic() + timeout
    while url is None or gaddr is None:
        line = proc.stdout.readline()
        if not line:
            proc.wait(5)
            raise RuntimeError("rlsched serve exited:\n" + "".join(lines))
        lines.append(line)
        if m := _HTTP_LINE.match(line):
            url = m.group(1)
        if m := _GRPC_LINE.match(line):
            gaddr = m.group(1)
        if time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError("rlsched serve did not start:\n" + "".join(lines))
    threading.Thread(target=lambda: [lines.append(x) for x in proc.stdout], daemon=True).start()
    while True:
        try:
            if httpx.get(url + "/health", timeout=2).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError("rlsched serve did not answer /health")
        time.sleep(0.05)
    return Proc(proc, url, gaddr, lines)


# ---------------------------------------------------------------------------- PostgreSQL
@pytest.fixture(scope="session")
def postgres() -> Iterator[Any]:
    """A throwaway PostgreSQL server on 127.0.0.1 for the session (as an unprivileged user
    when the tests run as root); skips only when no server binaries exist."""
    from rlsched.serve.pg_local import LocalPostgres, find_bin_dir

    if find_bin_dir() is None:
        pytest.skip(
            "no PostgreSQL server binaries (initdb, postgres) on PATH or under "
            "/usr/lib/postgresql/*/bin: `make test` installs Debian's postgresql with apt-get"
        )
    pg = LocalPostgres.create(fsync=False)  # a database per test: no fsync storms
    yield pg
    pg.destroy()


_schema_counter = iter(range(1, 10**6))


@pytest.fixture
def pg_url(postgres: Any) -> Iterator[str]:
    """A URL whose connections see a new, empty schema of the session's server (one per test;
    cheaper than a database per test, whose copies of the template would pile up)."""
    import psycopg

    name = f"t{next(_schema_counter)}"
    with psycopg.connect(postgres.url, autocommit=True) as c:
        c.execute(f"CREATE SCHEMA {name}")
    yield f"{postgres.url}?options=-csearch_path%3D{name}"
    with psycopg.connect(postgres.url, autocommit=True) as c:
        c.execute(f"DROP SCHEMA {name} CASCADE")
