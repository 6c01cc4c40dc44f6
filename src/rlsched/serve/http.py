"""The FastAPI app of ``rlsched serve``: the plugin's REST wire format plus v1, the
kube-scheduler extender and ``/metrics``. Every 4xx answers ``{"error": "..."}``.

Request models are built per service (:func:`create_app`) so that the OpenAPI schema states
the exact state length the served model takes. The hot endpoints return pre-serialised
``Response`` objects (no ``jsonable_encoder`` round trip).
"""

import asyncio
import json
import logging
import time
from typing import Annotated, Any

import anyio
from fastapi import Depends, FastAPI, Header, Request
from fastapi import Path as PathParam
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from rlsched.serve import extender as ext
from rlsched.serve.metrics import ServiceMetrics
from rlsched.serve.service import (
    MAX_BODY_BYTES,
    MAX_NODES,
    REWARD_LIMIT,
    STATE_LIMIT,
    Forbidden,
    SchedulerService,
    ServiceError,
    Unavailable,
    UnsupportedMediaType,
    node_array,
)

log = logging.getLogger("rlsched.serve")

JSON = "application/json"


# ---------------------------------------------------------------------------- response models
class ErrorResponse(BaseModel):
    error: str


class PredictResponse(BaseModel):
    action: int


class HealthResponse(BaseModel):
    status: str
    service: str
    model_version: int | None
    state_dim: int
    action_dim: int
    num_nodes: int
    uptime_s: float


class UpdateResponse(BaseModel):
    status: str
    stored: int
    batch_id: int
    model_version: int | None


class PredictBatchResponse(BaseModel):
    actions: list[int]
    model_version: int | None


class NodeScore(BaseModel):
    name: str
    score: float
    fits: bool


class ScoreResponse(BaseModel):
    scores: list[NodeScore]
    chosen_index: int
    chosen_node: str | None
    model_version: int | None


class ModelVersionInfo(BaseModel):
    model_config = ConfigDict(extra="allow")
    version: int
    active: bool
    note: str = ""


class ModelsResponse(BaseModel):
    active: int | None
    versions: list[ModelVersionInfo]


class ActivateResponse(BaseModel):
    status: str
    model_version: int | None


StateValue = Annotated[
    float, Field(strict=True, allow_inf_nan=False, ge=-STATE_LIMIT, le=STATE_LIMIT)
]
Reward = Annotated[
    float, Field(strict=True, allow_inf_nan=False, ge=-REWARD_LIMIT, le=REWARD_LIMIT)
]
NonNegative = Annotated[float, Field(strict=True, allow_inf_nan=False, ge=0)]


class PodIn(BaseModel):
    name: str = ""
    cpu_millicores: NonNegative
    memory_bytes: NonNegative


class NodeIn(BaseModel):
    name: str
    cpu_allocatable_millicores: NonNegative
    memory_allocatable_bytes: NonNegative
    cpu_used_millicores: NonNegative = 0.0
    memory_used_bytes: NonNegative = 0.0


class ScoreRequest(BaseModel):
    """One pod against candidate nodes (cpu in millicores, memory in bytes)."""

    pod: PodIn
    nodes: Annotated[list[NodeIn], Field(min_length=1, max_length=MAX_NODES)]


def _request_models(state_dim: int, action_dim: int) -> dict[str, type[BaseModel]]:
    """Request bodies whose schema carries the served model's dimensions."""
    State = Annotated[list[StateValue], Field(min_length=state_dim, max_length=state_dim)]
    Action = Annotated[int, Field(strict=True, ge=0, le=action_dim - 1)]

    class PredictRequest(BaseModel):
        """The plugin's ``/predict`` body: one state of ``2N+2`` numbers."""

        state: State

    class PredictBatchRequest(BaseModel):
        states: Annotated[list[State], Field(min_length=1)]

    class UpdateRequest(BaseModel):
        """The plugin's ``/update`` body: equally long lists (at most 4096 per call)."""

        states: Annotated[list[State], Field(min_length=1)]
        actions: list[Action]
        rewards: list[Reward]
        dones: list[Annotated[bool, Field(strict=True)]]

    return {
        "PredictRequest": PredictRequest,
        "PredictBatchRequest": PredictBatchRequest,
        "UpdateRequest": UpdateRequest,
    }


