"""Connection hygiene (issue #14, item 1): idle, slow-header and stalled-body clients are
timed out, connections beyond the cap are refused at once, and the probes keep answering.
Loopback only; every socket is closed by the test; each test is bounded by its timeouts."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import httpx
import pytest

from rlsched.serve.connections import ServeLimits, raise_fd_limit
from rlsched.serve.proto import scheduler_pb2 as pb
from rlsched.serve.proto import scheduler_pb2_grpc as pb_grpc

from .conftest import Live, S, start_live

SHORT = ServeLimits(header_timeout=1.0, body_timeout=1.0, keep_alive=1.0, max_connections=2048)


@pytest.fixture(scope="module")
def short(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    lv = start_live(tmp_path_factory.mktemp("short"), limits=SHORT)
    yield lv
    lv.stop()


def _connect(url: str) -> socket.socket:
    host, port = url.rsplit("/", 1)[-1].rsplit(":", 1)
    s = socket.create_connection((host, int(port)), timeout=5)
    return s


def _read_until_closed(s: socket.socket, within: float) -> tuple[bytes, float]:
    """Everything the server sends until it closes the connection, and when that was."""
    t0 = time.monotonic()
    s.settimeout(within)
    data = b""
    try:
        while chunk := s.recv(4096):
            data += chunk
    except TimeoutError:
        raise AssertionError(f"still open after {within} s; got {data!r}") from None
    except ConnectionResetError:
        pass
    return data, time.monotonic() - t0


def test_2000_idle_connections_then_readyz_fast_and_idle_closed(short: Live) -> None:
    n = 2000
    if raise_fd_limit(2 * n + 256) < 2 * n + 256:  # both ends live in this process
        pytest.skip("the open-files limit is too low for 2,000 loopback connections")
    idle = []
    try:
        for _ in range(n):
            idle.append(_connect(short.url))
        t0 = time.monotonic()
        r = httpx.get(short.url + "/readyz", timeout=5)
        took = time.monotonic() - t0
        assert r.status_code == 200 and r.json()["status"] == "ready"
        assert took < 1.0, f"/readyz took {took:.2f} s with {n} idle connections"
        # the idle ones never sent a header: each gets 408 and is closed after ~1 s
        deadline = time.monotonic() + 5
        closed = 0
        for s in idle:
            data, _ = _read_until_closed(s, max(0.1, deadline - time.monotonic()))
            assert data == b"" or data.startswith(b"HTTP/1.1 408"), data[:80]
            closed += 1
        assert closed == n
    finally:
        for s in idle:
            s.close()


def test_slow_headers_get_408(short: Live) -> None:
    s = _connect(short.url)
    try:
        t0 = time.monotonic()
        s.sendall(b"GET /readyz HTTP/1.1\r\n")
        for i in range(20):  # a header byte every 0.2 s never completes the request
            try:
                s.sendall(b"X-Slow-%d: 1\r\n" % i)
            except OSError:
                break
            time.sleep(0.2)
            s.settimeout(0.01)
            try:
                if s.recv(1, socket.MSG_PEEK):
                    break
            except TimeoutError:
                pass
        data, _ = _read_until_closed(s, 3)
        assert data.startswith(b"HTTP/1.1 408"), data[:80]
        assert time.monotonic() - t0 < 3.0
    finally:
        s.close()


def test_declared_body_never_sent_gets_408(short: Live) -> None:
    s = _connect(short.url)
    try:
        s.sendall(
            b"POST /predict HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: 8000000\r\n\r\n{"
        )
        data, took = _read_until_closed(s, 5)
        assert data.startswith(b"HTTP/1.1 408"), data[:80]
        assert b"not received within 1 s" in data
        assert took < 4
    finally:
        s.close()
    assert httpx.get(short.url + "/livez", timeout=5).status_code == 200


def test_idle_keep_alive_connection_is_closed(short: Live) -> None:
    s = _connect(short.url)
    try:
        s.sendall(b"GET /livez HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        data, took = _read_until_closed(s, 5)  # answered, then closed when idle for ~1 s
        assert data.startswith(b"HTTP/1.1 200") and b'"alive"' in data
        assert 0.5 < took < 4
    finally:
        s.close()


def test_connections_beyond_the_cap_get_503_at_once(tmp_path) -> None:
    lv = start_live(tmp_path, limits=ServeLimits(max_connections=20, header_timeout=5.0))
    held = []
    try:
        for _ in range(20):
            held.append(_connect(lv.url))
        time.sleep(0.2)  # let the server register them
        extra = _connect(lv.url)
        data, took = _read_until_closed(extra, 2)
        extra.close()
        assert data.startswith(b"HTTP/1.1 503") and took < 1.5
        # the process keeps its descriptors: gRPC is unaffected while HTTP is full
        stub = pb_grpc.SchedulerStub(lv.channel)
        assert 0 <= stub.Predict(pb.StateRequest(state=[0.5] * S), timeout=5).action < S
        for s in held:
            s.close()
        held.clear()
        deadline = time.monotonic() + 5
        while True:  # the server notices the closed ones, then serves again
            r = httpx.get(lv.url + "/readyz", timeout=2)
            if r.status_code == 200 or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert r.status_code == 200
    finally:
        for s in held:
            s.close()
        lv.stop()


def test_limits_validate() -> None:
    with pytest.raises(ValueError, match="max_connections"):
        ServeLimits(max_connections=0)
    with pytest.raises(ValueError, match="header_timeout"):
        ServeLimits(header_timeout=0)
