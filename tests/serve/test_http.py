"""REST against a real uvicorn on loopback: the plugin's exact calls, v1, model management,
bad input, the token, metrics."""

from __future__ import annotations

import json
import math
import socket
import time

import httpx
import numpy as np
import pytest

from rlsched.serve.service import MAX_BODY_BYTES, MAX_EXPERIENCES

from .conftest import JH, TOKEN, A, Live, N, S, start_live


def go_body(obj: dict) -> bytes:
    """JSON as Go's encoding/json writes it (compact; floats like 1e-05)."""
    return json.dumps(obj, separators=(",", ":")).encode()


def plugin_state(used: np.ndarray, pod_cpu_m: float, pod_mem_b: float) -> list[float]:
    return [*used.ravel().tolist(), pod_cpu_m / 100000.0, pod_mem_b / 1073741824.0]


def post_raw(live: Live, path: str, body: bytes, **headers: str) -> httpx.Response:
    return live.http.post(
        path, content=body, headers={"Content-Type": "application/json", **headers}
    )


# ---------------------------------------------------------------------------- the plugin
def test_plugin_session_replay(live: Live) -> None:
    """What the k8sSim plugin does: /health, /predict once per (pod, candidate node), then
    /update with up to 512 experiences when the session closes."""
    r = live.http.get("/health")
    assert r.status_code == 200
    h = r.json()
    assert set(h) == {
        "status", "service", "model_version", "state_dim", "action_dim", "num_nodes", "uptime_s",
    }  # fmt: skip
    assert h["status"] == "healthy" and h["state_dim"] == S and h["action_dim"] == A
    assert h["num_nodes"] == N and h["uptime_s"] >= 0

    rng = np.random.default_rng(0)
    used = rng.uniform(0, 0.9, size=(N, 2))
    states, actions = [], []
    for _pod in range(3):
        cpu_m, mem_b = float(rng.integers(100, 4000)), float(rng.integers(1, 8) * 2**28)
        for _node in range(N):
            st = plugin_state(used, cpu_m, mem_b)
            r = post_raw(live, "/predict", go_body({"state": st}))
            assert r.status_code == 200
            assert r.headers["content-type"] == "application/json"
            body = r.json()
            assert set(body) == {"action"} and isinstance(body["action"], int)
            assert 0 <= body["action"] < A
            assert body["action"] == live.service.predict(st)
            states.append(st)
            actions.append(body["action"])

    before = live.service.store.count()
    k = 512
    idx = rng.integers(0, len(states), size=k)
    upd = {
        "states": [states[i] for i in idx],
        "actions": [actions[i] for i in idx],
        "rewards": rng.normal(size=k).tolist(),
        "dones": [bool(i % 64 == 63) for i in range(k)],
    }
    r = post_raw(live, "/update", go_body(upd))
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["status"] == "ok" and body["stored"] == k
    assert set(body) == {"status", "stored", "batch_id", "model_version"}
    assert live.service.store.count() == before + k


def test_go_style_numbers(live: Live) -> None:
    # Go writes small floats in exponent form and integral floats without a dot
    body = b'{"state":[1e-05,0,1,0.5,2.5e-01,3E-1,0.125,1,0.005,0.5]}'
    r = post_raw(live, "/predict", body)
    assert r.status_code == 200 and 0 <= r.json()["action"] < A


# ---------------------------------------------------------------------------- v1
def test_score_one_forward_pass(live: Live) -> None:
    nodes = [
        {"name": f"n{i}", "cpu_allocatable_millicores": 4000.0,
         "memory_allocatable_bytes": 16 * 2**30, "cpu_used_millicores": 1000.0 * i,
         "memory_used_bytes": 2.0**30 * i}
        for i in range(N)
    ]  # fmt: skip
    pod = {"name": "default/web", "cpu_millicores": 1500.0, "memory_bytes": 2.0**30}
    r = live.http.post("/v1/score", json={"pod": pod, "nodes": nodes})
    assert r.status_code == 200, r.text
    out = r.json()
    fits = [s["fits"] for s in out["scores"]]
    assert fits == [True, True, True, False]  # n3: 3000m used + 1500m > 4000m
    scores = np.array([s["score"] for s in out["scores"]])
    assert scores[3] == 0.0 and math.isclose(scores.sum(), 1.0, rel_tol=1e-9)
    # the same numbers from the bundle: softmax of the bind logits over fitting nodes
    state = plugin_state(
        np.array([[0.25 * i, i / 16] for i in range(N)]), pod["cpu_millicores"], pod["memory_bytes"]
    )
    z = live.service.active.bundle.logits(np.array(state))[:3].astype(np.float64)
    p = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
    np.testing.assert_allclose(scores[:3], p, rtol=1e-5)
    assert out["chosen_index"] == int(np.argmax(p)) and out["chosen_node"] == f"n{np.argmax(p)}"


