"""``rlsched serve``: resolve the model, build the service, run HTTP (uvicorn) and gRPC
in one process.

Model resolution (``--model``):

* a registry folder (``versions/`` or ``current`` in it): serve its current version, and use it
  as the registry;
* a bundle folder (``bundle.json``) or an ``rlsched train`` model / run folder (``meta.json``
  in it or in ``model/``; converted by :meth:`PolicyBundle.from_sb3`): published into the
  registry (note ``source <path> sha256 <hash>``) unless that exact model is already there. If
  it is, the registry's current version is kept when it *descends* from it (a restart resumes
  what the online learner published), otherwise that version is activated;
* ``vN`` / ``N``: that version of the registry (``--registry``);
* no ``--model``, no ``--registry``, ``--state-dim S --action-dim A``: a fresh untrained policy,
  always (published into the default registry as a new version and activated, as the plugin's
  own service starts);
* no ``--model`` and ``--registry DIR``: the current version of DIR (checked against
  ``--state-dim`` / ``--action-dim`` if given); a fresh policy if DIR has none yet.

The served dimensions must fit one of the plugin's layouts (actions 2N+2, state 2N+2 or 2N)
and agree with ``--state-dim`` / ``--action-dim`` when those are given too; otherwise a
one-line :class:`~rlsched.errors.ConfigError`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import ipaddress
import logging
import math
import re
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rlsched.errors import ConfigError
from rlsched.optional import require_extra
from rlsched.serve.bundle import PolicyBundle
from rlsched.serve.connections import ServeLimits, guarded_protocol, raise_fd_limit
from rlsched.serve.learner import kube_gate
from rlsched.serve.pg import Database, is_pg_url
from rlsched.serve.pg_registry import PgRegistry
from rlsched.serve.pg_store import PgExperienceStore
from rlsched.serve.pg_watch import RegistryWatcher
from rlsched.serve.registry import ModelRegistry, StaleVersion
from rlsched.serve.service import SchedulerService, plugin_num_nodes
from rlsched.serve.store import ExperienceStore, StoreUnavailable
from rlsched.serve.store_api import RegistryAPI
from rlsched.zoo import resolve_model_dir

log = logging.getLogger("rlsched.serve")

DEFAULT_REGISTRY = Path("runs/serve/registry")
STORE_NAME = "experiences.sqlite"
_VERSION_NAME = re.compile(r"^v?(\d+)$")


@dataclass
class ServeConfig:
    model: str | None = None
    state_dim: int | None = None
    action_dim: int | None = None
    registry: Path | None = None
    store: Path | str | None = None  # a SQLite file, or a postgresql:// URL (replicated mode)
    token: str | None = None
    learn: bool = False
    learn_interval: float = 30.0
    min_experiences: int = 256
    gate: str = "kube"  # kube | none
    seed: int = 0
    keep_versions: int = 20  # registry retention: the last K (+ every activated version)
    store_retention_s: float = 24 * 3600.0  # consumed experiences older than this are pruned
    registry_poll: float = 2.0  # PostgreSQL: re-read the current version this often (fallback)
    pool_size: int = 8  # PostgreSQL: connections per replica


def _is_registry(p: Path) -> bool:
    return p.is_dir() and ((p / "versions").is_dir() or (p / "current").is_file())


def _sha256(paths: list[Path]) -> str:
    h = hashlib.sha256()
    for p in paths:
        if p.is_file():
            with p.open("rb") as fh:
                for chunk in iter(lambda: fh.read(1 << 20), b""):
                    h.update(chunk)
    return h.hexdigest()


def _descends_from(registry: Any, version: int, ancestor: int) -> bool:
    seen = set()
    v: int | None = version
    while v is not None and v not in seen:
        if v == ancestor:
            return True
        seen.add(v)
        try:
            v = registry.info(v).get("parent")
        except KeyError:
            return False
    return False


def _check_dims(cfg: ServeConfig, state_dim: int, action_dim: int, what: str) -> None:
    for flag, given, actual in (
        ("--state-dim", cfg.state_dim, state_dim),
        ("--action-dim", cfg.action_dim, action_dim),
    ):
        if given is not None and given != actual:
            raise ConfigError(
                f"{flag} {given} does not match {what}, which has state_dim {state_dim} and "
                f"action_dim {action_dim}; drop {flag} or serve a model for that cluster size"
            )
    try:
        plugin_num_nodes(state_dim, action_dim)
    except ValueError as e:
        raise ConfigError(f"{what}: {e}") from None


def _source_bundle(cfg: ServeConfig, model_path: Path) -> tuple[PolicyBundle, str]:
    """The bundle of a bundle folder or a trained model folder, checked against the flags, and
    the registry note that names its source (path and sha256): one version per source."""
    if (model_path / "bundle.json").is_file():
        b = PolicyBundle.load(model_path)
        digest = _sha256([model_path / "weights.npz", model_path / "bundle.json"])
        what = "bundle"
    else:
        d = resolve_model_dir(model_path)
        b = PolicyBundle.from_sb3(d)
        digest = _sha256([d / "model.zip", d / "vecnormalize.pkl"])
        what = "model"
    _check_dims(cfg, b.state_dim, b.action_dim, f"the {what} {model_path}")
    return b, f"source {model_path.resolve()} sha256 {digest}"


def _current_bundle(cfg: ServeConfig, registry: RegistryAPI, where: str) -> PolicyBundle:
    """The active version's bundle, checked against the flags, after the retention prune."""
    cur = registry.current_version()
    assert cur is not None
    removed = registry.prune(cfg.keep_versions)
    if removed:
        log.info("registry retention: removed versions %s", removed)
    b = registry.load(cur)
    _check_dims(cfg, b.state_dim, b.action_dim, f"model version {cur} in {where}")
    return b


