"""gRPC against a real grpc.server on loopback, with stubs generated from scheduler.proto."""

from __future__ import annotations

import math
import struct

import grpc
import numpy as np
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from rlsched.serve.proto import scheduler_pb2 as pb
from rlsched.serve.proto import scheduler_pb2_grpc as pb_grpc

from .conftest import TOKEN, A, Live, N, S

T = 5.0  # per-call timeout


def test_predict(live: Live) -> None:
    stub = pb_grpc.SchedulerStub(live.channel)
    rng = np.random.default_rng(0)
    for _ in range(8):
        st = rng.uniform(0, 1, S).tolist()
        r = stub.Predict(pb.StateRequest(state=st), timeout=T)
        assert 0 <= r.action < A and r.action == live.service.predict(st)


def test_plugin_wire_bytes(live: Live) -> None:
    """The plugin's proto, byte for byte: StateRequest = field 1 packed doubles,
    ActionResponse = field 1 varint, method /scheduler.Scheduler/Predict."""
    st = [0.25] * S
    raw = b"\x0a" + bytes([8 * S]) + struct.pack(f"<{S}d", *st)
    assert pb.StateRequest(state=st).SerializeToString() == raw
    call = live.channel.unary_unary("/scheduler.Scheduler/Predict")
    out = call(raw, timeout=T)  # no (de)serialisers: raw bytes on the wire
    want = live.service.predict(st)
    assert out == (b"" if want == 0 else b"\x08" + bytes([want]))
    assert pb.ActionResponse.FromString(out).action == want


@pytest.mark.parametrize(
    "state",
    [[0.5] * (S - 1), [0.5] * (S + 1), [], [math.nan] + [0.5] * (S - 1),
     [math.inf] + [0.5] * (S - 1), [-math.inf] + [0.5] * (S - 1)],
)  # fmt: skip
def test_predict_invalid_argument(live: Live, state: list[float]) -> None:
    stub = pb_grpc.SchedulerStub(live.channel)
    with pytest.raises(grpc.RpcError) as ei:
        stub.Predict(pb.StateRequest(state=state), timeout=T)
    assert ei.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert ei.value.details()


def test_v1_score_nodes(live: Live) -> None:
    v1 = pb_grpc.SchedulerV1Stub(live.channel)
    nodes = [
        pb.NodeResources(name=f"n{i}", cpu_allocatable_millicores=4000,
                         memory_allocatable_bytes=2**34, cpu_used_millicores=1000 * i)
        for i in range(N + 2)
    ]  # fmt: skip
    r = v1.ScoreNodes(
        pb.ScoreNodesRequest(pod=pb.PodResources(cpu_millicores=1500, memory_bytes=2**30),
                             nodes=nodes), timeout=T,
    )  # fmt: skip
    assert [s.name for s in r.scores] == [f"n{i}" for i in range(N + 2)]
    assert [s.fits for s in r.scores] == [True, True, True, False, False, False]
    assert math.isclose(sum(s.score for s in r.scores), 1.0, rel_tol=1e-9)
    assert r.scores[r.chosen_index].fits and r.chosen_node == f"n{r.chosen_index}"
    assert r.model_version == live.service.model_version
    with pytest.raises(grpc.RpcError) as ei:
        v1.ScoreNodes(pb.ScoreNodesRequest(pod=pb.PodResources(cpu_millicores=1)), timeout=T)
    assert ei.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    with pytest.raises(grpc.RpcError) as ei:
        v1.ScoreNodes(
            pb.ScoreNodesRequest(pod=pb.PodResources(cpu_millicores=math.nan), nodes=nodes[:1]),
            timeout=T,
        )
    assert ei.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_v1_predict_batch(live: Live) -> None:
    v1 = pb_grpc.SchedulerV1Stub(live.channel)
    states = np.random.default_rng(2).uniform(0, 1, (17, S)).tolist()
    r = v1.PredictBatch(
        pb.PredictBatchRequest(states=[pb.StateVector(values=s) for s in states]), timeout=T
    )
    assert list(r.actions) == [live.service.predict(s) for s in states]
    with pytest.raises(grpc.RpcError) as ei:
        v1.PredictBatch(pb.PredictBatchRequest(states=[pb.StateVector(values=[1.0])]), timeout=T)
    assert ei.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def _update_req(n: int, **over: list) -> pb.UpdateRequest:
    f = {"states": [pb.StateVector(values=[0.5] * S)] * n, "actions": [1] * n,
         "rewards": [0.5] * n, "dones": [False] * (n - 1) + [True]}  # fmt: skip
    f.update(over)
    return pb.UpdateRequest(**f)


