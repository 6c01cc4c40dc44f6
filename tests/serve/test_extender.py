"""kube-scheduler extender v1 JSON against the live server, and quantity parsing."""

from __future__ import annotations

import copy
import json
from typing import Any

import httpx
import pytest

from rlsched.serve.extender import (
    MAX_EXTENDER_PRIORITY,
    V1Pod,
    cpu_millicores,
    memory_bytes,
    parse_quantity,
    pod_demand,
)

from .conftest import Live

# A v1.Pod as kube-scheduler sends it (trimmed from `kubectl get pod -o json`).
POD: dict[str, Any] = {
    "kind": "Pod",
    "apiVersion": "v1",
    "metadata": {
        "name": "web-7d4b9c6f5-x2k8p",
        "namespace": "default",
        "uid": "0b6f3a57-3c1e-4a0e-9d0e-6a1f6c2f1b9e",
        "resourceVersion": "123456",
        "creationTimestamp": "2024-05-01T10:00:00Z",
        "labels": {"app": "web", "pod-template-hash": "7d4b9c6f5"},
        "ownerReferences": [
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "name": "web-7d4b9c6f5",
                "uid": "c1",
                "controller": True,
            }
        ],
    },
    "spec": {
        "containers": [
            {
                "name": "web",
                "image": "nginx:1.27",
                "ports": [{"containerPort": 80, "protocol": "TCP"}],
                "resources": {
                    "limits": {"cpu": "2", "memory": "2Gi"},
                    "requests": {"cpu": "1500m", "memory": "1Gi"},
                },
                "terminationMessagePolicy": "File",
                "imagePullPolicy": "IfNotPresent",
            },
            {
                "name": "sidecar",
                "image": "envoy:v1.30",
                "resources": {"requests": {"cpu": "250m", "memory": "256Mi"}},
            },
        ],
        "initContainers": [
            {
                "name": "migrate",
                "image": "busybox",
                "resources": {"requests": {"cpu": "1", "memory": "128Mi"}},
            },
        ],
        "restartPolicy": "Always",
        "schedulerName": "default-scheduler",
        "priority": 0,
        "tolerations": [
            {
                "key": "node.kubernetes.io/not-ready",
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": 300,
            }
        ],
    },
    "status": {"phase": "Pending", "qosClass": "Burstable"},
}
# requests: cpu 1500m + 250m = 1750m (> init 1000m); memory 1Gi + 256Mi = 1342177280


def node(name: str, cpu: str, mem: str, used: tuple[str, str] | None = None) -> dict[str, Any]:
    ann = {"node.alpha.kubernetes.io/ttl": "0"}
    if used:
        ann |= {"rlsched.io/used-cpu": used[0], "rlsched.io/used-memory": used[1]}
    return {
        "metadata": {
            "name": name,
            "uid": f"uid-{name}",
            "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux"},
            "annotations": ann,
        },
        "spec": {"podCIDR": "10.244.1.0/24"},
        "status": {
            "capacity": {"cpu": cpu, "memory": mem, "pods": "110"},
            "allocatable": {
                "cpu": cpu,
                "memory": mem,
                "pods": "110",
                "ephemeral-storage": "95551679124",
            },
            "conditions": [{"type": "Ready", "status": "True"}],
            "nodeInfo": {"kubeletVersion": "v1.30.0", "architecture": "amd64"},
        },
    }


NODES: dict[str, Any] = {
    "kind": "NodeList",
    "apiVersion": "v1",
    "metadata": {"resourceVersion": "987"},
    "items": [
        node("big-1", "8", "32Gi"),
        node("big-2", "16", "64Gi", used=("15", "10Gi")),  # only 1 cpu left: too little
        node("small-cpu", "1", "32Gi"),  # 1 cpu < 1750m
        node("small-mem", "8", "1Gi"),  # 1Gi < 1.25Gi
        node("mid", "4000m", "8G", used=("500m", "1e9")),
        node("decimal", "2.5", "17179869184"),
    ],
}


def args(**over: Any) -> dict[str, Any]:
    return {"Pod": POD, "Nodes": NODES, "NodeNames": None, **over}


