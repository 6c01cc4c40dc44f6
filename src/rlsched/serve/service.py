"""The one object both servers (HTTP and gRPC) call: :class:`SchedulerService`.

The active policy is held as one immutable :class:`ActiveModel` (bundle + version) in one
attribute. A request reads that attribute once and uses what it read until it answers, so a
swap (``activate``, ``rollback``, a publish by the learner) is a single reference assignment:
no lock on the request path, and an in-flight request finishes on the version it started with.
Writers (swaps) serialise on a lock among themselves.

Every method validates its input and raises a :class:`ServiceError` subclass carrying an HTTP
status and a gRPC status name, so neither server ever turns bad input into a 500.
"""

from __future__ import annotations

import contextlib
import hmac
import logging
import math
import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from rlsched.serve.bundle import PolicyBundle
from rlsched.serve.learner import OnlineLearner
from rlsched.serve.limits import REWARD_LIMIT, STATE_LIMIT
from rlsched.serve.registry import ModelRegistry
from rlsched.serve.store import ExperienceStore, IdempotencyConflict, StoreUnavailable

log = logging.getLogger("rlsched.serve")

SERVICE_NAME = "rlsched-ppo-scheduler"

# limits (documented in docs/serving.md)
MAX_BODY_BYTES = 8 * 1024 * 1024  # HTTP request bodies and gRPC messages
MAX_EXPERIENCES = 4096  # per /update call (the plugin sends at most 512)
MAX_BATCH_STATES = 4096  # per /v1/predict_batch call
MAX_NODES = 5000  # per /v1/score or extender call (the Kubernetes cluster-size limit)

STORE_RETRY_AFTER_S = 5  # Retry-After of a 503 from a failing experience store
_IDEMPOTENCY_KEY = re.compile(r"^[\x21-\x7e]{1,255}$")

# the plugin's state layout: node fractions, then the pod request scaled like this
POD_CPU_SCALE = 100_000.0  # millicores
POD_MEM_SCALE = 1_073_741_824.0  # bytes (1 GiB)


# ---------------------------------------------------------------------------- errors
class ServiceError(Exception):
    """A request the service refuses; ``http_status`` / ``grpc_code`` say how to answer."""

    http_status = 400
    grpc_code = "INVALID_ARGUMENT"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidInput(ServiceError):
    pass


class Unauthorized(ServiceError):
    http_status = 401
    grpc_code = "UNAUTHENTICATED"


class Forbidden(ServiceError):
    http_status = 403
    grpc_code = "PERMISSION_DENIED"


class UnsupportedMediaType(ServiceError):
    http_status = 415
    grpc_code = "INVALID_ARGUMENT"


class NotFound(ServiceError):
    http_status = 404
    grpc_code = "NOT_FOUND"


class Conflict(ServiceError):
    http_status = 409
    grpc_code = "FAILED_PRECONDITION"


class TooLarge(ServiceError):
    http_status = 413
    grpc_code = "RESOURCE_EXHAUSTED"


class Unavailable(ServiceError):
    http_status = 503
    grpc_code = "UNAVAILABLE"
    retry_after: int | None = None  # seconds, sent as ``Retry-After``


# ---------------------------------------------------------------------------- layout helpers
def plugin_num_nodes(state_dim: int, action_dim: int) -> int:
    """N for one of the plugin's two layouts, ``ValueError`` otherwise.

    Actions are always ``2N+2`` (bind 0..N-1, preempt N..2N-1, delay 2N, reject 2N+1). The
    state is either ``2N+2`` (the plugin's code: 2 fractions per node, then the pod's cpu
    and memory request) or ``2N`` (the service note: the node fractions only; the policy
    then does not see the pod's request)."""
    if action_dim < 4 or action_dim % 2 or state_dim not in (action_dim, action_dim - 2):
        raise ValueError(
            f"state_dim {state_dim} and action_dim {action_dim} do not fit the plugin's layout: "
            "N nodes need action_dim = 2N+2 (bind 0..N-1, preempt N..2N-1, delay 2N, reject "
            "2N+1) and state_dim = 2N+2 (2 fractions per node + the pod's cpu and memory) or "
            "2N (the node fractions only), e.g. 16 and 16, or 14 and 16, for 7 nodes"
        )
    return (action_dim - 2) // 2