def test_v1_update(live: Live) -> None:
    v1 = pb_grpc.SchedulerV1Stub(live.channel)
    before = live.service.store.count()
    r = v1.Update(_update_req(64), timeout=T)
    assert r.status == "ok" and r.stored == 64 and r.batch_id > 0
    assert live.service.store.count() == before + 64
    for bad in (
        _update_req(4, actions=[1, 2]),
        _update_req(4, rewards=[0.0, math.nan, 0.0, 0.0]),
        _update_req(4, actions=[0, 1, 2, A]),
        _update_req(1, states=[pb.StateVector(values=[0.5])]),
        pb.UpdateRequest(),
    ):
        with pytest.raises(grpc.RpcError) as ei:
            v1.Update(bad, timeout=T)
        assert ei.value.code() == grpc.StatusCode.INVALID_ARGUMENT, bad
    assert live.service.store.count() == before + 64


def test_v1_model_info(live: Live) -> None:
    v1 = pb_grpc.SchedulerV1Stub(live.channel)
    r = v1.ModelInfo(pb.ModelInfoRequest(), timeout=T)
    assert r.service == live.service.service_name
    assert (r.state_dim, r.action_dim, r.num_nodes) == (S, A, N)
    assert r.model_version == live.service.model_version and r.uptime_s >= 0
    assert [v.version for v in r.versions] == [1, 2]
    assert [v.active for v in r.versions] == [v.version == r.model_version for v in r.versions]


def test_health_checking(live: Live) -> None:
    stub = health_pb2_grpc.HealthStub(live.channel)
    for name in ("", "scheduler.Scheduler", "scheduler.SchedulerV1"):
        r = stub.Check(health_pb2.HealthCheckRequest(service=name), timeout=T)
        assert r.status == health_pb2.HealthCheckResponse.SERVING
    with pytest.raises(grpc.RpcError) as ei:
        stub.Check(health_pb2.HealthCheckRequest(service="nope"), timeout=T)
    assert ei.value.code() == grpc.StatusCode.NOT_FOUND


def test_update_token(live_token: Live) -> None:
    v1 = pb_grpc.SchedulerV1Stub(live_token.channel)
    before = live_token.service.store.count()
    for md in ((), (("authorization", "Bearer nope"),), (("authorization", TOKEN),)):
        with pytest.raises(grpc.RpcError) as ei:
            v1.Update(_update_req(3), metadata=md, timeout=T)
        assert ei.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert live_token.service.store.count() == before
    # Predict stays open
    assert pb_grpc.SchedulerStub(live_token.channel).Predict(
        pb.StateRequest(state=[0.5] * S), timeout=T
    ).action in range(A)
    r = v1.Update(_update_req(3), metadata=(("authorization", f"Bearer {TOKEN}"),), timeout=T)
    assert r.stored == 3 and live_token.service.store.count() == before + 3


def test_grpc_metrics(live: Live) -> None:
    pb_grpc.SchedulerStub(live.channel).Predict(pb.StateRequest(state=[0.5] * S), timeout=T)
    t = live.http.get("/metrics").text
    assert (
        'rlsched_requests_total{code="OK",endpoint="/scheduler.Scheduler/Predict",'
        'transport="grpc"}' in t
    )


def test_update_idempotency_key(live: Live) -> None:
    stub = pb_grpc.SchedulerV1Stub(live.channel)
    req = pb.UpdateRequest(
        states=[pb.StateVector(values=[0.5] * S)] * 2, actions=[0, 1], rewards=[1.0, 0.0],
        dones=[False, True], idempotency_key="grpc-retry-1",
    )  # fmt: skip
    before = live.service.store.count()
    a = stub.Update(req, timeout=5)
    b = stub.Update(req, timeout=5)
    assert (a.batch_id, a.stored) == (b.batch_id, b.stored) == (a.batch_id, 2)
    assert live.service.store.count() == before + 2


def test_undecodable_message_is_invalid_argument_and_counted(live: Live) -> None:
    """Issue #14 item 12: bytes that are no StateRequest answer INVALID_ARGUMENT (not
    INTERNAL) and are counted in the metrics."""
    import re

    key = 'rlsched_requests_total{code="INVALID_ARGUMENT",endpoint="/scheduler.Scheduler/Predict",'

    def counted() -> float:
        m = re.search(re.escape(key) + r'transport="grpc"\} (\S+)', live.http.get("/metrics").text)
        return float(m.group(1)) if m else 0.0

    before = counted()
    raw = live.channel.unary_unary(
        "/scheduler.Scheduler/Predict",
        request_serializer=lambda b: b,
        response_deserializer=lambda b: b,
    )
    for _ in range(3):
        with pytest.raises(grpc.RpcError) as e:
            raw(b"\x0a\xff\xff\xff\xff", timeout=5)  # field 1, length far beyond the data
        assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "not a valid scheduler.StateRequest" in e.value.details()
    assert counted() == before + 3
    ok = pb_grpc.SchedulerStub(live.channel).Predict(pb.StateRequest(state=[0.5] * S), timeout=5)
    assert 0 <= ok.action < A
