"""The gRPC server of ``rlsched serve``.

* ``scheduler.Scheduler/Predict``: the k8sSim PPO plugin's service, byte-compatible
  (``StateRequest{repeated double state = 1}`` -> ``ActionResponse{int32 action = 1}``);
* ``scheduler.SchedulerV1``: ``ScoreNodes``, ``PredictBatch``, ``Update`` (needs the
  ``authorization: Bearer <token>`` metadata when the server has a token), ``ModelInfo``;
* ``grpc.health.v1.Health``: SERVING for ``""``, ``scheduler.Scheduler`` and
  ``scheduler.SchedulerV1`` (NOT_SERVING once shutdown begins).

Bad input answers ``INVALID_ARGUMENT`` with a message, a missing/wrong token
``UNAUTHENTICATED``, too large a batch ``RESOURCE_EXHAUSTED``; messages are limited to
:data:`~rlsched.serve.service.MAX_BODY_BYTES`.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import grpc
from google.protobuf.message import DecodeError
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from rlsched.serve.connections import ServeLimits
from rlsched.serve.metrics import ServiceMetrics
from rlsched.serve.proto import scheduler_pb2 as pb
from rlsched.serve.proto import scheduler_pb2_grpc as pb_grpc
from rlsched.serve.service import (
    MAX_BODY_BYTES,
    InvalidInput,
    SchedulerService,
    ServiceError,
    node_array,
)

log = logging.getLogger("rlsched.serve")

SERVICE_NAMES = ("scheduler.Scheduler", "scheduler.SchedulerV1")


class ActiveCalls:
    """In-flight calls of the servicers (for the drain), and when that number last changed."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.count = 0
        self.changed = time.monotonic()

    def add(self, n: int) -> None:
        with self._lock:
            self.count += n
            self.changed = time.monotonic()


class _Undecodable:
    """What the lenient deserializer hands the servicer for bytes that are no valid message."""

    def __init__(self, message_name: str, error: str) -> None:
        self.message_name = message_name
        self.error = error


def _lenient(cls: Any) -> Callable[[bytes], Any]:
    """``cls.FromString``, but undecodable bytes reach the servicer (as :class:`_Undecodable`)
    instead of failing inside gRPC as INTERNAL, unanswered by us and uncounted."""

    def deserialize(data: bytes) -> Any:
        try:
            return cls.FromString(data)
        except DecodeError as e:
            return _Undecodable(cls.DESCRIPTOR.full_name, str(e))

    return deserialize


def _add_servicer(server: grpc.Server, servicer: Any, service_name: str) -> None:
    """Register ``servicer`` for ``scheduler.<service_name>`` (as the generated
    ``add_*_to_server`` does) with :func:`_lenient` request deserializers."""
    desc = pb.DESCRIPTOR.services_by_name[service_name]
    handlers = {
        m.name: grpc.unary_unary_rpc_method_handler(
            getattr(servicer, m.name),
            request_deserializer=_lenient(getattr(pb, m.input_type.name)),
            response_serializer=getattr(pb, m.output_type.name).SerializeToString,
        )
        for m in desc.methods
    }
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(desc.full_name, handlers),)
    )


