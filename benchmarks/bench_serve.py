"""Serving latency and throughput: REST /predict, gRPC Predict, batch scoring, and a Flask +
torch baseline of the design note's kind serving the same weights, all on loopback.

For each cluster size N (state and actions 2N+2) one ``rlsched serve`` process and one baseline
process are started; C client processes (1 and 8) send requests back to back for a fixed time
over a kept-alive connection / channel, timing each call end to end. Clients, servers and the
baseline share the machine's 2 cores, as a scheduler and its sidecar would.

    python benchmarks/bench_serve.py [--seconds 3] [--nodes 7,100,500] [--json out.json]
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing as mp
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_http(port: int, timeout: float = 60.0) -> None:
    t0 = time.time()
    while time.time() - t0 < timeout:
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
            c.request("GET", "/health")
            if c.getresponse().status == 200:
                return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"server on port {port} did not come up")


def _state(n: int, rng: np.random.Generator) -> list[float]:
    s = rng.uniform(0, 0.8, size=2 * n).tolist()
    return [*s, 0.005, 0.5]


def _nodes(n: int, rng: np.random.Generator) -> list[dict]:
    return [
        {
            "name": f"node-{i}",
            "cpu_used_millicores": float(rng.uniform(0, 12000)),
            "cpu_allocatable_millicores": 16000.0,
            "memory_used_bytes": float(rng.uniform(0, 3e10)),
            "memory_allocatable_bytes": 6.4e10,
        }
        for i in range(n)
    ]


def client(kind: str, port: int, n: int, seconds: float, seed: int, out: mp.Queue) -> None:
    rng = np.random.default_rng(seed)
    lat: list[float] = []
    if kind in ("rest_predict", "flask_predict", "rest_score"):
        conn = http.client.HTTPConnection("127.0.0.1", port)
        headers = {"Content-Type": "application/json"}
        if kind == "rest_score":
            nodes = _nodes(n, rng)
            path = "/v1/score"
            body = json.dumps(
                {"pod": {"name": "p", "cpu_millicores": 500.0, "memory_bytes": 1e9}, "nodes": nodes}
            )
        else:
            path, body = "/predict", json.dumps({"state": _state(n, rng)})
        end = time.perf_counter() + seconds
        while True:
            t = time.perf_counter()
            if t > end:
                break
            conn.request("POST", path, body, headers)
            r = conn.getresponse()
            r.read()
            if r.status != 200:
                raise RuntimeError(f"{kind}: HTTP {r.status}")
            lat.append(time.perf_counter() - t)
    else:
        import grpc

        from rlsched.serve.proto import scheduler_pb2 as pb
        from rlsched.serve.proto import scheduler_pb2_grpc as rpc

        ch = grpc.insecure_channel(f"127.0.0.1:{port}")
        if kind in ("grpc_predict", "grpc_echo_floor"):
            stub = rpc.SchedulerStub(ch)
            req = pb.StateRequest(state=_state(n, rng))
            call = stub.Predict
        else:
            stub = rpc.SchedulerV1Stub(ch)
            req = pb.ScoreNodesRequest(
                pod=pb.PodResources(name="p", cpu_millicores=500.0, memory_bytes=1e9),
                nodes=[pb.NodeResources(**d) for d in _nodes(n, rng)],
            )
            call = stub.ScoreNodes
        call(req)  # connect before timing
        end = time.perf_counter() + seconds
        while True:
            t = time.perf_counter()
            if t > end:
                break
            call(req)
            lat.append(time.perf_counter() - t)
    out.put(lat)


def measure(kind: str, port: int, n: int, clients: int, seconds: float) -> dict:
    q: mp.Queue = mp.Queue()
    procs = [mp.Process(target=client, args=(kind, port, n, seconds, k, q)) for k in range(clients)]
    for p in procs:
        p.start()
    lats = [q.get() for _ in procs]
    for p in procs:
        p.join()
    all_l = np.concatenate([np.asarray(x) for x in lats]) * 1e3
    return {
        "kind": kind,
        "nodes": n,
        "clients": clients,
        "requests": len(all_l),
        "p50_ms": float(np.percentile(all_l, 50)),
        "p99_ms": float(np.percentile(all_l, 99)),
        "throughput_rps": float(len(all_l) / seconds),
    }


def main() -> dict:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--nodes", default="7,100,500")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    from common import machine, write_json
    from rlsched.serve.registry import ModelRegistry

    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    rows: list[dict] = []
    for n in (int(x) for x in args.nodes.split(",")):
        dim = 2 * n + 2
        with tempfile.TemporaryDirectory() as tmp:
            hp, gp, fp = free_port(), free_port(), free_port()
            reg = Path(tmp) / "registry"
            srv = subprocess.Popen(
                [
                    sys.executable,
                    "-c",
                    "from rlsched.cli import main; main()",
                    "serve",
                    "--state-dim",
                    str(dim),
                    "--action-dim",
                    str(dim),
                    "--http-port",
                    str(hp),
                    "--grpc-port",
                    str(gp),
                    "--registry",
                    str(reg),
                    "--no-learn",
                ],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            try:
                wait_http(hp)
                bundle_dir = ModelRegistry(reg).path(ModelRegistry(reg).current_version())
                base = subprocess.Popen(
                    [sys.executable, str(HERE / "flask_baseline.py"), str(bundle_dir), str(fp)],
                    env=env,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
                ep = free_port()  # the transport floor: same proto, a Predict that does nothing
                echo = subprocess.Popen(
                    [sys.executable, str(HERE / "grpc_echo.py"), str(ep)],
                    env=env,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
                try:
                    wait_http(fp)
                    time.sleep(1.0)  # let the echo server bind
                    for clients in (1, 8):
                        for kind, port in (
                            ("rest_predict", hp),
                            ("grpc_predict", gp),
                            ("rest_score", hp),
                            ("grpc_score", gp),
                            ("flask_predict", fp),
                            ("grpc_echo_floor", ep),
                        ):
                            r = measure(kind, port, n, clients, args.seconds)
                            rows.append(r)
                            print(
                                f"N={n:4d} clients={clients} {kind:14s} p50 {r['p50_ms']:7.3f} ms"
                                f"  p99 {r['p99_ms']:7.3f} ms  {r['throughput_rps']:8.0f} req/s",
                                flush=True,
                            )
                finally:
                    for p in (base, echo):
                        p.kill()
                        p.wait()
            finally:
                srv.kill()
                srv.wait()
    out = {"machine": machine(), "seconds": args.seconds, "rows": rows}
    return write_json(args.json, out)


if __name__ == "__main__":
    main()