def build_service(cfg: ServeConfig) -> SchedulerService:
    """Resolve the model into a registry with an active version and build the service."""
    if is_pg_url(cfg.store):
        return build_service_pg(cfg)
    if (cfg.state_dim is None) != (cfg.action_dim is None) and cfg.model is None:
        raise ConfigError("give both --state-dim and --action-dim (or --model)")
    if cfg.model is None and cfg.state_dim is None and cfg.registry is None:
        raise ConfigError(
            "give --model DIR|VERSION, --registry DIR (its current version), or "
            "--state-dim S --action-dim A (a fresh policy)"
        )
    if cfg.state_dim is not None and cfg.action_dim is not None:
        _check_dims(cfg, cfg.state_dim, cfg.action_dim, "the requested dimensions")

    model_path = Path(cfg.model) if cfg.model is not None else None
    reg_root = cfg.registry
    if model_path is not None and _is_registry(model_path):
        if reg_root is not None and reg_root.resolve() != model_path.resolve():
            raise ConfigError(
                f"--model {model_path} is a registry and --registry {reg_root} another one; "
                "give one of them"
            )
        reg_root = model_path
    reg_root = reg_root or DEFAULT_REGISTRY
    registry = ModelRegistry(reg_root)

    fresh = model_path is None and cfg.registry is None
    cur = None if fresh else registry.current_version()
    if model_path is None and (fresh or cur is None):  # a fresh policy, always a new version
        if cfg.state_dim is None or cfg.action_dim is None:
            raise ConfigError(
                f"the registry at {reg_root} has no active version; give --state-dim and "
                "--action-dim for a fresh policy"
            )
        b = PolicyBundle.fresh(cfg.state_dim, cfg.action_dim, seed=cfg.seed)
        # not pinned: an untrained policy is reproducible from its seed
        registry.publish(b, note=f"fresh policy (seed {cfg.seed})", activate=True)
    elif model_path is None:  # --registry DIR: its current version
        if cfg.state_dim is not None:
            b = registry.load(cur)
            if (b.state_dim, b.action_dim) != (cfg.state_dim, cfg.action_dim):
                raise ConfigError(
                    f"the registry at {reg_root} serves version {cur} with state_dim "
                    f"{b.state_dim} / action_dim {b.action_dim}, not {cfg.state_dim} / "
                    f"{cfg.action_dim}; use another --registry for another cluster size"
                )
    elif _is_registry(model_path):
        if registry.current_version() is None:
            raise ConfigError(f"the registry at {model_path} has no active version")
    elif (model_path / "bundle.json").is_file() or _has_meta(model_path, resolve_model_dir):
        b, note = _source_bundle(cfg, model_path)
        known = [v["version"] for v in registry.list() if v.get("note") == note]
        cur = registry.current_version()
        if not known:
            registry.publish(b, note=note, activate=True, pin=True)
        elif cur is None or not _descends_from(registry, cur, known[-1]):
            registry.activate(known[-1])
    else:
        m = _VERSION_NAME.match(str(cfg.model))
        if m is None or model_path.exists():
            raise ConfigError(
                f"--model {cfg.model}: not a registry, bundle or `rlsched train` model folder, "
                "nor a version number (vN) of --registry"
            )
        v = int(m.group(1))
        try:
            registry.activate(v)
        except KeyError as e:
            raise ConfigError(str(e.args[0])) from None

    b = _current_bundle(cfg, registry, str(reg_root))
    try:
        store = ExperienceStore(cfg.store or Path(reg_root) / STORE_NAME)
    except StoreUnavailable as e:
        raise ConfigError(str(e)) from None
    service = SchedulerService(b, registry=registry, store=store, token=cfg.token)
    service.store_retention_s = cfg.store_retention_s
    if cfg.learn:
        gate = kube_gate() if cfg.gate == "kube" else None
        service.attach_learner(
            gate=gate, min_experiences=cfg.min_experiences, keep_versions=cfg.keep_versions
        )
    return service


