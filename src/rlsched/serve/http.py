"""The FastAPI app of ``rlsched serve``: the plugin's REST wire format plus v1, the
kube-scheduler extender and ``/metrics``. Every 4xx answers ``{"error": "..."}``.

Request models are built per service (:func:`create_app`) so that the OpenAPI schema states
the exact state length the served model takes. The hot endpoints return pre-serialised
``Response`` objects (no ``jsonable_encoder`` round trip).
"""

import json
import logging
import time
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Request
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
    STATE_LIMIT,
    SchedulerService,
    ServiceError,
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


Finite = Annotated[float, Field(strict=True, allow_inf_nan=False)]
StateValue = Annotated[
    float, Field(strict=True, allow_inf_nan=False, ge=-STATE_LIMIT, le=STATE_LIMIT)
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
        rewards: list[Finite]
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


def _json_body(model: type[BaseModel]) -> tuple[Any, dict[str, Any]]:
    """A dependency parsing the request body with pydantic's Rust JSON parser, and the
    ``openapi_extra`` that documents it.

    FastAPI's default (``json.loads`` then validation) costs about 4x more on a 1,000-number
    state; the schema stays in the OpenAPI document for clients and fuzzers.
    """

    async def parse(request: Request) -> Any:
        raw = await request.body()
        try:
            return model.model_validate_json(raw)
        except ValidationError as e:
            errors = [{**err, "loc": ("body", *err["loc"])} for err in e.errors(include_url=False)]
            raise RequestValidationError(errors, body=raw) from None

    schema = model.model_json_schema()
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
            parts.append(f"body is not valid JSON ({err} at position {where})".replace(" ()", ""))
            continue
        if e.get("type") == "missing" and not loc:
            msg = "request body is missing"
        parts.append(f"{where}: {msg}" if where else msg)
    if len(errors) > 3:
        parts.append(f"and {len(errors) - 3} more")
    return "; ".join(parts) or "invalid request"


class _Edge:
    """Pure ASGI middleware: body-size limit (413) and request metrics."""

    def __init__(self, app: ASGIApp, metrics: ServiceMetrics | None, limit: int) -> None:
        self.app = app
        self.metrics = metrics
        self.limit = limit

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
            too_large = await self._check_size(scope, receive)
            if too_large is not None:
                receive = too_large[1]
                if too_large[0]:
                    await _error(413, f"request body is larger than {self.limit} bytes")(
                        scope, receive, send_wrapper
                    )
                    return
            await self.app(scope, receive, send_wrapper)
        finally:
            if self.metrics is not None:
                route = scope.get("route")
                endpoint = getattr(route, "path", None) or "unmatched"
                self.metrics.observe("http", endpoint, status[0], time.perf_counter() - t0)

    async def _check_size(self, scope: Scope, receive: Receive) -> tuple[bool, Receive] | None:
        """None: fine as it is; (True, receive): too large; (False, receive): buffered body."""
        length = None
        for k, v in scope.get("headers", ()):
            if k == b"content-length":
                try:
                    length = int(v)
                except ValueError:
                    length = None
                break
        if length is not None:
            return None if length <= self.limit else (True, receive)
        if scope.get("method") not in ("POST", "PUT", "PATCH"):
            return None
        # no Content-Length (chunked): buffer up to the limit, then replay
        chunks, size, more = [], 0, True
        while more:
            msg = await receive()
            if msg["type"] != "http.request":
                break
            body = msg.get("body", b"")
            size += len(body)
            if size > self.limit:
                return True, receive
            chunks.append(body)
            more = msg.get("more_body", False)
        data = b"".join(chunks)
        sent = [False]

        async def replay() -> Message:
            if not sent[0]:
                sent[0] = True
                return {"type": "http.request", "body": data, "more_body": False}
            return await receive()

        return False, replay


# ---------------------------------------------------------------------------- the app
def create_app(service: SchedulerService, metrics: ServiceMetrics | None = None) -> FastAPI:
    """The FastAPI app over ``service`` (``metrics``: shared with the gRPC server)."""
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
    app.state.metrics = metrics
    # the schema declares bearer auth only when this server has a token
    bearer = HTTPBearer(auto_error=False, description="The server's token (--token).")

    def require_token(
        request: Request,
        creds: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
    ) -> None:
        service.check_token(request.headers.get("authorization"))

    Auth = [Depends(require_token)] if service.token else []
    bad = {400: {"model": ErrorResponse, "description": "Bad input"}}
    big = {413: {"model": ErrorResponse, "description": "Body or batch too large"}}
    auth = {401: {"model": ErrorResponse, "description": "Missing or wrong bearer token"}}
    mgmt = {
        404: {"model": ErrorResponse, "description": "No such version"},
        409: {"model": ErrorResponse, "description": "Not possible on this server"},
    }

    # -------------------------------------------------------------- error handlers
    @app.exception_handler(ServiceError)
    async def _service_error(request: Request, exc: ServiceError) -> Response:
        return _error(exc.http_status, exc.message)

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

    predict_body, predict_doc = _json_body(PredictRequest)

    @app.post(
        "/predict",
        response_model=PredictResponse,
        responses={**bad, **big},
        tags=["plugin"],
        openapi_extra=predict_doc,
    )
    async def predict(body: Any = predict_body) -> Response:
        """The greedy action for one state (the plugin calls this per candidate node)."""
        a = service.predict(body.state)  # type: ignore[attr-defined]
        return Response(content=b'{"action":%d}' % a, media_type=JSON)

    update_body, update_doc = _json_body(UpdateRequest)

    @app.post(
        "/update",
        response_model=UpdateResponse,
        responses={**bad, **big, **auth, 503: {"model": ErrorResponse}},
        dependencies=Auth,
        tags=["plugin"],
        openapi_extra=update_doc,
    )
    def update(body: Any = update_body) -> Response:
        """Store experiences durably (committed before the reply), then nudge the learner."""
        b: Any = body
        return _json(service.update(b.states, b.actions, b.rewards, b.dones))

    # -------------------------------------------------------------- v1
    @app.post(
        "/v1/predict_batch",
        response_model=PredictBatchResponse,
        responses={**bad, **big},
        tags=["v1"],
    )
    async def predict_batch(body: PredictBatchRequest) -> Response:  # type: ignore[valid-type]
        """One action per state, one forward pass."""
        actions, version = service.predict_batch_with_version(body.states)  # type: ignore[attr-defined]
        return _json({"actions": actions, "model_version": version})

    @app.post("/v1/score", response_model=ScoreResponse, responses={**bad, **big}, tags=["v1"])
    async def score(body: ScoreRequest) -> Response:
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
    def activate(version: Annotated[int, PathParam(ge=1)]) -> Response:
        """Serve ``version`` (also the registry's current version)."""
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
    @app.post(
        "/extender/filter",
        response_model=ext.ExtenderFilterResult,
        responses={**bad, **big},
        tags=["extender"],
    )
    async def extender_filter(args: ext.ExtenderArgs) -> Response:
        """kube-scheduler extender filter: nodes the pod fits on; the rest in FailedNodes."""
        return _json(ext.filter_nodes(args).to_json())

    @app.post(
        "/extender/prioritize",
        response_model=list[ext.HostPriority],
        responses={**bad, **big},
        tags=["extender"],
    )
    async def extender_prioritize(args: ext.ExtenderArgs) -> Response:
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

    _fix_openapi(app)
    app.add_middleware(_Edge, metrics=metrics, limit=MAX_BODY_BYTES)
    return app


def _fix_openapi(app: FastAPI) -> None:
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
        for k in ("HTTPValidationError", "ValidationError"):
            comps.pop(k, None)
        app.openapi_schema = schema
        return schema

    app.openapi = openapi  # type: ignore[method-assign]