# ---------------------------------------------------------------------------- quantities
@pytest.mark.parametrize(
    ("q", "value"),
    [("500m", 0.5), ("2", 2.0), ("0.5", 0.5), ("1.5", 1.5), ("100n", 1e-7), ("10u", 1e-5),
     ("1k", 1e3), ("1Ki", 1024.0), ("1M", 1e6), ("1Mi", 2.0**20), ("512Mi", 512 * 2.0**20),
     ("1G", 1e9), ("1Gi", 2.0**30), ("1.5Gi", 1.5 * 2**30), ("1T", 1e12), ("1Ti", 2.0**40),
     ("1P", 1e15), ("1Pi", 2.0**50), ("1E", 1e18), ("1Ei", 2.0**60), ("1e9", 1e9),
     ("1E3", 1e3), ("12e-3", 0.012), ("129M", 129e6), ("128974848", 128974848.0),
     ("+1", 1.0), (".5", 0.5), ("5.", 5.0), (2, 2.0), (0.25, 0.25)],
)  # fmt: skip
def test_parse_quantity(q: Any, value: float) -> None:
    assert parse_quantity(q) == pytest.approx(value, rel=1e-12)


@pytest.mark.parametrize("q", ["", "m", "1mi", "1 Gi", "1GiB", "abc", "1.2.3", "0x10", "1e",
                               "--1", None, True, [1], float("nan"), "1e999999"])  # fmt: skip
def test_parse_quantity_rejects(q: Any) -> None:
    with pytest.raises(ValueError):
        parse_quantity(q)


def test_units() -> None:
    assert cpu_millicores("250m") == 250.0 and cpu_millicores("2") == 2000.0
    assert memory_bytes("512Mi") == 536870912.0 and memory_bytes("1e9") == 1e9


def test_pod_demand() -> None:
    d = pod_demand(V1Pod.model_validate(POD))
    assert d.cpu_millicores == pytest.approx(1750.0)
    assert d.memory_bytes == 2**30 + 256 * 2**20
    assert d.name == "default/web-7d4b9c6f5-x2k8p"
    # an init container larger than the app containers dominates; overhead adds
    p = copy.deepcopy(POD)
    p["spec"]["initContainers"][0]["resources"]["requests"] = {"cpu": "3", "memory": "4Gi"}
    p["spec"]["overhead"] = {"cpu": "100m", "memory": "64Mi"}
    d = pod_demand(V1Pod.model_validate(p))
    assert d.cpu_millicores == pytest.approx(3100.0) and d.memory_bytes == 4 * 2**30 + 64 * 2**20
    # limits stand in for a missing request (the API server defaults it so)
    p = {"spec": {"containers": [{"resources": {"limits": {"cpu": "2", "memory": "1Gi"}}}]}}
    assert pod_demand(V1Pod.model_validate(p)).cpu_millicores == 2000.0


# ---------------------------------------------------------------------------- filter
def test_filter(live: Live) -> None:
    r = live.http.post("/extender/filter", json=args())
    assert r.status_code == 200, r.text
    res = r.json()
    assert set(res) == {"Nodes", "NodeNames", "FailedNodes", "FailedAndUnresolvableNodes", "Error"}
    assert res["Error"] == ""
    kept = [n["metadata"]["name"] for n in res["Nodes"]["items"]]
    assert kept == ["big-1", "mid", "decimal"]
    assert res["FailedNodes"] == {
        "big-2": "Insufficient cpu",
        "small-cpu": "Insufficient cpu",
        "small-mem": "Insufficient memory",
    }
    assert res["FailedAndUnresolvableNodes"] == {}
    # nodes come back as they were sent (nothing dropped or added)
    assert res["Nodes"]["items"][0] == NODES["items"][0]
    assert res["Nodes"]["kind"] == "NodeList"


def test_node_names_only_is_an_error(live: Live) -> None:
    """nodeCacheCapable: true sends NodeNames and no Nodes: refuse, saying how to configure."""
    for verb in ("filter", "prioritize"):
        for body in ({"Pod": POD, "NodeNames": ["a", "b"]},
                     {"Pod": POD, "Nodes": None, "NodeNames": ["a", "b"]}):  # fmt: skip
            r = live.http.post(f"/extender/{verb}", json=body)
            assert r.status_code == 400 and "nodeCacheCapable" in r.json()["error"]