# ---------------------------------------------------------------------------- helpers
def _json(obj: Any, status: int = 200) -> Response:
    return Response(
        content=json.dumps(obj, separators=(",", ":")).encode(), status_code=status, media_type=JSON
    )


OFFLOAD_BYTES = 64 * 1024  # bodies larger than this are parsed in a worker thread


def _json_body(
    model: type[BaseModel], defs: dict[str, Any] | None = None
) -> tuple[Any, dict[str, Any]]:
    """A dependency parsing the request body with pydantic's Rust JSON parser, and the
    ``openapi_extra`` that documents it. Every route with a body uses it: one strict parser
    (UTF-8 only, no BOM, no trailing data) and one error format.

    FastAPI's default (``json.loads`` then validation) costs about 4x more on a 1,000-number
    state; the schema stays in the OpenAPI document for clients and fuzzers. A body over
    :data:`OFFLOAD_BYTES` is validated in a worker thread, so a 7 MiB extender request does
    not stall the event loop (and every other client) for seconds.
    """

    def validate(raw: bytes) -> Any:
        try:
            return model.model_validate_json(raw)
        except ValidationError as e:
            errors = [{**err, "loc": ("body", *err["loc"])} for err in e.errors(include_url=False)]
            raise RequestValidationError(errors, body=raw) from None

    async def parse(request: Request) -> Any:
        raw = await request.body()
        if len(raw) > OFFLOAD_BYTES:
            return await anyio.to_thread.run_sync(validate, raw)
        return validate(raw)

    # nested models are referenced from the OpenAPI components (``defs`` collects them)
    schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
    if defs is not None:
        defs.update(schema.pop("$defs", {}))
    extra = {"requestBody": {"required": True, "content": {JSON: {"schema": schema}}}}
    return Depends(parse), extra


def _error(status: int, message: str) -> Response:
    return _json({"error": message}, status)


def _validation_message(exc: RequestValidationError) -> str:
    parts = []
    errors = exc.errors()
    for e in errors[:3]:
        loc = [str(x) for x in e.get("loc", ()) if x != "body"]
        where = ".".join(loc)
        msg = e.get("msg", "invalid")
        if e.get("type") == "json_invalid":
            err = (e.get("ctx") or {}).get("error", "")
            parts.append(f"body is not valid JSON (UTF-8): {err or msg}")
            continue
        if e.get("type") == "missing" and not loc:
            msg = "request body is missing"
        parts.append(f"{where}: {msg}" if where else msg)
    if len(errors) > 3:
        parts.append(f"and {len(errors) - 3} more")
    return "; ".join(parts) or "invalid request"


class _Edge:
    """Pure ASGI middleware: reads a request's whole body before the app runs, within
    ``body_timeout`` seconds (408) and ``limit`` bytes (413); a client that goes away meanwhile
    is recorded as 499 (not a server error, no traceback); request metrics."""

    def __init__(
        self,
        app: ASGIApp,
        metrics: ServiceMetrics | None,
        limit: int,
        body_timeout: float = 30.0,
    ) -> None:
        self.app = app
        self.metrics = metrics
        self.limit = limit
        self.body_timeout = body_timeout

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        t0 = time.perf_counter()
        status = [500]

        async def send_wrapper(message: Message) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            await send(message)

        try:
            if scope.get("method") in ("POST", "PUT", "PATCH"):
                outcome, receive = await self._read_body(scope, receive)
                if outcome == "disconnected":
                    status[0] = 499  # nginx's "client closed request"
                    return
                if outcome == "too_large":
                    await _error(413, f"request body is larger than {self.limit} bytes")(
                        scope, receive, send_wrapper
                    )
                    return
                if outcome == "timeout":
                    resp = _error(408, f"request body not received within {self.body_timeout:g} s")
                    resp.headers["connection"] = "close"
                    await resp(scope, receive, send_wrapper)
                    return
            await self.app(scope, receive, send_wrapper)
        finally:
            if self.metrics is not None:
                route = scope.get("route")
                endpoint = getattr(route, "path", None) or "unmatched"
                self.metrics.observe("http", endpoint, status[0], time.perf_counter() - t0)

    async def _read_body(self, scope: Scope, receive: Receive) -> tuple[str, Receive]:
        """("ok", replaying receive) | ("too_large" | "timeout" | "disconnected", receive)."""
        for k, v in scope.get("headers", ()):
            if k == b"content-length":
                try:
                    if int(v) > self.limit:  # refused before reading a byte
                        return "too_large", receive
                except ValueError:
                    pass
                break
        chunks: list[bytes] = []
        size = 0
        try:
            async with asyncio.timeout(self.body_timeout):
                more = True
                while more:
                    msg = await receive()
                    if msg["type"] == "http.disconnect":
                        return "disconnected", receive
                    body = msg.get("body", b"")
                    size += len(body)
                    if size > self.limit:
                        return "too_large", receive
                    chunks.append(body)
                    more = msg.get("more_body", False)
        except TimeoutError:
            return "timeout", receive
        data = b"".join(chunks)
        sent = [False]

        async def replay() -> Message:
            if not sent[0]:
                sent[0] = True
                return {"type": "http.request", "body": data, "more_body": False}
            return await receive()

        return "ok", replay


