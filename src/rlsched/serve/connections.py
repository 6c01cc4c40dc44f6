"""Connection hygiene for the HTTP server: the limits ``rlsched serve`` runs with and the
uvicorn protocol that enforces the two uvicorn has no setting for.

uvicorn itself bounds in-flight work (``limit_concurrency``: 503 beyond it) and idle
keep-alive connections (``timeout_keep_alive``). It has no timeout for a client that opens a
connection and sends its headers slowly or never (its keep-alive timer is only armed after a
response, and every received byte disarms it), and it accepts connections until the process
runs out of file descriptors. :func:`guarded_protocol` adds both on top of uvicorn's
httptools protocol:

* header timeout: from the connection's first byte slot (or the end of the previous response)
  to the end of the request headers; a client that has not finished by then gets
  ``408`` and the connection is closed;
* connection cap: a connection beyond ``max_connections`` gets ``503`` and is closed at once,
  so the process keeps descriptors for its own files, gRPC and the probes.

The body read timeout is enforced by the ASGI edge middleware (:mod:`rlsched.serve.http`).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from rlsched.errors import ConfigError

log = logging.getLogger("rlsched.serve")


@dataclass(frozen=True)
class ServeLimits:
    """Per-process limits (flags of ``rlsched serve``; defaults documented in docs/serving.md)."""

    max_connections: int = 2048  # open HTTP connections (and uvicorn's limit_concurrency)
    header_timeout: float = 10.0  # s to receive a request's headers; then 408 and close
    body_timeout: float = 30.0  # s to receive a request's body; then 408 and close
    keep_alive: float = 5.0  # s an idle keep-alive connection is kept
    drain_grace: float = 10.0  # s in-flight HTTP and gRPC calls get after SIGTERM / SIGINT
    grpc_max_concurrent_rpcs: int = 1024  # beyond: RESOURCE_EXHAUSTED
    grpc_max_connection_idle: float = 300.0  # s before an idle gRPC connection gets GOAWAY

    def __post_init__(self) -> None:
        for name in ("max_connections", "grpc_max_concurrent_rpcs"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name} must be >= 1")
        for name in ("header_timeout", "body_timeout", "keep_alive", "grpc_max_connection_idle"):
            if not getattr(self, name) > 0:
                raise ConfigError(f"{name} must be > 0 seconds")
        if self.drain_grace < 0:
            raise ConfigError("drain_grace must be >= 0 seconds")


def _canned(status: bytes) -> bytes:
    body = b'{"error":"%s"}' % status
    return (
        b"HTTP/1.1 %s\r\ncontent-type: application/json\r\nconnection: close\r\n"
        b"content-length: %d\r\n\r\n%s" % (status, len(body), body)
    )


_408 = _canned(b"408 Request Timeout")
_503 = _canned(b"503 Service Unavailable")


def guarded_protocol(limits: ServeLimits) -> type[asyncio.Protocol]:
    """An uvicorn ``http`` protocol class with the header timeout and connection cap."""

    class GuardedProtocol(HttpToolsProtocol):
        _header_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            if len(self.connections) > limits.max_connections:
                transport.write(_503)
                transport.close()
                return
            self._arm_header_timer()

        def _arm_header_timer(self) -> None:
            if self._header_timer is None:
                self._header_timer = self.loop.call_later(
                    limits.header_timeout, self._header_timed_out
                )

        def _disarm_header_timer(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _header_timed_out(self) -> None:
            self._header_timer = None
            if not self.transport.is_closing():
                self.transport.write(_408)
                self.transport.close()

        def data_received(self, data: bytes) -> None:
            if self.cycle is None or self.cycle.response_complete:
                self._arm_header_timer()  # a new request starts: its headers are timed
            super().data_received(data)

        def on_headers_complete(self) -> None:
            self._disarm_header_timer()
            super().on_headers_complete()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm_header_timer()
            super().connection_lost(exc)

    return GuardedProtocol


def raise_fd_limit(wanted: int) -> int:
    """Raise the soft open-files limit towards ``wanted`` (up to the hard limit); returns
    the soft limit now in force."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not POSIX
        return wanted
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):  # pragma: no cover
            pass
    return wanted if soft == resource.RLIM_INFINITY else soft
