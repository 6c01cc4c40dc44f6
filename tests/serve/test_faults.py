"""Faults: model swaps under concurrent load, and kill -9 during a stream of /update."""

from __future__ import annotations

import sys
import threading
import time

import grpc
import httpx
import numpy as np
import pytest

from rlsched.serve.bundle import PolicyBundle
from rlsched.serve.proto import scheduler_pb2 as pb
from rlsched.serve.proto import scheduler_pb2_grpc as pb_grpc
from rlsched.serve.registry import ModelRegistry
from rlsched.serve.service import SchedulerService
from rlsched.serve.store import ExperienceStore

from .conftest import JH, A, Live, S, make_registry, start_cli


def test_swaps_under_concurrent_predicts(live: Live) -> None:
    """4 clients (HTTP and gRPC) predict while versions 1 and 2 are swapped 30 times: no
    errors, every answer valid, and every batch answered wholly by one version."""
    rng = np.random.default_rng(0)
    states = rng.uniform(0, 1, size=(16, S))
    reg = live.service.registry
    want = {v: reg.load(v).act(states).tolist() for v in (1, 2)}
    assert want[1] != want[2]  # the two versions are distinguishable on these states
    errors: list[str] = []
    answers = [0]
    stop = threading.Event()

    def http_client() -> None:
        with httpx.Client(base_url=live.url, timeout=10) as c:
            while not stop.is_set():
                r = c.post("/v1/predict_batch", json={"states": states.tolist()})
                if r.status_code != 200:
                    errors.append(f"batch {r.status_code} {r.text}")
                    continue
                body = r.json()
                if body["actions"] != want.get(body["model_version"]):
                    errors.append(f"mixed answer {body}")
                r = c.post("/predict", json={"state": states[3].tolist()})
                if r.status_code != 200 or r.json()["action"] not in (want[1][3], want[2][3]):
                    errors.append(f"predict {r.status_code} {r.text}")
                answers[0] += 2

    def grpc_client() -> None:
        stub = pb_grpc.SchedulerStub(live.channel)
        while not stop.is_set():
            try:
                a = stub.Predict(pb.StateRequest(state=states[5].tolist()), timeout=10).action
            except grpc.RpcError as e:
                errors.append(f"grpc {e.code()}")
                continue
            if a not in (want[1][5], want[2][5]) or not 0 <= a < A:
                errors.append(f"grpc action {a}")
            answers[0] += 1

    threads = [
        threading.Thread(target=f) for f in (http_client, http_client, grpc_client, grpc_client)
    ]
    for t in threads:
        t.start()
    try:
        with httpx.Client(base_url=live.url, timeout=10) as c:
            for i in range(30):
                v = 2 if i % 2 == 0 else 1
                r = c.post(f"/v1/models/{v}/activate", headers=JH)
                assert r.status_code == 200 and r.json()["model_version"] == v
                time.sleep(0.01)
    finally:
        stop.set()
        for t in threads:
            t.join(30)
    assert not errors, errors[:5]
    assert answers[0] > 30
    assert live.service.model_version == 1