def test_score_more_nodes_than_the_model(live: Live) -> None:
    nodes = [
        {"name": f"n{i}", "cpu_allocatable_millicores": 8000.0, "memory_allocatable_bytes": 2.0**34}
        for i in range(2 * N + 1)
    ]
    r = live.http.post(
        "/v1/score", json={"pod": {"cpu_millicores": 10.0, "memory_bytes": 1.0}, "nodes": nodes}
    )
    assert r.status_code == 200
    s = [x["score"] for x in r.json()["scores"]]
    assert len(s) == 2 * N + 1 and all(v > 0 for v in s) and math.isclose(sum(s), 1.0)


def test_score_fits_nowhere(live: Live) -> None:
    nodes = [{"name": "tiny", "cpu_allocatable_millicores": 100.0, "memory_allocatable_bytes": 1.0}]
    r = live.http.post(
        "/v1/score", json={"pod": {"cpu_millicores": 500.0, "memory_bytes": 1.0}, "nodes": nodes}
    )
    assert r.status_code == 200
    assert r.json()["chosen_index"] == -1 and r.json()["chosen_node"] is None


def test_predict_batch_matches_predict(live: Live) -> None:
    rng = np.random.default_rng(1)
    states = rng.uniform(0, 1, size=(33, S)).tolist()
    r = live.http.post("/v1/predict_batch", json={"states": states})
    assert r.status_code == 200
    assert r.json()["actions"] == [live.service.predict(s) for s in states]


def test_models_activate_rollback(live: Live) -> None:
    r = live.http.get("/v1/models")
    assert r.status_code == 200
    assert [v["version"] for v in r.json()["versions"]] == [1, 2]
    start = live.service.model_version
    other = 2 if start == 1 else 1
    r = live.http.post(f"/v1/models/{other}/activate", headers=JH)
    assert r.status_code == 200 and r.json() == {"status": "ok", "model_version": other}
    assert live.http.get("/health").json()["model_version"] == other
    assert live.service.registry.current_version() == other
    st = np.linspace(0, 1, S).tolist()
    want = int(live.service.registry.load(other).act(np.array(st)))
    assert live.http.post("/predict", json={"state": st}).json()["action"] == want
    r = live.http.post("/v1/models/rollback", headers=JH)
    assert r.status_code == 200 and r.json()["model_version"] == start
    r = live.http.post("/v1/models/99/activate", headers=JH)
    assert r.status_code == 404 and "99" in r.json()["error"]
    assert live.service.model_version == start


