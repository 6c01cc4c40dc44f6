"""Soak test of `rlsched serve`: 8 clients on /predict for minutes while the served model is
swapped every second and the online learner runs; counts errors, p50/p99 per minute and the
server's resident memory (RSS) over time. Loopback only; the server is stopped with SIGTERM at
the end and must exit 0 (a drain).

One ``rlsched serve`` process (N = 7: state and actions 16, a registry with two fresh
versions, ``--learn --gate none --learn-interval 2 --min-experiences 256``), 8 client
processes sending /predict back to back over kept-alive connections, one thread activating
version 1 / 2 alternately every second, one thread posting 64 experiences to /update every
0.25 s (with an Idempotency-Key), all on the same machine.

    python benchmarks/bench_soak.py [--seconds 300] [--clients 8] [--json out.json]
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing as mp
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_serve import free_port, wait_http  # noqa: E402
from common import machine, write_json  # noqa: E402

N = 7
DIM = 2 * N + 2
JSON_HEADERS = {"Content-Type": "application/json"}


def _client(port: int, seconds: float, t_start: float, seed: int, q: mp.Queue) -> None:
    """/predict back to back until ``t_start + seconds``; sends (times, latencies, errors)."""
    rng = np.random.default_rng(seed)
    bodies = [
        json.dumps({"state": [*rng.uniform(0, 0.8, 2 * N).tolist(), 0.005, 0.5]}).encode()
        for _ in range(64)
    ]
    times: list[float] = []
    lat: list[float] = []
    errors: list[str] = []
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    i = 0
    end = t_start + seconds
    while True:
        t0 = time.time()
        if t0 >= end:
            break
        try:
            conn.request("POST", "/predict", bodies[i % 64], JSON_HEADERS)
            r = conn.getresponse()
            data = r.read()
            if r.status != 200 or b'"action"' not in data:
                errors.append(f"{r.status} {data[:100]!r}")
        except (OSError, http.client.HTTPException) as e:
            errors.append(f"{type(e).__name__}: {e}")
            conn.close()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        t1 = time.time()
        times.append(t0 - t_start)
        lat.append(t1 - t0)
        i += 1
    conn.close()
    q.put((np.asarray(times, np.float32), np.asarray(lat, np.float32), errors))


def _rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _post(port: int, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        c.request("POST", path, body, headers)
        r = c.getresponse()
        return r.status, r.read()
    finally:
        c.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=300.0)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()

    from rlsched.serve.bundle import PolicyBundle
    from rlsched.serve.registry import ModelRegistry

    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    with tempfile.TemporaryDirectory() as tmp:
        reg_dir = Path(tmp) / "registry"
        reg = ModelRegistry(reg_dir)
        for seed in (0, 1):
            reg.publish(PolicyBundle.fresh(DIM, DIM, seed=seed), note=f"seed {seed}", pin=True)
        reg.activate(1)
        hp, gp = free_port(), free_port()
        srv = subprocess.Popen(
            [sys.executable, "-c", "from rlsched.cli import main; main()", "serve",
             "--registry", str(reg_dir), "--http-port", str(hp), "--grpc-port", str(gp),
             "--learn", "--gate", "none", "--learn-interval", "2", "--min-experiences", "256",
             "--keep-versions", "20", "--log-level", "error"],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        errors: list[str] = []
        swaps = updates = 0
        rss: list[tuple[float, float]] = []
        try:
            wait_http(hp)
            time.sleep(2.0)  # settle (imports, first requests)
            q: mp.Queue = mp.Queue()
            t_start = time.time() + 1.0
            procs = [
                mp.Process(target=_client, args=(hp, args.seconds, t_start, k, q))
                for k in range(args.clients)
            ]
            for p in procs:
                p.start()
            stop = threading.Event()

            def swapper() -> None:
                nonlocal swaps
                v = 2
                while not stop.wait(1.0):
                    st, body = _post(hp, f"/v1/models/{v}/activate", b"", JSON_HEADERS)
                    if st != 200:
                        errors.append(f"activate {st} {body[:100]!r}")
                    swaps += 1
                    v = 1 if v == 2 else 2

            def updater() -> None:
                nonlocal updates
                rng = np.random.default_rng(7)
                k = 0
                while not stop.wait(0.25):
                    n = 64
                    body = json.dumps({
                        "states": rng.uniform(0, 0.8, (n, DIM)).round(4).tolist(),
                        "actions": rng.integers(0, DIM, n).tolist(),
                        "rewards": rng.normal(size=n).round(4).tolist(),
                        "dones": [bool(x) for x in (np.arange(n) % 16 == 15)],
                    }).encode()  # fmt: skip
                    st, resp = _post(hp, "/update", body, {**JSON_HEADERS,
                                     "Idempotency-Key": f"soak-{k}"})  # fmt: skip
                    if st != 200:
                        errors.append(f"update {st} {resp[:100]!r}")
                    updates += 1
                    k += 1

            while time.time() < t_start:
                time.sleep(0.01)
            threads = [threading.Thread(target=f, daemon=True) for f in (swapper, updater)]
            for t in threads:
                t.start()
            while time.time() < t_start + args.seconds:
                rss.append((time.time() - t_start, _rss_mb(srv.pid)))
                time.sleep(5.0)
            rss.append((time.time() - t_start, _rss_mb(srv.pid)))
            stop.set()
            for t in threads:
                t.join(30)
            results = [q.get(timeout=120) for _ in procs]
            for p in procs:
                p.join(30)
            metrics = http.client.HTTPConnection("127.0.0.1", hp, timeout=10)
            metrics.request("GET", "/metrics")
            mtext = metrics.getresponse().read().decode()
            metrics.close()
        finally:
            srv.send_signal(signal.SIGTERM)
            try:
                exit_code = srv.wait(60)
            except subprocess.TimeoutExpired:
                srv.kill()
                exit_code = None
            stderr = srv.stderr.read() if srv.stderr else ""
        versions_left = ModelRegistry(reg_dir).versions()

    times = np.concatenate([r[0] for r in results])
    lat = np.concatenate([r[1] for r in results]) * 1e3
    for r in results:
        errors += r[2]
    window = min(60.0, args.seconds / 3)

    def pct(mask: np.ndarray) -> dict[str, float]:
        x = lat[mask]
        return {
            "p50_ms": float(np.percentile(x, 50)),
            "p99_ms": float(np.percentile(x, 99)),
            "requests": int(mask.sum()),
        }

    learner = {
        k: float(line.rsplit(" ", 1)[1])
        for line in mtext.splitlines()
        if line.startswith("rlsched_learner_updates_total")
        for k in [line.split('result="')[1].split('"')[0]]
    }
    out = {
        "machine": machine(),
        "seconds": args.seconds,
        "clients": args.clients,
        "num_nodes": N,
        "requests": len(lat),
        "requests_per_s": float(len(lat) / args.seconds),
        "errors": len(errors),
        "error_samples": errors[:10],
        "overall": pct(np.ones(len(lat), bool)),
        "first_window": {"seconds": window, **pct(times < window)},
        "last_window": {"seconds": window, **pct(times >= args.seconds - window)},
        "rss_mb": rss,
        "rss_start_mb": rss[0][1],
        # after the first window the learner has imported torch and run: the warm baseline
        "rss_warm_mb": next(v for t, v in rss if t >= window),
        "rss_end_mb": rss[-1][1],
        "rss_max_mb": max(v for _, v in rss),
        "swaps": swaps,
        "updates_posted": updates,
        "learner": learner,
        "registry_versions_left": len(versions_left),
        "server_exit_code": exit_code,
        "server_stderr_tail": stderr[-2000:],
    }
    print(json.dumps({k: v for k, v in out.items() if k not in ("rss_mb", "machine")}, indent=1))
    write_json(args.json, out)


if __name__ == "__main__":
    main()