# ---------------------------------------------------------------------------- the app
LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1")


def host_name(value: str) -> str:
    """The host part of a ``Host`` header or an ``Origin`` URL, lower case, without port."""
    v = value.strip().lower()
    if "://" in v:
        v = v.split("://", 1)[1].split("/", 1)[0]
    if v.startswith("["):
        return v[1:].split("]", 1)[0]
    if v.count(":") == 1:
        return v.split(":", 1)[0]
    return v


def write_guard(allowed_hosts: tuple[str, ...] | None) -> Any:
    """A dependency for the write routes: ``Host`` (and ``Origin``, if sent) must name an
    allowed host (403) and the request must say ``Content-Type: application/json`` (415).
    A browser cannot send that content type cross-site without a CORS preflight (which this
    server never grants), and a DNS-rebound page's ``Host`` is the attacker's name: both
    checks hold with or without a token. ``allowed_hosts`` None or containing ``*``: any."""
    allowed = None if allowed_hosts is None or "*" in allowed_hosts else set(allowed_hosts)

    def guard(request: Request) -> None:
        if allowed is not None:
            host = host_name(request.headers.get("host", ""))
            if host not in allowed:
                raise Forbidden(
                    f"Host {host!r} is not allowed to write; start the server with "
                    f"--allowed-host {host or 'NAME'} if that is how clients reach it"
                )
            origin = request.headers.get("origin")
            if origin is not None and host_name(origin) not in allowed:
                raise Forbidden(f"cross-origin writes are refused (Origin {origin!r})")
        ctype = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if ctype != JSON:
            raise UnsupportedMediaType(
                f"write endpoints need 'Content-Type: {JSON}' (got {ctype or 'none'!r})"
            )

    return guard