# ---------------------------------------------------------------------------- bad input
GOOD = ",".join(["0.5"] * S)
GOOD_UPD = {
    "states": [[0.5] * S] * 2,
    "actions": [0, 1],
    "rewards": [1.0, 0.0],
    "dones": [False, True],
}
BAD = [
    ("/predict", b'{"state":[0.5,0.5]}', 400),
    ("/predict", ('{"state":[' + GOOD + ",0.5]}").encode(), 400),
    ("/predict", ('{"state":[NaN,' + GOOD[4:] + "]}").encode(), 400),
    ("/predict", ('{"state":[Infinity,' + GOOD[4:] + "]}").encode(), 400),
    ("/predict", ('{"state":[-Infinity,' + GOOD[4:] + "]}").encode(), 400),
    ("/predict", ('{"state":["0.5",' + GOOD[4:] + "]}").encode(), 400),
    ("/predict", ('{"state":[true,' + GOOD[4:] + "]}").encode(), 400),
    ("/predict", ('{"state":[null,' + GOOD[4:] + "]}").encode(), 400),
    ("/predict", ('{"state":[[0.5],' + GOOD[4:] + "]}").encode(), 400),
    ("/predict", b'{"state":"0.5"}', 400),
    ("/predict", b'{"stat":[]}', 400),
    ("/predict", b"{}", 400),
    ("/predict", b"[]", 400),
    ("/predict", b"", 400),
    ("/predict", b'{"state":[0.5,', 400),
    ("/predict", b"\xff\xfe", 400),
    ("/predict", ('{"state":[1e999,' + GOOD[4:] + "]}").encode(), 400),
    ("/update", b'{"states":[],"actions":[],"rewards":[],"dones":[]}', 400),
    ("/update", go_body({**GOOD_UPD, "actions": [0]}), 400),
    ("/update", go_body({**GOOD_UPD, "rewards": [1.0]}), 400),
    ("/update", go_body({**GOOD_UPD, "dones": [True]}), 400),
    ("/update", go_body({**GOOD_UPD, "dones": ["yes", "no"]}), 400),
    ("/update", go_body({**GOOD_UPD, "actions": [0, A]}), 400),
    ("/update", go_body({**GOOD_UPD, "actions": [0, -1]}), 400),
    ("/update", go_body({**GOOD_UPD, "actions": [0, 1.5]}), 400),
    ("/update", go_body({**GOOD_UPD, "dones": [False, True], "rewards": [1.0, "x"]}), 400),
    ("/update", go_body({"states": [[0.5] * S], "actions": [0], "rewards": [1.0]}), 400),
    ("/update", b'{"states":[[NaN' + b",0.5" * (S - 1) + b']],"actions":[0],"rewards":[0],'
     b'"dones":[true]}', 400),
    ("/update", b'{"states":[[0.5' + b",0.5" * (S - 1) + b']],"actions":[0],"rewards":[NaN],'
     b'"dones":[true]}', 400),
    ("/update", b'{"states":[[0.5' + b",0.5" * (S - 1) + b']],"actions":[0],"rewards":[1e20],'
     b'"dones":[true]}', 400),
    ("/v1/predict_batch", b'{"states":[[0.5]]}', 400),
    ("/v1/score", b'{"pod":{"cpu_millicores":-1,"memory_bytes":1},"nodes":[]}', 400),
    ("/v1/score", b'{"pod":{"cpu_millicores":1,"memory_bytes":1},"nodes":[{"name":"a"}]}', 400),
]  # fmt: skip


@pytest.mark.parametrize(("path", "body", "status"), BAD)
def test_bad_input_is_4xx_with_error(live: Live, path: str, body: bytes, status: int) -> None:
    before = live.service.store.count()
    r = post_raw(live, path, body)
    assert r.status_code == status, r.text
    err = r.json()
    assert set(err) == {"error"} and isinstance(err["error"], str) and err["error"]
    assert live.service.store.count() == before


def test_error_messages_say_what_is_wrong(live: Live) -> None:
    r = post_raw(live, "/predict", b'{"state":[0.5,0.5]}')
    assert "state" in r.json()["error"] and str(S) in r.json()["error"]
    r = post_raw(live, "/predict", ('{"state":[NaN,' + GOOD[4:] + "]}").encode())
    assert "finite" in r.json()["error"]
    r = post_raw(live, "/update", go_body({**GOOD_UPD, "actions": [0]}))
    assert "lengths differ" in r.json()["error"]


def test_too_many_experiences_413(live: Live) -> None:
    n = MAX_EXPERIENCES + 1
    before = live.service.store.count()
    body = {
        "states": [[0.5] * S] * n,
        "actions": [0] * n,
        "rewards": [0.0] * n,
        "dones": [False] * n,
    }
    r = live.http.post("/update", json=body)
    assert r.status_code == 413 and "limit" in r.json()["error"]
    assert live.service.store.count() == before