def test_bad_quantities(live: Live) -> None:
    p = copy.deepcopy(POD)
    p["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "lots"
    for verb in ("filter", "prioritize"):
        r = live.http.post(f"/extender/{verb}", json=args(Pod=p))
        assert r.status_code == 400
        assert "Pod.spec.containers.0.resources.requests.cpu" in r.json()["error"]
    nl = copy.deepcopy(NODES)
    nl["items"][0]["status"]["allocatable"]["memory"] = "32 GiB"
    assert live.http.post("/extender/filter", json=args(Nodes=nl)).status_code == 400
    # a node's usage annotation is free text: a bad one makes that node unusable, not the call
    nl = copy.deepcopy(NODES)
    nl["items"][0]["metadata"]["annotations"]["rlsched.io/used-cpu"] = "most of it"
    r = live.http.post("/extender/filter", json=args(Nodes=nl))
    assert r.status_code == 200 and "unreadable" in r.json()["FailedNodes"]["big-1"]
    r = live.http.post("/extender/prioritize", json=args(Nodes=nl))
    assert {h["Host"]: h["Score"] for h in r.json()}["big-1"] == 0


# ---------------------------------------------------------------------------- prioritize
def test_prioritize(live: Live) -> None:
    r = live.http.post("/extender/prioritize", json=args())
    assert r.status_code == 200, r.text
    out = r.json()
    assert [h["Host"] for h in out] == [n["metadata"]["name"] for n in NODES["items"]]
    assert all(set(h) == {"Host", "Score"} and isinstance(h["Score"], int) for h in out)
    assert all(0 <= h["Score"] <= MAX_EXTENDER_PRIORITY for h in out)
    score = {h["Host"]: h["Score"] for h in out}
    assert score["big-2"] == score["small-cpu"] == score["small-mem"] == 0  # does not fit
    assert max(score.values()) == MAX_EXTENDER_PRIORITY


def test_prioritize_only_filtered_candidates(live: Live) -> None:
    """The scheduler sends prioritize the nodes that passed filter (here 3 < N = 4)."""
    kept = live.http.post("/extender/filter", json=args()).json()["Nodes"]
    out = live.http.post("/extender/prioritize", json=args(Nodes=kept)).json()
    assert [h["Host"] for h in out] == ["big-1", "mid", "decimal"]
    assert max(h["Score"] for h in out) == MAX_EXTENDER_PRIORITY


def test_lowercase_keys_accepted(live: Live) -> None:
    # Go's encoding/json matches keys case-insensitively; accept the lower-case spelling too
    r = live.http.post("/extender/prioritize", json={"pod": POD, "nodes": NODES})
    assert r.status_code == 200 and len(r.json()) == len(NODES["items"])


@pytest.mark.parametrize(
    "body",
    [b"", b"[]", b'{"Pod": 1}', b'{"Pod": {}, "Nodes": {"items": "x"}}',
     b'{"Pod": {"spec": {"containers": [{"resources": {"requests": {"cpu": [1]}}}]}}, '
     b'"Nodes": {"items": []}}'],
)  # fmt: skip
def test_extender_bad_json(live: Live, body: bytes) -> None:
    for verb in ("filter", "prioritize"):
        r = live.http.post(
            f"/extender/{verb}", content=body, headers={"Content-Type": "application/json"}
        )
        assert r.status_code == 400 and r.json()["error"], (verb, r.text)


def test_huge_request_is_validated_off_the_event_loop(live: Live) -> None:
    """Issue #14 item 9: a 7.5 MiB prioritize request (180k containers) used to be validated
    on the event loop for seconds, stalling every other client. Now: refused (more
    containers than the cap) and parsed in a worker thread while /livez keeps answering."""
    import threading
    import time

    big = {**POD, "spec": {**POD["spec"], "containers": [
        {"resources": {"requests": {"cpu": "1m"}}} for _ in range(180_000)
    ]}}  # fmt: skip
    body = json.dumps(args(Pod=big)).encode()
    assert 6 * 2**20 < len(body) < 8 * 2**20  # under the body limit
    out: list[Any] = []

    def send() -> None:
        with httpx.Client(base_url=live.url, timeout=60) as c:
            out.append(c.post("/extender/prioritize", content=body,
                              headers={"Content-Type": "application/json"}))  # fmt: skip

    t = threading.Thread(target=send)
    start = time.perf_counter()
    t.start()
    worst = 0.0
    with httpx.Client(base_url=live.url, timeout=10) as c:
        while t.is_alive():
            t0 = time.perf_counter()
            assert c.get("/livez").status_code == 200
            worst = max(worst, time.perf_counter() - t0)
            time.sleep(0.01)
    t.join()
    total = time.perf_counter() - start
    r = out[0]
    assert r.status_code == 400 and "256" in r.json()["error"]
    # on the event loop, /livez would wait for the whole parse (about the request's duration);
    # in a worker thread it waits only for GIL switches, well under half of it on a busy machine
    bound = max(0.75, 0.5 * total)
    assert worst < bound, f"/livez took {worst:.2f} s while the big request took {total:.2f} s"