def pod_in_state(state_dim: int, action_dim: int) -> bool:
    """Whether the state ends with the pod's cpu and memory request (the 2N+2 layout)."""
    return state_dim == action_dim


def _state_matrix(states: Any, state_dim: int, what: str, limit: int) -> np.ndarray:
    """``(B, S)`` float64 from a list of states, or :class:`InvalidInput` naming the problem."""
    if isinstance(states, (str, bytes, dict)) or not hasattr(states, "__len__"):
        raise InvalidInput(f"{what} must be a list of states")
    if len(states) > limit:
        raise TooLarge(f"{len(states)} {what} in one call; the limit is {limit}")
    if len(states) == 0:
        raise InvalidInput(f"{what} is empty")
    try:  # fast path: a well-formed (B, S) list of numbers
        raw = np.asarray(states)
    except (TypeError, ValueError):
        raw = None
    if raw is not None and raw.ndim == 2 and raw.dtype.kind in "fiu" and raw.shape[1] == state_dim:
        x = raw.astype(np.float64, copy=False)
        ok = np.isfinite(x).all(axis=1)
        if not ok.all():
            raise InvalidInput(f"{what}[{int(np.argmin(ok))}] holds a NaN or infinite value")
        ok = (np.abs(x) <= STATE_LIMIT).all(axis=1)
        if not ok.all():
            raise InvalidInput(f"{what}[{int(np.argmin(ok))}] has a value beyond +-{STATE_LIMIT:g}")
        return x
    # slow path: find the first bad state and say what is wrong with it
    return np.stack([_state_vector(s, state_dim, f"{what}[{i}]") for i, s in enumerate(states)])


def _state_vector(state: Any, state_dim: int, what: str = "state") -> np.ndarray:
    if isinstance(state, (str, bytes, dict)) or state is None:
        raise InvalidInput(f"{what} must be a list of {state_dim} numbers")
    try:
        raw = np.asarray(state)
    except (TypeError, ValueError) as e:  # pragma: no cover - ragged input
        raise InvalidInput(f"{what} must be a list of {state_dim} numbers ({e})") from None
    if raw.ndim != 1 or raw.dtype.kind not in "fiu":
        raise InvalidInput(f"{what} must be a list of {state_dim} numbers")
    if raw.shape[0] != state_dim:
        raise InvalidInput(f"{what} has {raw.shape[0]} values; the model expects {state_dim}")
    x = raw.astype(np.float64, copy=False)
    if not np.isfinite(x).all():
        raise InvalidInput(f"{what} holds a NaN or infinite value")
    if np.abs(x).max() > STATE_LIMIT:
        raise InvalidInput(f"{what} has a value beyond +-{STATE_LIMIT:g}")
    return x


MAX_VERSION = 10**9 - 1  # a version number has at most 9 digits
_VERSION = re.compile(r"^[1-9][0-9]{0,8}$")
_ABS_PATH = re.compile(r"(?<![\w.])/[^\s]+")


def parse_version(v: Any) -> int:
    """A model version: a positive int, or a plain decimal string of at most 9 digits."""
    if isinstance(v, bool):
        raise InvalidInput("a model version is a positive integer")
    if isinstance(v, int):
        if 1 <= v <= MAX_VERSION:
            return v
    elif isinstance(v, str) and _VERSION.match(v):
        return int(v)
    raise InvalidInput(
        f"a model version is a plain decimal integer from 1 to {MAX_VERSION} (like 7; not 07, "
        "+7, 7.0 or 7_0)"
    )


def public_text(text: str) -> str:
    """``text`` with absolute file-system paths replaced by their last component."""
    return _ABS_PATH.sub(lambda m: Path(m.group()).name or "/", text)