def _rpc(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Map :class:`ServiceError` to its status code, anything else to INTERNAL; record metrics."""

    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def wrapper(self: _Base, request: Any, context: grpc.ServicerContext) -> Any:
            t0 = time.perf_counter()
            code = "OK"
            self.active.add(1)
            try:
                if isinstance(request, _Undecodable):
                    raise InvalidInput(
                        f"the request is not a valid {request.message_name} message "
                        f"({request.error})"
                    )
                return fn(self, request, context)
            except ServiceError as e:
                code = e.grpc_code
                context.abort(getattr(grpc.StatusCode, code), e.message)
            except Exception as e:
                code = "INTERNAL"
                log.exception("gRPC %s failed", name)
                context.abort(grpc.StatusCode.INTERNAL, f"internal error: {type(e).__name__}")
            finally:
                self.active.add(-1)
                m = self.metrics
                if m is not None:
                    m.observe("grpc", name, code, time.perf_counter() - t0)

        return wrapper

    return deco


class _Base:
    def __init__(
        self,
        service: SchedulerService,
        metrics: ServiceMetrics | None,
        active: ActiveCalls | None = None,
    ) -> None:
        self.service = service
        self.metrics = metrics
        self.active = active or ActiveCalls()


class SchedulerServicer(_Base, pb_grpc.SchedulerServicer):
    """The plugin's service."""

    @_rpc("/scheduler.Scheduler/Predict")
    def Predict(self, request: pb.StateRequest, context: grpc.ServicerContext) -> Any:
        return pb.ActionResponse(action=self.service.predict(list(request.state)))


def _version(v: int | None) -> int:
    return -1 if v is None else int(v)


class SchedulerV1Servicer(_Base, pb_grpc.SchedulerV1Servicer):
    """Batch scoring, batch predict, update and model info."""

    @_rpc("/scheduler.SchedulerV1/ScoreNodes")
    def ScoreNodes(self, request: pb.ScoreNodesRequest, context: Any) -> Any:
        nodes = request.nodes
        arr = node_array(nodes)
        res = self.service.score_arrays(
            request.pod.cpu_millicores, request.pod.memory_bytes, [n.name for n in nodes], arr
        )
        return pb.ScoreNodesResponse(
            scores=[
                pb.NodeScore(name=n, score=s, fits=f)
                for n, s, f in zip(res.names, res.scores.tolist(), res.fits.tolist(), strict=True)
            ],
            chosen_index=res.chosen_index,
            chosen_node=res.chosen_node or "",
            model_version=_version(res.model_version),
        )

    @_rpc("/scheduler.SchedulerV1/PredictBatch")
    def PredictBatch(self, request: pb.PredictBatchRequest, context: Any) -> Any:
        states = [list(s.values) for s in request.states]
        actions, version = self.service.predict_batch_with_version(states)
        return pb.PredictBatchResponse(actions=actions, model_version=_version(version))

    @_rpc("/scheduler.SchedulerV1/Update")
    def Update(self, request: pb.UpdateRequest, context: Any) -> Any:
        md = dict(context.invocation_metadata() or ())
        self.service.check_token(md.get("authorization"))
        out = self.service.update(
            [list(s.values) for s in request.states],
            list(request.actions),
            list(request.rewards),
            list(request.dones),
            request.idempotency_key or None,
        )
        return pb.UpdateResponse(
            status=out["status"],
            stored=out["stored"],
            batch_id=out["batch_id"],
            model_version=_version(out["model_version"]),
        )

    @_rpc("/scheduler.SchedulerV1/ModelInfo")
    def ModelInfo(self, request: pb.ModelInfoRequest, context: Any) -> Any:
        svc = self.service
        h = svc.health()
        versions = [
            pb.ModelVersion(
                version=v["version"], active=bool(v.get("active")), note=v.get("note") or ""
            )
            for v in svc.list_models()["versions"]
        ]
        return pb.ModelInfoResponse(
            service=h["service"],
            model_version=_version(h["model_version"]),
            state_dim=h["state_dim"],
            action_dim=h["action_dim"],
            num_nodes=h["num_nodes"],
            uptime_s=h["uptime_s"],
            versions=versions,
        )


class GrpcServer:
    """A started ``grpc.server`` with both services and health checking."""

    def __init__(
        self,
        service: SchedulerService,
        host: str = "127.0.0.1",
        port: int = 50051,
        metrics: ServiceMetrics | None = None,
        max_workers: int = 8,
        limits: ServeLimits | None = None,
    ) -> None:
        self.service = service
        lim = limits or ServeLimits()
        self.server = grpc.server(
            ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="rlsched-grpc"),
            options=[
                ("grpc.max_receive_message_length", MAX_BODY_BYTES),
                ("grpc.max_send_message_length", MAX_BODY_BYTES),
                ("grpc.so_reuseport", 0),  # fail on a taken port instead of sharing it
                # a connection that never completes its HTTP/2 handshake is dropped
                ("grpc.server_handshake_timeout_ms", int(lim.header_timeout * 1000)),
                ("grpc.max_connection_idle_ms", int(lim.grpc_max_connection_idle * 1000)),
            ],
            maximum_concurrent_rpcs=lim.grpc_max_concurrent_rpcs,  # beyond: RESOURCE_EXHAUSTED
        )
        self.active = ActiveCalls()
        _add_servicer(self.server, SchedulerServicer(service, metrics, self.active), "Scheduler")
        _add_servicer(
            self.server, SchedulerV1Servicer(service, metrics, self.active), "SchedulerV1"
        )
        self.health = health.HealthServicer(experimental_non_blocking=True)
        health_pb2_grpc.add_HealthServicer_to_server(self.health, self.server)
        self.address = grpc_address(host, port)
        try:
            self.port = self.server.add_insecure_port(self.address)
        except RuntimeError as e:
            raise OSError(f"gRPC cannot listen on {self.address}: {e}") from None
        if self.port == 0:
            raise OSError(f"gRPC cannot listen on {self.address}")
        self.host = host

    def start(self) -> GrpcServer:
        self.server.start()
        for name in ("", *SERVICE_NAMES):
            self.health.set(name, health_pb2.HealthCheckResponse.SERVING)
        return self

    def not_serving(self) -> None:
        """Health NOT_SERVING for every service (a drain has started)."""
        self.health.enter_graceful_shutdown()

    def drain(self, grace: float, quiet: float = 1.0) -> threading.Event:
        """Start a drain: health NOT_SERVING now; once no call has been in flight for
        ``quiet`` seconds, counted from the drain's start at the earliest (or once ``grace``
        is spent), stop accepting and give the calls still
        running the rest of ``grace``. Returns an event set when the server has stopped.

        Stopping at once would cancel calls that reached the server but were not yet picked
        up by a worker thread (gRPC cancels those on shutdown)."""
        self.not_serving()
        done = threading.Event()

        def run() -> None:
            start = time.monotonic()
            deadline = start + grace
            while time.monotonic() < deadline:
                # quiet since the drain began at the earliest: an idle server's last change
                # is long past, and calls sent just before the signal may not have started
                since = max(self.active.changed, start)
                if self.active.count == 0 and time.monotonic() - since >= quiet:
                    break
                time.sleep(0.02)
            self.server.stop(max(0.0, deadline - time.monotonic())).wait()
            done.set()

        threading.Thread(target=run, name="rlsched-grpc-drain", daemon=True).start()
        return done

    def stop(self, grace: float | None = 2.0) -> None:
        self.not_serving()
        self.server.stop(grace).wait()

    def wait(self, timeout: float | None = None) -> bool:
        return self.server.wait_for_termination(timeout)


def grpc_address(host: str, port: int) -> str:
    """``host:port`` as gRPC wants it (IPv6 literals in brackets)."""
    if ":" in host and not host.startswith("["):
        return f"[{host}]:{port}"
    return f"{host}:{port}"