def create_app(
    service: SchedulerService,
    metrics: ServiceMetrics | None = None,
    *,
    allowed_hosts: tuple[str, ...] | None = LOCAL_HOSTS,
    body_timeout: float = 30.0,
) -> FastAPI:
    """The FastAPI app over ``service`` (``metrics``: shared with the gRPC server).

    ``allowed_hosts``: the ``Host`` names write requests may carry (None: any);
    ``body_timeout``: seconds a request body may take to arrive (408 after)."""
    metrics = metrics if metrics is not None else ServiceMetrics(service)
    models = _request_models(service.state_dim, service.action_dim)
    PredictRequest = models["PredictRequest"]
    PredictBatchRequest = models["PredictBatchRequest"]
    UpdateRequest = models["UpdateRequest"]

    app = FastAPI(
        title="rlsched scheduler service",
        version="1",
        description=(
            "A PPO scheduling policy behind the Volcano k8sSim plugin's REST wire format, "
            f"batch v1 endpoints and a kube-scheduler extender. N = {service.num_nodes} nodes: "
            f"states have {service.state_dim} numbers, actions are 0..{service.action_dim - 1}."
        ),
        docs_url="/docs",
        redoc_url=None,
    )
    app.state.service = service
    defs: dict[str, Any] = {}  # request-body sub-schemas for the OpenAPI components
    app.state.metrics = metrics
    # the schema declares bearer auth only when this server has a token
    bearer = HTTPBearer(auto_error=False, description="The server's token (--token).")

    def require_token(
        request: Request,
        creds: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
    ) -> None:
        service.check_token(request.headers.get("authorization"))

    Auth = [Depends(write_guard(allowed_hosts))]
    if service.token:
        Auth.append(Depends(require_token))
    # FastAPI's `responses`: status code -> OpenAPI response
    Responses = dict[int | str, dict[str, Any]]
    bad: Responses = {400: {"model": ErrorResponse, "description": "Bad input"}}
    big: Responses = {413: {"model": ErrorResponse, "description": "Body or batch too large"}}
    auth: Responses = {
        401: {"model": ErrorResponse, "description": "Missing or wrong bearer token"},
        403: {"model": ErrorResponse, "description": "Host or Origin not allowed to write"},
        415: {"model": ErrorResponse, "description": "Content-Type is not application/json"},
    }
    mgmt: Responses = {
        404: {"model": ErrorResponse, "description": "No such version"},
        409: {"model": ErrorResponse, "description": "Not possible on this server"},
    }

    # -------------------------------------------------------------- error handlers
    @app.exception_handler(ServiceError)
    async def _service_error(request: Request, exc: ServiceError) -> Response:
        resp = _error(exc.http_status, exc.message)
        if isinstance(exc, Unavailable) and exc.retry_after is not None:
            resp.headers["retry-after"] = str(exc.retry_after)
        return resp

    @app.exception_handler(RequestValidationError)
    async def _validation_error(request: Request, exc: RequestValidationError) -> Response:
        if request.url.path.startswith("/extender/") and any(
            tuple(e.get("loc", ()))[:2] == ("body", "Nodes")
            and (e.get("type") == "missing" or e.get("input") is None)
            for e in exc.errors()
        ):
            return _error(400, ext.NODE_CACHE_MESSAGE)
        return _error(400, _validation_message(exc))

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> Response:
        resp = _error(exc.status_code, str(exc.detail))
        for k, v in (exc.headers or {}).items():
            resp.headers[k] = v
        return resp

    @app.exception_handler(Exception)
    async def _internal_error(request: Request, exc: Exception) -> Response:  # pragma: no cover
        log.exception("internal error on %s", request.url.path)
        return _error(500, f"internal error: {type(exc).__name__}")

    # -------------------------------------------------------------- plugin wire format
    @app.get("/health", response_model=HealthResponse, tags=["plugin"])
    async def health() -> Response:
        """Liveness plus what is served."""
        return _json(service.health())

    @app.get("/livez", tags=["ops"])
    async def livez() -> Response:
        """The process is alive (its event loop answers): a liveness probe."""
        return _json({"status": "alive"})

    @app.get("/readyz", tags=["ops"], responses={503: {"model": ErrorResponse}})
    async def readyz() -> Response:
        """A model is loaded and the server is not draining: a readiness probe (503 if not)."""
        ok, why = service.readiness()
        if not ok:
            return _error(503, why)
        return _json({"status": why, "model_version": service.model_version})

    predict_body, predict_doc = _json_body(PredictRequest, defs)

    @app.post(
        "/predict",
        response_model=PredictResponse,
        responses={**bad, **big},
        tags=["plugin"],
        openapi_extra=predict_doc,
    )
    async def predict(body: Any = predict_body) -> Response:
        """The greedy action for one state (the plugin calls this per candidate node)."""
        a = service.predict(body.state)
        return Response(content=b'{"action":%d}' % a, media_type=JSON)

    update_body, update_doc = _json_body(UpdateRequest, defs)

    @app.post(
        "/update",
        response_model=UpdateResponse,
        responses={
            **bad,
            **big,
            **auth,
            409: {"model": ErrorResponse, "description": "Idempotency-Key reused"},
            503: {"model": ErrorResponse, "description": "Store unavailable (Retry-After)"},
        },
        dependencies=Auth,
        tags=["plugin"],
        openapi_extra=update_doc,
    )
    def update(
        body: Any = update_body,
        idempotency_key: Annotated[str | None, Header(max_length=255)] = None,
    ) -> Response:
        """Store experiences durably (committed before the reply), then nudge the learner.
        With an ``Idempotency-Key`` header, a repeat of a stored batch returns the first
        answer without storing it again."""
        b: Any = body
        return _json(service.update(b.states, b.actions, b.rewards, b.dones, idempotency_key))

    # -------------------------------------------------------------- v1
    # the heavier routes are plain ``def``: they run in the worker threads, not on the loop
    batch_body, batch_doc = _json_body(PredictBatchRequest, defs)

    @app.post(
        "/v1/predict_batch",
        response_model=PredictBatchResponse,
        responses={**bad, **big},
        tags=["v1"],
        openapi_extra=batch_doc,
    )
    def predict_batch(body: Any = batch_body) -> Response:
        """One action per state, one forward pass."""
        actions, version = service.predict_batch_with_version(body.states)
        return _json({"actions": actions, "model_version": version})

    score_body, score_doc = _json_body(ScoreRequest, defs)

    @app.post(
        "/v1/score",
        response_model=ScoreResponse,
        responses={**bad, **big},
        tags=["v1"],
        openapi_extra=score_doc,
    )
    def score(body: Any = score_body) -> Response:
        """Scores of one pod on every node (one forward pass), masked where it does not fit."""
        nodes = body.nodes
        arr = node_array(nodes)
        res = service.score_arrays(
            body.pod.cpu_millicores, body.pod.memory_bytes, [n.name for n in nodes], arr
        )
        return _json(res.to_dict())

    @app.get("/v1/models", response_model=ModelsResponse, tags=["v1"])
    def list_models() -> Response:
        """Registered versions and the active one."""
        return _json(service.list_models())

    @app.post(
        "/v1/models/{version}/activate",
        response_model=ActivateResponse,
        responses={**bad, **auth, **mgmt},
        dependencies=Auth,
        tags=["v1"],
    )
    def activate(
        version: Annotated[str, PathParam(pattern=r"^[1-9][0-9]{0,8}$", max_length=9)],
    ) -> Response:
        """Serve ``version`` (a plain decimal integer; also the registry's current version)."""
        return _json(service.activate(version))

    @app.post(
        "/v1/models/rollback",
        response_model=ActivateResponse,
        responses={**auth, **mgmt},
        dependencies=Auth,
        tags=["v1"],
    )
    def rollback() -> Response:
        """Serve the version that was active before the current one."""
        return _json(service.rollback())

    # -------------------------------------------------------------- extender
    ext_body, ext_doc = _json_body(ext.ExtenderArgs, defs)

    @app.post(
        "/extender/filter",
        response_model=ext.ExtenderFilterResult,
        responses={**bad, **big},
        tags=["extender"],
        openapi_extra=ext_doc,
    )
    def extender_filter(args: Any = ext_body) -> Response:
        """kube-scheduler extender filter: nodes the pod fits on; the rest in FailedNodes."""
        return _json(ext.filter_nodes(args).to_json())

    @app.post(
        "/extender/prioritize",
        response_model=list[ext.HostPriority],
        responses={**bad, **big},
        tags=["extender"],
        openapi_extra=ext_doc,
    )
    def extender_prioritize(args: Any = ext_body) -> Response:
        """kube-scheduler extender prioritize: 0..10 per node from the policy."""
        return _json([h.model_dump() for h in ext.prioritize(service, args)])

    # -------------------------------------------------------------- metrics
    @app.get(
        "/metrics",
        response_class=Response,
        responses={200: {"content": {"text/plain": {}}, "description": "Prometheus text"}},
        tags=["ops"],
    )
    def prometheus() -> Response:
        """Prometheus text exposition."""
        return Response(content=metrics.render(), media_type=metrics.content_type)

    _fix_openapi(app, defs)
    app.add_middleware(_Edge, metrics=metrics, limit=MAX_BODY_BYTES, body_timeout=body_timeout)
    return app


def _fix_openapi(app: FastAPI, defs: dict[str, Any]) -> None:
    """FastAPI documents validation errors as 422 ``HTTPValidationError``; this app answers
    400 ``{"error": ...}``: make the schema say so."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema:
            return app.openapi_schema
        from fastapi.openapi.utils import get_openapi

        schema = get_openapi(
            title=app.title, version=app.version, description=app.description, routes=app.routes
        )
        err = {"$ref": "#/components/schemas/ErrorResponse"}
        for ops in schema.get("paths", {}).values():
            for op in ops.values():
                resp = op.get("responses", {})
                if resp.pop("422", None) is not None:
                    resp.setdefault(
                        "400",
                        {"description": "Bad input", "content": {JSON: {"schema": err}}},
                    )
        comps = schema.setdefault("components", {}).setdefault("schemas", {})
        comps.setdefault("ErrorResponse", ErrorResponse.model_json_schema())
        for k, v in defs.items():
            comps.setdefault(k, v)
        for k in ("HTTPValidationError", "ValidationError"):
            comps.pop(k, None)
        app.openapi_schema = schema
        return schema

    app.openapi = openapi  # type: ignore[method-assign]