def _resolve_pg_model(cfg: ServeConfig, registry: Any) -> None:
    """Make the registry's current version the one ``cfg`` asks for (the folder mode's rules,
    except that a fresh policy is published only into an empty registry: replicas starting
    together with the same flags must not each publish one)."""
    cur = registry.current_version()
    if cfg.model is None:
        if cur is not None:
            return
        if cfg.state_dim is None or cfg.action_dim is None:
            raise ConfigError(
                f"the registry in {registry.root} has no active version; give --state-dim and "
                "--action-dim for a fresh policy, or --model"
            )
        b = PolicyBundle.fresh(cfg.state_dim, cfg.action_dim, seed=cfg.seed)
        with contextlib.suppress(StaleVersion):  # another replica was first: serve its version
            registry.publish(
                b, note=f"fresh policy (seed {cfg.seed})", activate=True, expect_current=None
            )
        return
    model_path = Path(cfg.model)
    if (model_path / "bundle.json").is_file() or _has_meta(model_path, resolve_model_dir):
        b, note = _source_bundle(cfg, model_path)
        for _ in range(3):  # a replica starting beside this one may publish it first
            known = [v["version"] for v in registry.list() if v.get("note") == note]
            cur = registry.current_version()
            try:
                if not known:
                    registry.publish(b, note=note, activate=True, pin=True, expect_current=cur)
                elif cur is None or not _descends_from(registry, cur, known[-1]):
                    registry.activate(known[-1])
                return
            except StaleVersion:
                continue
        return
    m = _VERSION_NAME.match(str(cfg.model))
    if m is None or model_path.exists():
        raise ConfigError(
            f"--model {cfg.model}: not a bundle or `rlsched train` model folder, nor a version "
            "number (vN) of the registry in the database"
        )
    try:
        registry.activate(int(m.group(1)))
    except KeyError as e:
        raise ConfigError(str(e.args[0])) from None


def build_service_pg(cfg: ServeConfig) -> SchedulerService:
    """The replicated mode: store and registry in the PostgreSQL database of ``cfg.store``;
    the served version follows the registry (LISTEN/NOTIFY + a re-read every
    ``cfg.registry_poll`` s). No learner here: ``rlsched learn --store URL`` is the one."""

    if cfg.registry is not None:
        raise ConfigError(
            "--registry names a folder registry; with a PostgreSQL --store the registry is in "
            "the database (drop --registry)"
        )
    if cfg.learn:
        raise ConfigError(
            "--learn trains inside this server (the SQLite mode); with a PostgreSQL --store run "
            "one `rlsched learn --store URL` for all replicas instead"
        )
    if (cfg.state_dim is None) != (cfg.action_dim is None) and cfg.model is None:
        raise ConfigError("give both --state-dim and --action-dim (or --model)")
    if cfg.state_dim is not None and cfg.action_dim is not None:
        _check_dims(cfg, cfg.state_dim, cfg.action_dim, "the requested dimensions")
    db = Database(str(cfg.store), max_size=cfg.pool_size, application="rlsched-serve")
    try:
        registry = PgRegistry(db)
        _resolve_pg_model(cfg, registry)
        b = _current_bundle(cfg, registry, db.where)
    except StoreUnavailable as e:
        db.close()
        raise ConfigError(str(e)) from None
    except BaseException:
        db.close()
        raise
    service = SchedulerService(b, registry=registry, store=PgExperienceStore(db), token=cfg.token)
    service.store_retention_s = cfg.store_retention_s
    service.companions.append(RegistryWatcher(service, db.conninfo, poll=cfg.registry_poll))
    return service