def test_kill9_during_updates_loses_no_acknowledged_experience(tmp_path) -> None:
    reg_dir = tmp_path / "registry"
    make_registry(reg_dir)  # v1 active, v2 published
    proc = start_cli(["--model", str(reg_dir)])
    acked: list[int] = []
    stop = threading.Event()
    batch = 16

    def stream(seed: int) -> None:
        rng = np.random.default_rng(seed)
        with httpx.Client(base_url=proc.url, timeout=5) as c:
            while not stop.is_set():
                body = {
                    "states": rng.uniform(0, 1, (batch, S)).tolist(),
                    "actions": rng.integers(0, A, batch).tolist(),
                    "rewards": rng.normal(size=batch).tolist(),
                    "dones": [False] * (batch - 1) + [True],
                }
                try:
                    r = c.post("/update", json=body)
                except httpx.HTTPError:
                    return  # the server is gone
                if r.status_code == 200:
                    acked.append(r.json()["stored"])

    threads = [threading.Thread(target=stream, args=(s,)) for s in range(2)]
    try:
        r = httpx.post(proc.url + "/v1/models/2/activate", headers=JH, timeout=5)
        assert r.status_code == 200
        for t in threads:
            t.start()
        deadline = time.monotonic() + 10
        while sum(acked) < 40 * batch and time.monotonic() < deadline:
            time.sleep(0.01)
        # a newer version published meanwhile (e.g. by a learner in another process)
        ModelRegistry(reg_dir).publish(
            ModelRegistry(reg_dir).load(1), note="published while serving", activate=True
        )
        proc.proc.kill()  # SIGKILL mid-stream
        proc.proc.wait(10)
    finally:
        stop.set()
        for t in threads:
            t.join(10)
        if proc.proc.poll() is None:
            proc.proc.kill()
    n_acked = sum(acked)
    assert n_acked >= 40 * batch
    with ExperienceStore(reg_dir / "experiences.sqlite") as st:
        stored = st.count()
    # every acknowledged experience is there; at most the two in-flight batches more
    assert n_acked <= stored <= n_acked + 2 * batch

    again = start_cli(["--model", str(reg_dir)])
    try:
        h = httpx.get(again.url + "/health", timeout=5).json()
        assert h["model_version"] == 3 and h["state_dim"] == S
        r = httpx.post(
            again.url + "/update",
            json={"states": [[0.5] * S], "actions": [0], "rewards": [1.0], "dones": [True]},
            timeout=5,
        )
        assert r.status_code == 200
        metrics = httpx.get(again.url + "/metrics", timeout=5).text
        assert f'rlsched_experiences_in_store{{consumed="false"}} {stored + 1}.0' in metrics
    finally:
        again.proc.terminate()  # SIGTERM: drains and closes the store
        try:
            assert again.proc.wait(30) == 0
        finally:
            if again.proc.poll() is None:
                again.proc.kill()
    # a store belongs to one process: read it once the server is gone
    with ExperienceStore(reg_dir / "experiences.sqlite") as st:
        assert st.count() == stored + 1


# ---------------------------------------------------------------------------- refusing to start
def _serve_main(monkeypatch, capsys, args: list[str]) -> tuple[int, str]:
    from rlsched.cli import main

    monkeypatch.setattr(sys, "argv", ["rlsched", "serve", *args])
    with pytest.raises(SystemExit) as ei:
        main()
    return int(ei.value.code or 0), capsys.readouterr().err


@pytest.mark.parametrize(
    ("dims", "words"),
    [(["--state-dim", "12", "--action-dim", "16"], "2N+2"),
     (["--state-dim", "11", "--action-dim", "11"], "2N+2"),
     (["--state-dim", "10"], "--action-dim")],
)  # fmt: skip
def test_inconsistent_dims_refused(monkeypatch, capsys, tmp_path, dims, words) -> None:
    code, err = _serve_main(monkeypatch, capsys, [*dims, "--registry", str(tmp_path / "r")])
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1 and words in err


def test_unwritable_store_is_one_line_naming_it(monkeypatch, capsys, tmp_path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    store = blocker / "experiences.sqlite"
    args = ["--state-dim", "10", "--action-dim", "10", "--registry", str(tmp_path / "r")]
    code, err = _serve_main(monkeypatch, capsys, [*args, "--store", str(store)])
    assert code == 2 and err.count("\n") == 1 and str(store) in err, err


def test_dims_differing_from_the_model_refused(monkeypatch, capsys, tmp_path) -> None:
    bundle_dir = tmp_path / "bundle"
    PolicyBundle.fresh(S, A).save(bundle_dir)
    args = ["--model", str(bundle_dir), "--registry", str(tmp_path / "r")]
    code, err = _serve_main(monkeypatch, capsys, [*args, "--state-dim", "16", "--action-dim", "16"])
    assert code == 2 and err.count("\n") == 1
    assert "--state-dim 16 does not match" in err and f"state_dim {S}" in err
    assert ModelRegistry(tmp_path / "r").current_version() is None  # nothing published


def test_learner_publish_swaps_the_served_model(tmp_path) -> None:
    svc = SchedulerService(
        registry=make_registry(tmp_path / "r"), store=ExperienceStore(tmp_path / "e.sqlite")
    )
    try:
        svc.attach_learner(gate=None, min_experiences=16)
        rng = np.random.default_rng(0)
        n = 32
        svc.update(rng.uniform(0, 1, (n, S)).tolist(), rng.integers(0, A, n).tolist(),
                   rng.normal(size=n).tolist(), [False] * (n - 1) + [True])  # fmt: skip
        rep = svc.learner.run_once()
        assert rep.status == "published" and rep.version == 3
        assert svc.model_version == 3 and svc.registry.current_version() == 3
    finally:
        svc.close()