def _finite_number(v: Any, what: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
        raise InvalidInput(f"{what} must be a number")
    f = float(v)
    if not math.isfinite(f):
        raise InvalidInput(f"{what} must be finite")
    return f


# ---------------------------------------------------------------------------- score types
#: Column order of the ``(n, 4)`` node array :meth:`SchedulerService.score_arrays` takes.
NODE_COLUMNS = ("cpu_used", "cpu_allocatable", "memory_used", "memory_allocatable")


def node_array(nodes: Sequence[Any]) -> np.ndarray:
    """``(n, 4)`` float64 from node records (NodeCapacity, the HTTP model or the proto message,
    which share these attribute names); one C-level conversion instead of a loop per value."""
    try:
        return np.array(
            [
                (
                    n.cpu_used_millicores,
                    n.cpu_allocatable_millicores,
                    n.memory_used_bytes,
                    n.memory_allocatable_bytes,
                )
                for n in nodes
            ],
            dtype=np.float64,
        ).reshape(-1, 4)
    except (TypeError, ValueError) as e:
        raise InvalidInput(f"node resources must be numbers: {e}") from e


@dataclass(frozen=True)
class PodDemand:
    """What a pod requests (sum over its containers)."""

    cpu_millicores: float
    memory_bytes: float
    name: str = ""


@dataclass(frozen=True)
class NodeCapacity:
    """A node's allocatable resources and what is already used of them."""

    name: str
    cpu_allocatable_millicores: float
    memory_allocatable_bytes: float
    cpu_used_millicores: float = 0.0
    memory_used_bytes: float = 0.0


@dataclass
class ScoreResult:
    scores: np.ndarray  # (n,) softmax over the fitting nodes' bind logits, 0 where it does not fit
    fits: np.ndarray  # (n,) bool
    chosen_index: int  # -1 when the pod fits nowhere
    model_version: int | None
    names: list[str] = field(default_factory=list)

    @property
    def chosen_node(self) -> str | None:
        return None if self.chosen_index < 0 else self.names[self.chosen_index]

    def to_dict(self) -> dict[str, Any]:
        return {
            "scores": [
                {"name": n, "score": float(s), "fits": bool(f)}
                for n, s, f in zip(
                    self.names, self.scores.tolist(), self.fits.tolist(), strict=True
                )
            ],
            "chosen_index": self.chosen_index,
            "chosen_node": self.chosen_node,
            "model_version": self.model_version,
        }


@dataclass(frozen=True)
class ActiveModel:
    """What a request reads once: the bundle and the registry version it came from."""

    bundle: PolicyBundle
    version: int | None


# ---------------------------------------------------------------------------- the service
class SchedulerService:
    """Predict / score / update / model management for both servers; see the module docstring.

    ``registry`` (a :class:`~rlsched.serve.registry.ModelRegistry`) is optional: without it the
    service serves ``bundle`` as version ``None`` and model management answers 409.
    ``store`` (an :class:`~rlsched.serve.store.ExperienceStore`) is optional: without it
    ``update`` answers 503. ``learner`` (an :class:`~rlsched.serve.learner.OnlineLearner`)
    is optional; its ``on_publish`` should call :meth:`reload`.
    """

    def __init__(
        self,
        bundle: PolicyBundle | None = None,
        *,
        registry: Any = None,
        store: Any = None,
        learner: Any = None,
        token: str | None = None,
        service_name: str = SERVICE_NAME,
    ) -> None:
        if bundle is None:
            if registry is None or registry.current_version() is None:
                raise ValueError("give a bundle or a registry with an active version")
            version = registry.current_version()
            bundle = registry.load(version)
        else:
            version = bundle.meta.get("registry_version")
            version = None if version is None else int(version)
        self.num_nodes = plugin_num_nodes(bundle.state_dim, bundle.action_dim)
        self.state_dim = bundle.state_dim
        self.action_dim = bundle.action_dim
        self._active = ActiveModel(bundle, version)
        self.registry = registry
        self.store = store
        self.learner = learner
        self.token = token or None
        self.service_name = service_name
        self.started = time.time()
        self._swap_lock = threading.Lock()
        self.swaps = 0
        self.experiences_stored = 0  # by this process
        self.swap_listeners: list[Callable[[int | None], None]] = []
        self.draining = False  # set when SIGTERM / SIGINT starts the drain
        self.store_retention_s: float | None = None  # prune consumed experiences (start())
        self._maintenance_stop = threading.Event()
        self._maintenance: threading.Thread | None = None
        # started by start(), stopped by close(): e.g. the PostgreSQL registry watcher
        self.companions: list[Any] = []

    @classmethod
    def from_registry(
        cls,
        root: str | Path,
        *,
        store: str | Path | None = None,
        learner: bool = False,
        token: str | None = None,
        learner_kwargs: dict[str, Any] | None = None,
    ) -> SchedulerService:
        """A service over the registry at ``root`` (which must have an active version), an
        experience store at ``store`` (default ``ROOT/experiences.sqlite``) and, if asked, an
        online learner publishing into the registry."""
        reg = ModelRegistry(root)
        st = ExperienceStore(store or Path(root) / "experiences.sqlite")
        svc = cls(registry=reg, store=st, token=token)
        if learner:
            svc.attach_learner(**(learner_kwargs or {}))
        return svc

    def attach_learner(self, **kwargs: Any) -> Any:
        """Create an :class:`OnlineLearner` over this registry and store whose publishes swap
        the served model (it is started by :meth:`start`)."""
        if self.registry is None or self.store is None:
            raise ValueError("the online learner needs a registry and an experience store")
        kwargs.setdefault("on_publish", lambda v: self.reload(v))
        self.learner = OnlineLearner(self.registry, self.store, **kwargs)
        return self.learner

    # ------------------------------------------------------------------ properties
    @property
    def active(self) -> ActiveModel:
        return self._active

    @property
    def model_version(self) -> int | None:
        return self._active.version

    @property
    def uptime_s(self) -> float:
        return time.time() - self.started

    # ------------------------------------------------------------------ auth
    def check_token(self, presented: str | None) -> None:
        """``presented`` is the ``Authorization`` header / metadata value (``Bearer T``)."""
        if self.token is None:
            return
        if not presented:
            raise Unauthorized("this endpoint needs 'Authorization: Bearer <token>'")
        scheme, _, value = presented.strip().partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(
            value.strip().encode(), self.token.encode()
        ):
            raise Unauthorized("invalid bearer token")

    # ------------------------------------------------------------------ inference
    def predict(self, state: Any) -> int:
        """The greedy action for one plugin-layout state."""
        m = self._active
        x = _state_vector(state, m.bundle.state_dim)
        return int(m.bundle.act(x))

    def predict_with_version(self, state: Any) -> tuple[int, int | None]:
        m = self._active
        x = _state_vector(state, m.bundle.state_dim)
        return int(m.bundle.act(x)), m.version

    def predict_batch(self, states: Any) -> list[int]:
        return self.predict_batch_with_version(states)[0]

    def predict_batch_with_version(self, states: Any) -> tuple[list[int], int | None]:
        m = self._active
        x = _state_matrix(states, m.bundle.state_dim, "states", MAX_BATCH_STATES)
        return m.bundle.act(x).tolist(), m.version

    def score(self, pod: PodDemand, nodes: Sequence[NodeCapacity]) -> ScoreResult:
        """Per-node scores for placing ``pod``: one forward pass of the policy.

        The plugin's state is built from each node's used/allocatable and the pod's request.
        Node fractions and the scaled request are clipped to +-``STATE_LIMIT``. With exactly
        N (the model's node count) nodes that is one state; otherwise the nodes
        are cut into windows of N (the last one padded with full nodes) scored as one batch.
        A node's score is the softmax of its bind logit (action i) over the bind logits of all
        nodes the pod fits on (``used + request <= allocatable`` for cpu and memory); nodes it
        does not fit on score 0. ``chosen_index`` is the best fitting node, -1 if none fits.
        """
        if not isinstance(nodes, (list, tuple)):
            raise InvalidInput("nodes must be a list")
        n = len(nodes)
        if n == 0:
            raise InvalidInput("nodes is empty")
        if n > MAX_NODES:
            raise TooLarge(f"{n} nodes in one call; the limit is {MAX_NODES}")
        pc = _finite_number(pod.cpu_millicores, "pod.cpu_millicores")
        pm = _finite_number(pod.memory_bytes, "pod.memory_bytes")
        if pc < 0 or pm < 0:
            raise InvalidInput("pod requests must be >= 0")
        cols = NODE_COLUMNS
        arr = node_array(nodes)
        if any(isinstance(v, bool) for nd in nodes for v in (
            nd.cpu_used_millicores, nd.cpu_allocatable_millicores,
            nd.memory_used_bytes, nd.memory_allocatable_bytes,
        )):  # fmt: skip
            raise InvalidInput("node resources must be numbers, not booleans")
        names = [str(nd.name) for nd in nodes]
        return self.score_arrays(pc, pm, names, arr, cols)

    def score_arrays(
        self,
        pod_cpu: float,
        pod_mem: float,
        names: list[str],
        arr: np.ndarray,
        cols: tuple[str, ...] = (
            "cpu_used",
            "cpu_allocatable",
            "memory_used",
            "memory_allocatable",
        ),
    ) -> ScoreResult:
        """:meth:`score` on arrays: ``arr`` is ``(n, 4)`` cpu used, cpu allocatable, memory used,
        memory allocatable; validated here with vectorised checks."""
        m = self._active
        n_model = self.num_nodes
        n = arr.shape[0]
        if n == 0:
            raise InvalidInput("nodes is empty")
        if n > MAX_NODES:
            raise TooLarge(f"{n} nodes in one call; the limit is {MAX_NODES}")
        pc = _finite_number(pod_cpu, "pod.cpu_millicores")
        pm = _finite_number(pod_mem, "pod.memory_bytes")
        if pc < 0 or pm < 0:
            raise InvalidInput("pod requests must be >= 0")
        bad = ~np.isfinite(arr) | (arr < 0)
        if bad.any():
            i, j = (int(x) for x in np.argwhere(bad)[0])
            what = "finite" if not np.isfinite(arr[i, j]) else ">= 0"
            raise InvalidInput(f"nodes[{i}].{cols[j]} must be {what}")
        cu, ca, mu, ma = arr.T
        with np.errstate(all="ignore"):
            fits = (cu + pc <= ca) & (mu + pm <= ma)
            fc = np.where(ca > 0, cu / ca, 1.0)
            fm = np.where(ma > 0, mu / ma, 1.0)
        windows = -(-n // n_model)
        node_part = np.ones((windows * n_model, 2), dtype=np.float64)  # padding: full nodes
        node_part[:n, 0] = fc
        node_part[:n, 1] = fm
        x = np.empty((windows, m.bundle.state_dim), dtype=np.float64)
        x[:, : 2 * n_model] = node_part.reshape(windows, 2 * n_model)
        if pod_in_state(m.bundle.state_dim, m.bundle.action_dim):  # else: 2N, no pod part
            x[:, -2] = min(pc / POD_CPU_SCALE, STATE_LIMIT)
            x[:, -1] = min(pm / POD_MEM_SCALE, STATE_LIMIT)
        np.clip(x, -STATE_LIMIT, STATE_LIMIT, out=x)  # absurd fractions stay finite
        bind = np.asarray(m.bundle.logits(x), dtype=np.float64)[:, :n_model].reshape(-1)[:n]
        scores = np.zeros(n, dtype=np.float64)
        if fits.any():
            z = bind[fits]
            e = np.exp(z - z.max())
            scores[fits] = e / e.sum()
            chosen = int(np.flatnonzero(fits)[np.argmax(z)])
        else:
            chosen = -1
        return ScoreResult(scores, fits, chosen, m.version, names)

    # ------------------------------------------------------------------ experiences
    def update(
        self,
        states: Any,
        actions: Any,
        rewards: Any,
        dones: Any,
        idempotency_key: str | None = None,
    ) -> dict[str, Any]:
        """Validate a batch of experiences and store it durably before returning.

        With ``idempotency_key``, a batch already stored under that key is not stored again:
        the first answer is returned (a client retrying an answer it never got)."""
        if self.store is None:
            raise Unavailable("this server has no experience store")
        if idempotency_key is not None and not _IDEMPOTENCY_KEY.match(idempotency_key):
            raise InvalidInput(
                "Idempotency-Key must be 1 to 255 printable ASCII characters without spaces"
            )
        for name, v in (("actions", actions), ("rewards", rewards), ("dones", dones)):
            if not isinstance(v, (list, tuple, np.ndarray)):
                raise InvalidInput(f"{name} must be a list")
        m = self._active
        x = _state_matrix(states, m.bundle.state_dim, "states", MAX_EXPERIENCES)
        b = x.shape[0]
        if not (len(actions) == len(rewards) == len(dones) == b):
            raise InvalidInput(
                f"lengths differ: {b} states, {len(actions)} actions, {len(rewards)} rewards, "
                f"{len(dones)} dones"
            )
        acts = []
        for i, a in enumerate(actions):
            if isinstance(a, bool) or not isinstance(a, (int, np.integer)):
                raise InvalidInput(f"actions[{i}] must be an integer")
            if not 0 <= a < self.action_dim:
                raise InvalidInput(f"actions[{i}] = {a} is outside 0..{self.action_dim - 1}")
            acts.append(int(a))
        rews = [_finite_number(r, f"rewards[{i}]") for i, r in enumerate(rewards)]
        for i, r in enumerate(rews):
            if abs(r) > REWARD_LIMIT:
                raise InvalidInput(f"rewards[{i}] = {r:g} is outside +-{REWARD_LIMIT:g}")
        dns = []
        for i, d in enumerate(dones):
            if not isinstance(d, (bool, np.bool_)):
                raise InvalidInput(f"dones[{i}] must be true or false")
            dns.append(bool(d))

        try:
            res = self.store.append_batch(
                x, np.asarray(acts, np.int64), np.asarray(rews), np.asarray(dns),
                model_version=m.version, idempotency_key=idempotency_key,
            )  # fmt: skip
        except IdempotencyConflict as e:
            raise Conflict(str(e)) from None
        except StoreUnavailable as e:
            # the log names the store's path; the client's answer does not
            log.error("/update refused with 503: %s", e)
            err = Unavailable("the experience store is unavailable; retry later")
            err.retry_after = STORE_RETRY_AFTER_S
            raise err from None
        except ValueError as e:
            raise InvalidInput(str(e)) from None
        if not res.repeated:
            self.experiences_stored += b
            self._nudge_learner()
        return {
            "status": "ok", "stored": res.n, "batch_id": res.batch_id,
            "model_version": res.model_version,
        }  # fmt: skip

    def _nudge_learner(self) -> None:
        if self.learner is None:
            return
        try:
            self.learner.nudge()
        except Exception:  # the experiences are stored; learning is best effort
            log.exception("could not nudge the online learner")

    # ------------------------------------------------------------------ model management
    def _need_registry(self) -> Any:
        if self.registry is None:
            raise Conflict("this server has no model registry (start it with --registry)")
        return self.registry

    def _load_checked(self, version: int) -> PolicyBundle:
        reg = self._need_registry()
        try:
            b = reg.load(version)
        except KeyError:  # (the registry's message names its folder: not for clients)
            known = ", ".join(str(v) for v in reg.versions()) or "none"
            raise NotFound(f"model version {version} does not exist (known: {known})") from None
        if (b.state_dim, b.action_dim) != (self.state_dim, self.action_dim):
            raise Conflict(
                f"model version {version} has state_dim {b.state_dim} / action_dim "
                f"{b.action_dim}; this server serves {self.state_dim} / {self.action_dim}"
            )
        return b

    def _swap(self, version: int, bundle: PolicyBundle | None = None) -> ActiveModel:
        """Make ``version`` the served model (writers only, under ``_swap_lock``)."""
        b = bundle if bundle is not None else self._load_checked(version)
        new = ActiveModel(b, int(version))
        self._active = new  # the swap: one reference assignment
        self.swaps += 1
        for fn in self.swap_listeners:
            fn(new.version)
        return new

    @contextlib.contextmanager
    def _registry_errors(self) -> Iterator[None]:
        """A registry in a database that is down: 503 with Retry-After (and a log line)."""
        try:
            yield
        except StoreUnavailable as e:
            log.error("model management refused with 503: %s", e)
            err = Unavailable("the model registry is unavailable; retry later")
            err.retry_after = STORE_RETRY_AFTER_S
            raise err from None

    def list_models(self) -> dict[str, Any]:
        """Versions as anyone may read them: no file-system paths (a note's source folder is
        shown by its name only)."""
        with self._registry_errors():
            versions = [] if self.registry is None else self.registry.list()
        for v in versions:
            v["note"] = public_text(v.get("note") or "")
        return {"active": self.model_version, "versions": versions}

    def activate(self, version: int | str) -> dict[str, Any]:
        """Serve ``version`` (an int, or a plain decimal string: ``7``, not ``07``, ``+7``,
        ``7.0`` or ``7_0``)."""
        reg = self._need_registry()
        version = parse_version(version)
        with self._swap_lock, self._registry_errors():
            b = self._load_checked(version)
            reg.activate(version)
            self._swap(version, b)
        return {"status": "ok", "model_version": self.model_version}

    def rollback(self) -> dict[str, Any]:
        reg = self._need_registry()
        with self._swap_lock, self._registry_errors():
            hist = reg.history()
            if len(hist) < 2:
                raise Conflict("nothing to roll back to: no earlier activation")
            b = self._load_checked(hist[-2])
            try:
                v = reg.rollback()
            except ValueError:
                raise Conflict("nothing to roll back to: no earlier activation") from None
            self._swap(v, b if v == hist[-2] else None)
        return {"status": "ok", "model_version": self.model_version}

    def reload(self, version: int | None = None) -> int | None:
        """Serve the registry's current version (called after the learner publishes)."""
        reg = self._need_registry()
        with self._swap_lock:
            cur = reg.current_version()
            if cur is not None and cur != self.model_version:
                self._swap(cur)
        return self.model_version

    # ------------------------------------------------------------------ info
    def health(self) -> dict[str, Any]:
        m = self._active
        return {
            "status": "healthy",
            "service": self.service_name,
            "model_version": m.version,
            "state_dim": m.bundle.state_dim,
            "action_dim": m.bundle.action_dim,
            "num_nodes": self.num_nodes,
            "uptime_s": round(self.uptime_s, 3),
        }

    def readiness(self) -> tuple[bool, str]:
        """(ready, why): ready while a model is loaded and the service is not draining."""
        if self.draining:
            return False, "draining: the server is shutting down"
        if self._active is None or self._active.bundle is None:  # pragma: no cover
            return False, "no model loaded"
        return True, "ready"

    def learner_status(self) -> dict[str, Any] | None:
        if self.learner is None:
            return None
        try:
            return dict(self.learner.status())
        except Exception:
            log.exception("learner status failed")
            return None

    # ------------------------------------------------------------------ lifecycle
    def start(self, interval: float = 5.0) -> None:
        for c in self.companions:
            c.start()
        if self.learner is not None:
            self.learner.start(interval=interval)
        if self.store is not None and self.store_retention_s is not None:
            self._maintenance = threading.Thread(
                target=self._prune_loop, name="rlsched-store-prune", daemon=True
            )
            self._maintenance.start()

    def prune_store(self) -> int:
        """Delete consumed experiences (and idempotency keys) older than the retention."""
        if self.store is None or self.store_retention_s is None:
            return 0
        n = self.store.prune(self.store_retention_s)
        if n:
            log.info("store retention: deleted %d consumed experiences", n)
        return n

    def _prune_loop(self) -> None:
        assert self.store_retention_s is not None
        every = min(3600.0, max(60.0, self.store_retention_s / 10))
        while not self._maintenance_stop.wait(every):
            try:
                self.prune_store()
            except Exception:
                log.exception("store retention failed")

    def close(self, timeout: float = 30.0) -> None:
        """Stop the learner (waiting up to ``timeout`` s for a run in progress), close the store."""
        self._maintenance_stop.set()
        for c in self.companions:
            try:
                c.stop()
            except Exception:  # pragma: no cover
                log.exception("stopping %s failed", type(c).__name__)
        if self.learner is not None:
            try:
                self.learner.stop(timeout)
            except Exception:  # pragma: no cover
                log.exception("stopping the learner failed")
        if self.store is not None:
            self.store.close()