def _has_meta(p: Path, resolve: Callable[[Path], Path]) -> bool:
    try:
        resolve(p)
    except Exception:
        return False
    return True


def _listen(host: str, port: int) -> socket.socket:
    """A bound, listening TCP socket for uvicorn (so a taken port fails here, clearly)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as e:
        raise ConfigError(f"cannot resolve --host {host}: {e}") from None
    family, stype, proto, _, addr = infos[0]
    sock = socket.socket(family, stype, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(addr)
    except OSError as e:
        sock.close()
        raise ConfigError(f"HTTP cannot listen on {host}:{port}: {e.strerror}") from None
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def http_url(host: str, port: int) -> str:
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def is_loopback(host: str) -> bool:
    """True if every address ``host`` resolves to is a loopback one."""
    try:
        infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except socket.gaierror:
        return False
    addrs = {info[4][0] for info in infos}
    return bool(addrs) and all(
        ipaddress.ip_address(str(a).split("%", 1)[0]).is_loopback for a in addrs
    )


def check_exposure(host: str, token: str | None, insecure: bool) -> str | None:
    """Refuse unsafe settings (``ConfigError``); returns a warning to print, if any.

    An empty token is an error (not "auth off"); a non-loopback address without a token
    needs ``--insecure``, and then every start warns."""
    if token is not None and not token.strip():
        raise ConfigError(
            "the token (--token / RLSCHED_TOKEN) is empty; set a real one, or unset it to "
            "serve on loopback without auth"
        )
    if token is None and not is_loopback(host):
        if not insecure:
            raise ConfigError(
                f"--host {host} is not a loopback address and no token is set: anyone who "
                "reaches it could store experiences and switch models. Set RLSCHED_TOKEN "
                "(or --token), or pass --insecure to serve without auth anyway"
            )
        return (
            f"WARNING: serving on {host} WITHOUT a token (--insecure): any client that "
            "reaches this address can write (/update, activate, rollback)"
        )
    return None


def default_allowed_hosts(
    host: str, token: str | None, extra: tuple[str, ...] = ()
) -> tuple[str, ...] | None:
    """The Host names write requests may carry: localhost, the loopback addresses, the bound
    address and ``extra`` (``--allowed-host``). On a wildcard address with a token and no
    ``extra``: any (None), as the token is what guards writes there."""
    from rlsched.serve.http import LOCAL_HOSTS

    if "*" in extra:
        return None
    wildcard = host in ("0.0.0.0", "::", "")
    if wildcard and token is not None and not extra:
        return None
    names = [*LOCAL_HOSTS, *(h.lower() for h in extra)]
    if not wildcard:
        names.append(host.strip("[]").lower())
    return tuple(dict.fromkeys(names))


class _DrainingServer:
    """uvicorn's Server, but SIGTERM and SIGINT both start a drain (``on_drain``) and the
    signal is not re-raised afterwards (uvicorn re-raises it, which killed the process before
    gRPC and the store were closed). Connections the kernel had already queued on the
    listening socket when the drain began are accepted and served too (closing the listener
    would reset them although their requests were sent)."""

    def __new__(cls, config: Any, on_drain: Callable[[], None], listener: socket.socket) -> Any:
        import asyncio
        import signal

        import uvicorn

        class Server(uvicorn.Server):
            async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
                loop = asyncio.get_running_loop()
                adopted = 0
                listener.setblocking(False)
                while True:  # (uvicorn closes the listener right after, in this loop turn)
                    try:
                        conn, _ = listener.accept()
                    except OSError:  # BlockingIOError: the queue is empty
                        break
                    await loop.connect_accepted_socket(
                        lambda: config.http_protocol_class(
                            config=config,
                            server_state=self.server_state,
                            app_state=self.lifespan.state,
                            _loop=loop,
                        ),
                        conn,
                    )
                    adopted += 1
                if adopted:
                    await asyncio.sleep(0.2)  # let them deliver their request headers
                await super().shutdown(sockets)

            @contextlib.contextmanager
            def capture_signals(self) -> Iterator[None]:
                if threading.current_thread() is not threading.main_thread():
                    yield
                    return
                sigs = (signal.SIGINT, signal.SIGTERM)
                original = {sig: signal.signal(sig, self.handle_exit) for sig in sigs}
                try:
                    yield
                finally:
                    for sig, handler in original.items():
                        signal.signal(sig, handler)

            def handle_exit(self, sig: int, frame: Any) -> None:
                on_drain()
                super().handle_exit(sig, frame)

        return Server(config)


def uvicorn_config(app: Any, limits: ServeLimits, log_level: str = "warning") -> Any:
    """uvicorn's own settings for ``limits`` plus the guarded protocol (header timeout,
    connection cap)."""
    import uvicorn

    return uvicorn.Config(
        app,
        log_level=log_level,
        access_log=False,
        lifespan="off",
        http=guarded_protocol(limits),
        limit_concurrency=limits.max_connections,
        timeout_keep_alive=max(1, math.ceil(limits.keep_alive)),
        timeout_graceful_shutdown=max(1, math.ceil(limits.drain_grace)),
    )


def require_serve_stack() -> None:
    """:class:`~rlsched.errors.MissingDependencyError` naming ``pip install 'rlsched[serve]'``
    when a module of the ``serve`` extra is missing."""
    require_extra("serve", what="`rlsched serve`")


def run(
    service: SchedulerService,
    host: str = "127.0.0.1",
    http_port: int = 5000,
    grpc_port: int = 50051,
    *,
    echo: Callable[[str], None] = print,
    log_level: str = "warning",
    learn_interval: float = 30.0,
    limits: ServeLimits | None = None,
    allowed_hosts: tuple[str, ...] | None = None,
) -> None:
    """Serve until SIGINT/SIGTERM, then drain: uvicorn in this thread, gRPC in its own
    threads. The drain marks the service not ready (``/readyz`` 503, gRPC health
    NOT_SERVING), stops accepting, gives in-flight HTTP and gRPC calls ``limits.drain_grace``
    seconds, stops the learner and closes the store; the function then returns (exit 0)."""
    require_serve_stack()
    # the web stack is the `serve` extra: imported here, after the check names what is missing
    from rlsched.serve.grpc_server import GrpcServer, grpc_address
    from rlsched.serve.http import LOCAL_HOSTS, create_app
    from rlsched.serve.metrics import ServiceMetrics

    limits = limits or ServeLimits()
    fds = raise_fd_limit(limits.max_connections + 512)
    if fds < limits.max_connections + 256:
        log.warning(
            "open-files limit %d is low for --max-connections %d; lowering it to %d",
            fds, limits.max_connections, max(fds - 256, 16),
        )  # fmt: skip
        limits = dataclasses.replace(limits, max_connections=max(fds - 256, 16))
    metrics = ServiceMetrics(service)
    app = create_app(
        service,
        metrics,
        allowed_hosts=LOCAL_HOSTS if allowed_hosts is None else allowed_hosts,
        body_timeout=limits.body_timeout,
    )
    sock = _listen(host, http_port)
    try:
        grpc_srv = GrpcServer(service, host, grpc_port, metrics, limits=limits)
    except OSError as e:
        sock.close()
        raise ConfigError(str(e)) from None
    grpc_srv.start()
    service.start(interval=learn_interval)
    cfg = uvicorn_config(app, limits, log_level)
    grpc_stopped: list[threading.Event] = []

    def on_drain() -> None:
        if service.draining:
            return
        service.draining = True
        log.warning("drain: not ready; finishing in-flight calls (grace %gs)", limits.drain_grace)
        grpc_stopped.append(grpc_srv.drain(limits.drain_grace))

    server = _DrainingServer(cfg, on_drain, sock)
    http_port = sock.getsockname()[1]  # the real one when 0 was asked for
    url = http_url(host, http_port)
    h = service.health()
    echo(
        f"serving model version {h['model_version']} (state_dim {h['state_dim']}, action_dim "
        f"{h['action_dim']}, N={h['num_nodes']} nodes)"
        + (f" from {service.registry.root}" if service.registry is not None else "")
    )
    echo(
        f"HTTP  {url}  (/predict /update /health /livez /readyz /v1/... /extender/... "
        "/metrics /docs)"
    )
    echo(
        f"gRPC  {grpc_address(host, grpc_srv.port)}  "
        "(scheduler.Scheduler, scheduler.SchedulerV1, health)"
    )
    if service.token:
        echo("write endpoints need 'Authorization: Bearer <token>'")
    if service.learner is not None:
        echo(f"online learner on (every {learn_interval:g}s)")
    try:
        server.run(sockets=[sock])
    finally:
        on_drain()  # also when uvicorn stopped for another reason
        for ev in grpc_stopped:
            ev.wait(limits.drain_grace + 1.0)
        service.close(timeout=max(limits.drain_grace, 1.0))  # a learner run may be mid-way
        sock.close()
        log.warning("drained; exiting")
