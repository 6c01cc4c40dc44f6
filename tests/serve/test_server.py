"""`rlsched serve` as a process: probes, SIGTERM / SIGINT drain, exposure checks (issue #14,
items 2 and 6). Subprocesses on loopback, each stopped by the test."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import grpc
import httpx
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from rlsched.errors import ConfigError
from rlsched.serve.proto import scheduler_pb2 as pb
from rlsched.serve.proto import scheduler_pb2_grpc as pb_grpc
from rlsched.serve.server import check_exposure, default_allowed_hosts, is_loopback

from .conftest import Live, start_cli

NODES = 5000  # a ScoreNodes / /v1/score call takes milliseconds: still in flight at SIGTERM


def test_probes(live: Live) -> None:
    assert live.http.get("/livez").json() == {"status": "alive"}
    r = live.http.get("/readyz")
    assert r.status_code == 200 and r.json()["status"] == "ready"
    live.service.draining = True
    try:
        r = live.http.get("/readyz")
        assert r.status_code == 503 and "draining" in r.json()["error"]
        assert live.http.get("/livez").status_code == 200
        assert live.http.get("/health").json()["status"] == "healthy"  # as the plugin expects
    finally:
        live.service.draining = False


def _score_request() -> tuple[pb.ScoreNodesRequest, bytes]:
    nodes = [
        {"name": f"n{i}", "cpu_allocatable_millicores": 4000.0,
         "memory_allocatable_bytes": 8e9, "cpu_used_millicores": float(i % 4000),
         "memory_used_bytes": 1e9}
        for i in range(NODES)
    ]  # fmt: skip
    pod = {"cpu_millicores": 500.0, "memory_bytes": 1e9}
    req = pb.ScoreNodesRequest(
        pod=pb.PodResources(**pod), nodes=[pb.NodeResources(**n) for n in nodes]
    )
    return req, json.dumps({"pod": pod, "nodes": nodes}).encode()


def _http_call(url: str, body: bytes, sent: threading.Barrier) -> int:
    host, port = url.rsplit("/", 1)[-1].rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=30) as s:
        s.sendall(
            b"POST /v1/score HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Connection: close\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
        )
        sent.wait(30)
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    return int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/1.1 ") else -1


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_drains_64_grpc_and_64_http_calls(tmp_path: Path, sig: signal.Signals) -> None:
    proc = start_cli(
        [
            "--state-dim",
            "10",
            "--action-dim",
            "10",
            "--registry",
            str(tmp_path / "reg"),
            "--drain-grace",
            "20",
        ]
    )
    channel = grpc.insecure_channel(proc.grpc_address)
    try:
        req, body = _score_request()
        stub = pb_grpc.SchedulerV1Stub(channel)
        sent = threading.Barrier(65)
        with ThreadPoolExecutor(64) as pool:
            http = [pool.submit(_http_call, proc.url, body, sent) for _ in range(64)]
            grpc_calls = [stub.ScoreNodes.future(req, timeout=30) for _ in range(64)]
            sent.wait(30)  # every HTTP request is written
            time.sleep(0.3)  # ... and read by the server
            t_sig = time.monotonic()
            proc.proc.send_signal(sig)
            done_after = []
            for f in grpc_calls:
                res = f.result()  # raises on any non-OK status
                assert len(res.scores) == NODES
                done_after.append(time.monotonic())
            codes = [f.result() for f in http]
        assert codes == [200] * 64
        assert proc.proc.wait(30) == 0
        assert max(done_after) > t_sig  # some calls were really in flight at the signal
        assert "drained; exiting" in "".join(proc.lines)
    finally:
        channel.close()
        if proc.proc.poll() is None:
            proc.proc.kill()
            proc.proc.wait(10)


@pytest.mark.parametrize("idle", [0.0, 1.2])
def test_grpc_drain_turns_health_not_serving_and_accepts_for_the_quiet_seconds(
    tmp_path: Path, idle: float
) -> None:
    """Health turns NOT_SERVING when the drain starts, and calls are still answered for the
    quiet seconds, counted from the drain's start even when the server had been idle for
    longer (its last call long past), so a call sent just after the signal is answered."""
    from rlsched.serve.grpc_server import GrpcServer
    from rlsched.serve.service import SchedulerService

    from .conftest import make_registry

    svc = SchedulerService(registry=make_registry(tmp_path / "reg"))
    g = GrpcServer(svc, "127.0.0.1", 0).start()
    with grpc.insecure_channel(f"127.0.0.1:{g.port}") as ch:
        health = health_pb2_grpc.HealthStub(ch)
        req = health_pb2.HealthCheckRequest(service="scheduler.Scheduler")
        assert health.Check(req, timeout=5).status == health_pb2.HealthCheckResponse.SERVING
        time.sleep(idle)  # 1.2: idle for longer than the quiet second below
        t0 = time.monotonic()
        done = g.drain(grace=10, quiet=1.0)
        time.sleep(0.3)
        assert health.Check(req, timeout=5).status == health_pb2.HealthCheckResponse.NOT_SERVING
        assert done.wait(10)
        assert time.monotonic() - t0 >= 1.0
        with pytest.raises(grpc.RpcError):
            health.Check(req, timeout=2)


# ---------------------------------------------------------------------------- exposure
def test_exposure_checks() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0")
    assert check_exposure("127.0.0.1", None, False) is None
    with pytest.raises(ConfigError, match="empty"):
        check_exposure("127.0.0.1", "", False)
    with pytest.raises(ConfigError, match="empty"):
        check_exposure("127.0.0.1", "   ", False)
    with pytest.raises(ConfigError, match="--insecure"):
        check_exposure("0.0.0.0", None, False)
    assert "WITHOUT a token" in (check_exposure("0.0.0.0", None, True) or "")
    assert check_exposure("0.0.0.0", "t0ken", False) is None
    assert default_allowed_hosts("0.0.0.0", "t0ken") is None  # the token guards writes
    assert default_allowed_hosts("0.0.0.0", None) == ("localhost", "127.0.0.1", "::1")
    hosts = default_allowed_hosts("10.1.2.3", "t", ("rlsched.ns.svc",))
    assert hosts is not None and {"10.1.2.3", "rlsched.ns.svc", "localhost"} <= set(hosts)


def test_cli_refuses_unsafe_starts(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from rlsched.cli import app

    base = ["serve", "--state-dim", "10", "--action-dim", "10", "--registry", str(tmp_path),
            "--http-port", "0", "--grpc-port", "0"]  # fmt: skip
    r = CliRunner().invoke(app, [*base, "--host", "0.0.0.0"], env={"RLSCHED_TOKEN": None})
    assert isinstance(r.exception, ConfigError) and "--insecure" in str(r.exception)
    r = CliRunner().invoke(app, base, env={"RLSCHED_TOKEN": ""})
    assert isinstance(r.exception, ConfigError) and "empty" in str(r.exception)
    assert not (tmp_path / "versions").exists()  # refused before anything was created


# ---------------------------------------------------------------------------- model choice
def test_note_layout_14_values_for_7_nodes(tmp_path: Path) -> None:
    """`rlsched serve --state-dim 14 --action-dim 16`: the service note's layout (2N node
    fractions, no pod part) starts and answers /predict for 14 values; 16 values are 400."""
    proc = start_cli(
        ["--state-dim", "14", "--action-dim", "16", "--registry", str(tmp_path / "reg")]
    )
    try:
        h = httpx.get(proc.url + "/health", timeout=5).json()
        assert (h["state_dim"], h["action_dim"], h["num_nodes"]) == (14, 16, 7)
        r = httpx.post(proc.url + "/predict", json={"state": [0.5] * 14}, timeout=5)
        assert r.status_code == 200 and 0 <= r.json()["action"] < 16
        r = httpx.post(proc.url + "/predict", json={"state": [0.5] * 16}, timeout=5)
        assert r.status_code == 400 and "14" in r.json()["error"]
        nodes = [{"name": f"n{i}", "cpu_allocatable_millicores": 4000,
                  "memory_allocatable_bytes": 8e9} for i in range(9)]  # fmt: skip
        pod = {"cpu_millicores": 100, "memory_bytes": 1e8}
        r = httpx.post(proc.url + "/v1/score", json={"pod": pod, "nodes": nodes}, timeout=5)
        assert r.status_code == 200 and len(r.json()["scores"]) == 9
    finally:
        proc.proc.send_signal(signal.SIGTERM)
        assert proc.proc.wait(30) == 0


def test_without_model_a_fresh_policy_always(tmp_path: Path, monkeypatch) -> None:
    """No --model and no --registry: a fresh policy, even when the default registry already
    serves another (trained) version; --registry DIR serves DIR's current version."""
    from rlsched.serve.bundle import PolicyBundle
    from rlsched.serve.registry import ModelRegistry
    from rlsched.serve.server import DEFAULT_REGISTRY, ServeConfig, build_service

    monkeypatch.chdir(tmp_path)
    reg = ModelRegistry(DEFAULT_REGISTRY)
    reg.publish(PolicyBundle.fresh(16, 16, seed=42), note="trained elsewhere", activate=True)
    svc = build_service(ServeConfig(state_dim=16, action_dim=16))
    try:
        assert svc.model_version == 2 and "fresh policy" in reg.info(2)["note"]
    finally:
        svc.close()
    svc = build_service(ServeConfig(registry=DEFAULT_REGISTRY))
    try:
        assert svc.model_version == 2  # explicit: the registry's current version
    finally:
        svc.close()
    svc = build_service(ServeConfig(state_dim=16, action_dim=16))
    try:
        assert svc.model_version == 3 and reg.versions() == [1, 2, 3]
    finally:
        svc.close()


def test_a_replica_serving_a_bundle_never_loads_torch(tmp_path: Path) -> None:
    """Serving runs on numpy: building the service (registry, store, fresh policy) and
    answering a prediction import neither torch nor SB3 (a replica's memory request in
    deploy/kubernetes counts on it)."""
    code = f"""
import sys
from pathlib import Path
from rlsched.serve.server import ServeConfig, build_service
svc = build_service(ServeConfig(registry=Path({str(tmp_path / "reg")!r}),
                                store=Path({str(tmp_path / "s.db")!r}),
                                state_dim=10, action_dim=10))
svc.predict([0.5] * 10)
print(sorted(m for m in ("torch", "stable_baselines3", "sb3_contrib") if m in sys.modules))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, check=True)  # fmt: skip
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stdout + out.stderr