def test_oversized_body_413(live: Live) -> None:
    big = b'{"state":[' + b"0.5," * (MAX_BODY_BYTES // 4 + 10) + b"0.5]}"
    r = post_raw(live, "/predict", big)
    assert r.status_code == 413 and "error" in r.json()

    def chunks():  # no Content-Length: the limit still holds
        yield b'{"states":[['
        for _ in range(MAX_BODY_BYTES // (1 << 16) + 2):
            yield b"0.5," * (1 << 14)
        yield b"0.5]]}"

    r = live.http.post("/update", content=chunks(), headers={"Content-Type": "application/json"})
    assert r.status_code == 413
    assert live.http.get("/health").status_code == 200


def test_unknown_route_and_method(live: Live) -> None:
    r = live.http.get("/nope")
    assert r.status_code == 404 and "error" in r.json()
    r = live.http.get("/predict")
    assert r.status_code == 405 and "error" in r.json()


def test_still_healthy_after_bad_input(live: Live) -> None:
    for path, body, _ in BAD[:8]:
        post_raw(live, path, body)
    assert live.http.get("/health").json()["status"] == "healthy"


# ---------------------------------------------------------------------------- token
def test_token_guards_writes(live_token: Live) -> None:
    lv = live_token
    upd = {"states": [[0.5] * S] * 3, "actions": [0, 1, 2], "rewards": [1.0, 0.5, 0.0],
           "dones": [False, False, True]}  # fmt: skip
    before = lv.service.store.count()
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN},
                    {"Authorization": f"Basic {TOKEN}"}):  # fmt: skip
        r = lv.http.post("/update", json=upd, headers=headers)
        assert r.status_code == 401 and "error" in r.json(), headers
        r = lv.http.post("/v1/models/2/activate", headers={**headers, **JH})
        assert r.status_code == 401
        r = lv.http.post("/v1/models/rollback", headers={**headers, **JH})
        assert r.status_code == 401
    assert lv.service.store.count() == before  # nothing changed
    assert lv.service.model_version == 1 and lv.service.registry.current_version() == 1
    # reads stay open (the plugin sends no token)
    assert lv.http.post("/predict", json={"state": [0.5] * S}).status_code == 200
    assert lv.http.get("/health").status_code == 200
    auth = {"Authorization": f"Bearer {TOKEN}", **JH}
    r = lv.http.post("/update", json=upd, headers=auth)
    assert r.status_code == 200 and r.json()["stored"] == 3
    assert lv.service.store.count() == before + 3
    assert lv.http.post("/v1/models/2/activate", headers=auth).json()["model_version"] == 2
    assert lv.http.post("/v1/models/rollback", headers=auth).json()["model_version"] == 1


# ---------------------------------------------------------------------------- metrics
def test_metrics(live: Live) -> None:
    live.http.post("/predict", json={"state": [0.5] * S})
    post_raw(live, "/predict", b"{}")
    r = live.http.get("/metrics")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    t = r.text
    assert 'rlsched_requests_total{code="200",endpoint="/predict",transport="http"}' in t
    assert 'rlsched_request_errors_total{code="400",endpoint="/predict",transport="http"}' in t
    assert 'rlsched_request_duration_seconds_bucket{endpoint="/predict"' in t
    assert f"rlsched_model_version {float(live.service.model_version)}" in t
    assert "rlsched_experiences_in_store" in t and "rlsched_experiences_stored_total" in t


def test_openapi_declares_400_not_422(live: Live) -> None:
    schema = live.http.get("/openapi.json").json()
    pred = schema["paths"]["/predict"]["post"]
    assert "422" not in pred["responses"] and "400" in pred["responses"]
    body = pred["requestBody"]["content"]["application/json"]["schema"]
    if "$ref" in body:
        body = schema["components"]["schemas"][body["$ref"].rsplit("/", 1)[1]]
    st = body["properties"]["state"]
    assert st["minItems"] == S and st["maxItems"] == S


def _has_ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


@pytest.mark.skipif(not _has_ipv6_loopback(), reason="no IPv6 loopback")
def test_ipv6_loopback(tmp_path) -> None:
    lv = start_live(tmp_path, host="::1")
    try:
        assert lv.http.get("/health").status_code == 200
        from rlsched.serve.proto import scheduler_pb2 as pb
        from rlsched.serve.proto import scheduler_pb2_grpc as pb_grpc

        stub = pb_grpc.SchedulerStub(lv.channel)
        assert 0 <= stub.Predict(pb.StateRequest(state=[0.5] * S), timeout=5).action < A
    finally:
        lv.stop()


