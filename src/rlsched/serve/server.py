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
* no ``--model`` but ``--state-dim S --action-dim A``: the registry's current version if it has
  these dimensions, else a fresh untrained policy is published (as the plugin's own service
  starts).

The served dimensions must fit the plugin's layout, state_dim = action_dim = 2N+2, and agree
with ``--state-dim`` / ``--action-dim`` when those are given too; otherwise a one-line
:class:`~rlsched.errors.ConfigError`.
"""

from __future__ import annotations

import hashlib
import logging
import re
import socket
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rlsched.errors import ConfigError
from rlsched.serve.service import SchedulerService, plugin_num_nodes

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
    store: Path | None = None
    token: str | None = None
    learn: bool = False
    learn_interval: float = 30.0
    min_experiences: int = 256
    gate: str = "kube"  # kube | none
    seed: int = 0


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


def build_service(cfg: ServeConfig) -> SchedulerService:
    """Resolve the model into a registry with an active version and build the service."""
    from rlsched.policies.learned import resolve_model_dir
    from rlsched.serve.bundle import PolicyBundle
    from rlsched.serve.registry import ModelRegistry
    from rlsched.serve.store import ExperienceStore

    if (cfg.state_dim is None) != (cfg.action_dim is None) and cfg.model is None:
        raise ConfigError("give both --state-dim and --action-dim (or --model)")
    if cfg.model is None and cfg.state_dim is None:
        raise ConfigError("give --model DIR|VERSION, or --state-dim S --action-dim A")
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

    if model_path is None:  # fresh (or resume) by dimensions
        assert cfg.state_dim is not None and cfg.action_dim is not None
        cur = registry.current_version()
        if cur is not None:
            b = registry.load(cur)
            if (b.state_dim, b.action_dim) != (cfg.state_dim, cfg.action_dim):
                raise ConfigError(
                    f"the registry at {reg_root} serves version {cur} with state_dim "
                    f"{b.state_dim} / action_dim {b.action_dim}, not {cfg.state_dim} / "
                    f"{cfg.action_dim}; use another --registry for another cluster size"
                )
        else:
            b = PolicyBundle.fresh(cfg.state_dim, cfg.action_dim, seed=cfg.seed)
            registry.publish(b, note=f"fresh policy (seed {cfg.seed})", activate=True)
    elif _is_registry(model_path):
        if registry.current_version() is None:
            raise ConfigError(f"the registry at {model_path} has no active version")
    elif (model_path / "bundle.json").is_file() or _has_meta(model_path, resolve_model_dir):
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
        note = f"source {model_path.resolve()} sha256 {digest}"
        known = [v["version"] for v in registry.list() if v.get("note") == note]
        cur = registry.current_version()
        if not known:
            registry.publish(b, note=note, activate=True)
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

    cur = registry.current_version()
    assert cur is not None
    b = registry.load(cur)
    _check_dims(cfg, b.state_dim, b.action_dim, f"model version {cur} in {reg_root}")
    store = ExperienceStore(cfg.store or Path(reg_root) / STORE_NAME)
    service = SchedulerService(b, registry=registry, store=store, token=cfg.token)
    if cfg.learn:
        from rlsched.serve.learner import kube_gate

        gate = kube_gate() if cfg.gate == "kube" else None
        service.attach_learner(gate=gate, min_experiences=cfg.min_experiences)
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


def run(
    service: SchedulerService,
    host: str = "127.0.0.1",
    http_port: int = 5000,
    grpc_port: int = 50051,
    *,
    echo: Callable[[str], None] = print,
    log_level: str = "warning",
    learn_interval: float = 30.0,
) -> None:
    """Serve until SIGINT/SIGTERM: uvicorn in this thread, gRPC in its own threads."""
    import uvicorn

    from rlsched.serve.grpc_server import GrpcServer, grpc_address
    from rlsched.serve.http import create_app
    from rlsched.serve.metrics import ServiceMetrics

    metrics = ServiceMetrics(service)
    app = create_app(service, metrics)
    sock = _listen(host, http_port)
    try:
        grpc_srv = GrpcServer(service, host, grpc_port, metrics)
    except OSError as e:
        sock.close()
        raise ConfigError(str(e)) from None
    grpc_srv.start()
    service.start(interval=learn_interval)
    cfg = uvicorn.Config(
        app, log_level=log_level, access_log=False, lifespan="off", timeout_graceful_shutdown=5
    )
    server = uvicorn.Server(cfg)
    http_port = sock.getsockname()[1]  # the real one when 0 was asked for
    url = http_url(host, http_port)
    h = service.health()
    echo(
        f"serving model version {h['model_version']} (state_dim {h['state_dim']}, action_dim "
        f"{h['action_dim']}, N={h['num_nodes']} nodes)"
        + (f" from {service.registry.root}" if service.registry is not None else "")
    )
    echo(f"HTTP  {url}  (/predict /update /health /v1/... /extender/... /metrics /docs)")
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
        grpc_srv.stop(grace=2.0)
        service.close()
        sock.close()