# ---------------------------------------------------------------------------- CSRF / rebinding
def test_writes_need_json_and_an_allowed_host(live: Live) -> None:
    """Issue #14 item 5: without a token, a browser's cross-site text/plain or form POST and
    a DNS-rebound page (foreign Host) cannot write."""
    svc = live.service
    before, version = svc.store.count(), svc.model_version
    other = 2 if version == 1 else 1
    body = json.dumps(GOOD_UPD).encode()
    r = live.http.post("/update", content=body, headers={"Content-Type": "text/plain"})
    assert r.status_code == 415 and "application/json" in r.json()["error"]
    r = live.http.post(
        f"/v1/models/{other}/activate",
        content=b"x=1",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert r.status_code == 415
    r = post_raw(live, "/update", body, Host="attacker.example:5000")
    assert r.status_code == 403 and "--allowed-host attacker.example" in r.json()["error"]
    r = post_raw(live, "/v1/models/rollback", b"", Origin="http://attacker.example")
    assert r.status_code == 403 and "Origin" in r.json()["error"]
    assert svc.store.count() == before and svc.model_version == version
    # the plugin's reads are not affected, and a same-host JSON write works
    assert post_raw(live, "/predict", b'{"state":[' + GOOD.encode() + b"]}").status_code == 200
    r = post_raw(live, "/update", body, Origin=live.url)
    assert r.status_code == 200 and svc.store.count() > before


# ---------------------------------------------------------------------------- store failures
def test_store_failure_is_503_with_retry_after_and_serving_goes_on(tmp_path, caplog) -> None:
    """Issue #14 item 7: a store deleted while running answers 503 + Retry-After (not an
    acknowledged-then-lost 200), the log names the path, the answer does not; predictions
    go on; nothing is counted as stored."""
    lv = start_live(tmp_path)
    try:
        assert post_raw(lv, "/update", json.dumps(GOOD_UPD).encode()).status_code == 200
        stored = lv.service.experiences_stored
        for f in tmp_path.glob("experiences.sqlite*"):
            f.unlink()
        with caplog.at_level("ERROR", logger="rlsched.serve"):
            r = post_raw(lv, "/update", json.dumps(GOOD_UPD).encode())
        assert r.status_code == 503 and r.headers["retry-after"] == "5"
        assert "unavailable" in r.json()["error"] and str(tmp_path) not in r.text
        assert any(str(tmp_path / "experiences.sqlite") in m for m in caplog.messages)
        assert lv.service.experiences_stored == stored
        assert post_raw(lv, "/predict", b'{"state":[' + GOOD.encode() + b"]}").status_code == 200
        assert lv.http.get("/metrics").status_code == 200
    finally:
        lv.stop()


# ---------------------------------------------------------------------------- idempotency
def test_retried_update_is_stored_once(live: Live) -> None:
    """Issue #14 item 15: a client retrying an /update whose answer it never got."""
    body = json.dumps(GOOD_UPD).encode()
    key = {"Idempotency-Key": "plugin-7f3a-0001"}
    before = live.service.store.count()
    first = post_raw(live, "/update", body, **key)
    again = post_raw(live, "/update", body, **key)
    assert first.status_code == again.status_code == 200
    assert again.json() == first.json()
    n = len(GOOD_UPD["actions"])
    assert live.service.store.count() == before + n
    other = {**GOOD_UPD, "rewards": [r + 1 for r in GOOD_UPD["rewards"]]}
    r = post_raw(
        live, "/update", json.dumps(other).encode(), **{"Idempotency-Key": "plugin-7f3a-0001"}
    )
    assert r.status_code == 409 and "Idempotency-Key" in r.json()["error"]
    r = post_raw(live, "/update", body, **{"Idempotency-Key": "has space"})
    assert r.status_code == 400
    assert post_raw(live, "/update", body).status_code == 200  # no key: stored again
    assert live.service.store.count() == before + 2 * n


# ---------------------------------------------------------------------------- strict parsing
@pytest.mark.parametrize("v", ["01", "+1", "1.0", "1_0", "-1", "0", " 1", "1e0", "9" * 300,
                               "9" * 4300])  # fmt: skip
def test_versions_are_plain_decimal_integers(live: Live, v: str) -> None:
    """Issue #14 items 10 and 14: no 500 for a 300-digit version, no 1_0 read as 10."""
    before = live.service.model_version
    r = live.http.post(f"/v1/models/{v}/activate", headers=JH)
    assert r.status_code in (400, 404) and r.status_code != 500, r.text
    assert "error" in r.json() and live.service.model_version == before


def test_unknown_version_is_404_without_paths(live: Live) -> None:
    r = live.http.post("/v1/models/123456789/activate", headers=JH)
    assert r.status_code == 404 and "123456789" in r.json()["error"]
    assert "/" not in r.json()["error"]


@pytest.mark.parametrize("path", ["/predict", "/update", "/v1/predict_batch", "/v1/score",
                                  "/extender/filter", "/extender/prioritize"])  # fmt: skip
def test_one_strict_json_parser_everywhere(live: Live, path: str) -> None:
    """BOM and UTF-16 are refused by every route alike, and a truncated body says why."""
    for body in (b"\xef\xbb\xbf{}", "{}".encode("utf-16"), b"{"):
        r = post_raw(live, path, body)
        assert r.status_code == 400, (path, body, r.text)
        err = r.json()["error"]
        assert err.startswith("body is not valid JSON (UTF-8): "), err
        assert "position )" not in err
    r = post_raw(live, path, b"{")
    assert "EOF while parsing" in r.json()["error"]


# ---------------------------------------------------------------------------- no paths
def test_unauthenticated_reads_show_no_paths(tmp_path) -> None:
    from rlsched.serve.bundle import PolicyBundle

    lv = start_live(tmp_path)
    try:
        src = tmp_path / "models" / "kube-run"
        lv.service.registry.publish(
            PolicyBundle.fresh(S, A, seed=5), note=f"source {src} sha256 abc123"
        )
        r = lv.http.get("/v1/models")
        assert r.status_code == 200 and str(tmp_path) not in r.text
        notes = [v["note"] for v in r.json()["versions"]]
        assert "source kube-run sha256 abc123" in notes
        for path in ("/health", "/readyz", "/livez", "/metrics", "/openapi.json"):
            assert str(tmp_path) not in lv.http.get(path).text, path
        r = post_raw(lv, "/v1/models/rollback", b"")
        r = post_raw(lv, "/v1/models/rollback", b"")  # nothing left to roll back to
        assert r.status_code == 409 and str(tmp_path) not in r.text
    finally:
        lv.stop()


# ---------------------------------------------------------------------------- disconnects
HALF_BODY = (
    b"POST /update HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    b'Content-Length: 1000\r\n\r\n{"states":'
)


def test_client_disconnect_mid_body_is_not_a_server_error(tmp_path, caplog) -> None:
    """Issue #14 item 11: 30 clients that send half a body and hang up: no 500, no
    traceback in the log, counted as 499 and not as errors; the server goes on."""
    lv = start_live(tmp_path)
    host, port = lv.url.rsplit("/", 1)[-1].rsplit(":", 1)
    try:
        with caplog.at_level("WARNING"):
            for _ in range(30):
                with socket.create_connection((host, int(port)), timeout=5) as s:
                    s.sendall(HALF_BODY)
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline:
                t = lv.http.get("/metrics").text
                if 'code="499",endpoint="unmatched",transport="http"} 30.0' in t:
                    break
                time.sleep(0.05)
        assert 'rlsched_requests_total{code="499",endpoint="unmatched",transport="http"} 30.0' in t
        assert 'code="499"' not in "".join(x for x in t.splitlines() if "errors_total" in x)
        assert 'code="500"' not in t
        assert not [r for r in caplog.records if r.levelname in ("ERROR", "CRITICAL")]
        assert lv.http.get("/readyz").status_code == 200
    finally:
        lv.stop()
