"""The replicated mode with real processes on loopback: a PostgreSQL server started here,
3 ``rlsched serve --store URL`` replicas, an active and a standby ``rlsched learn``, clients
sending /predict and idempotent /update round-robin. Shorter versions of the acceptance runs
(benchmarks/bench_cluster.py has the full-length ones and docs/benchmarks.md their figures)."""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Iterator

import httpx
import pytest

from rlsched.serve.bundle import PolicyBundle
from rlsched.serve.cluster import DIM, Cluster, LoadLog, check_exactly_once, run_load
from rlsched.serve.pg_local import find_bin_dir

pytestmark = [
    pytest.mark.timeout(600),
    pytest.mark.skipif(find_bin_dir() is None, reason="no PostgreSQL server binaries "
                       "(`make test` installs Debian's postgresql with apt-get)"),
]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    c = Cluster(tmp_path_factory.mktemp("cluster"), replicas=3, learners=2, fsync=False)
    try:
        c.start()
        yield c
    finally:
        c.stop()


def test_an_activation_on_one_replica_is_served_by_all_within_a_second(cluster: Cluster) -> None:
    from rlsched.serve.pg import Database
    from rlsched.serve.pg_registry import PgRegistry

    db = Database(cluster.pg.url, max_size=1)
    try:
        reg = PgRegistry(db)
        extra = [reg.publish(PolicyBundle.fresh(DIM, DIM, seed=s), note=f"op {s}")
                 for s in (11, 12)]  # fmt: skip
    finally:
        db.close()
    lags = []
    for k, v in enumerate([extra[0], extra[1], 1, extra[0], extra[1]]):
        via = cluster.replicas[k % 3]
        t0 = time.monotonic()
        r = httpx.post(f"{via.url}/v1/models/{v}/activate", json={}, timeout=10)
        assert r.status_code == 200, r.text
        while cluster.served_versions() != [v, v, v]:
            assert time.monotonic() - t0 < 5.0, f"v{v}: replicas serve {cluster.served_versions()}"
            time.sleep(0.01)
        lags.append(time.monotonic() - t0)
    assert max(lags) < 1.0, f"activation lags {lags}"


def test_sigkill_of_a_replica_under_load_loses_nothing(cluster: Cluster) -> None:
    """8 clients for 12 s; replica 1 is killed (SIGKILL) at 4 s and restarted at once."""
    log, stop = LoadLog(), threading.Event()
    urls = [r.url for r in cluster.replicas]
    t = threading.Thread(target=run_load, args=(urls, 12.0),
                         kwargs={"clients": 8, "log": log, "stop": stop})  # fmt: skip
    t.start()
    time.sleep(4.0)
    victim = cluster.replicas[1]
    killed_at = time.time()
    victim.kill(signal.SIGKILL)
    victim.start()
    victim.wait_ready()
    ready_at = time.time()
    t.join(120)
    assert not t.is_alive()
    assert log.unretried == 0  # every failed call succeeded on a retry
    assert log.predicts > 100 and log.updates > 100
    # the only failed /predict calls were on the killed replica, while it was down
    for when, idx, what in log.predict_failures:
        assert idx == 1 and killed_at - 0.5 <= when <= ready_at + 1.0, (when, idx, what)
    assert set(log.predict_status) <= {200, 0}
    # a 503 (the pool's 2 s wait on a starved machine) is allowed for /update: it is retried
    assert set(log.update_status) <= {200, 0, 503}
    check = check_exactly_once(cluster, log)
    assert check["missing"] == 0 and check["wrong_size"] == 0 and check["duplicates"] == 0, check
    assert check["keys"] == check["acked"]  # no key stored without the client's ack either


def test_kill_9_of_the_active_learner_mid_run(cluster: Cluster) -> None:
    """The standby takes over within the default bound (10 s); no experience is consumed
    twice or lost: the runs' consumed counts add up to the store's, and consumed + pending
    is everything stored."""
    log, stop = LoadLog(), threading.Event()
    urls = [r.url for r in cluster.replicas]
    t = threading.Thread(target=run_load, args=(urls, 60.0),
                         kwargs={"clients": 4, "log": log, "stop": stop})  # fmt: skip
    t.start()
    try:
        active = cluster.active_learner()
        standby = next(ln for ln in cluster.learners if ln is not active)
        deadline = time.monotonic() + 60
        while cluster.claimed_batches() == 0:  # mid-run: its claim holds batches locked
            assert time.monotonic() < deadline, "the learner never claimed experiences"
            time.sleep(0.01)
        active.kill(signal.SIGKILL)
        t0 = time.monotonic()
        while standby.metric("rlsched_learner_active") != 1.0:
            assert time.monotonic() - t0 < 10.0, "the standby did not take over in 10 s"
            time.sleep(0.05)
        takeover = time.monotonic() - t0
        time.sleep(2.0)
    finally:
        stop.set()
        t.join(120)
    active.start()  # back as the new standby (the later tests want two learners)
    active.wait_metrics()
    deadline = time.monotonic() + 60
    while True:  # the new active learner drains what is left (below min_experiences stays)
        pending = cluster.sql("SELECT SUM(pending) FROM rlsched_counters")[0][0]
        if pending < 64 and standby.metric("rlsched_learner_in_run") == 0.0:
            break
        assert time.monotonic() < deadline, f"{pending} experiences still pending"
        time.sleep(0.2)
    rows, pending = (int(x) for x in cluster.sql(
        "SELECT SUM(rows), SUM(pending) FROM rlsched_counters")[0])  # fmt: skip
    by_runs = int(cluster.sql("SELECT COALESCE(SUM(consumed), 0) FROM rlsched_learner_runs")[0][0])
    flagged = int(cluster.sql("SELECT COALESCE(SUM(n - remaining), 0) FROM rlsched_batches b "
                              "JOIN rlsched_progress p ON p.id = b.id")[0][0])  # fmt: skip
    stored = int(cluster.sql("SELECT SUM(n) FROM rlsched_batches")[0][0])
    assert by_runs == flagged == rows - pending  # nothing consumed twice
    assert stored == rows and flagged + pending == stored  # nothing lost
    assert check_exactly_once(cluster, log)["missing"] == 0
    assert takeover < 10.0
    # the new active learner's /metrics: role, lag, last run and outcome, versions published
    m = standby.metrics()
    assert m["rlsched_learner_active"] == 1.0 and m["rlsched_learner_in_run"] == 0.0
    assert m["rlsched_learner_lag_experiences"] < 64
    assert m["rlsched_learner_last_run_timestamp_seconds"] > time.time() - 60
    assert m["rlsched_learner_versions_published"] >= 1
    assert sum(v for k, v in m.items() if k.startswith("rlsched_learner_last_outcome{")) == 1.0
    assert active.metric("rlsched_learner_active") == 0.0  # restarted: now the standby


def test_postgres_restart_under_load(cluster: Cluster) -> None:
    """/update answers only 200 or 503 during the outage, /predict 200 throughout, /readyz
    stays ready, and /update succeeds again within 5 s of the database's return with
    nothing acknowledged lost."""
    log, stop = LoadLog(), threading.Event()
    urls = [r.url for r in cluster.replicas]
    t = threading.Thread(target=run_load, args=(urls, 14.0),
                         kwargs={"clients": 4, "log": log, "stop": stop})  # fmt: skip
    t.start()
    time.sleep(2.0)
    cluster.pg.stop("fast")
    down_at = time.time()
    time.sleep(3.0)
    ready = [httpx.get(r.url + "/readyz", timeout=2).status_code for r in cluster.replicas]
    one = {"states": [[0.5] * DIM], "actions": [1], "rewards": [0.0], "dones": [False]}
    refused = httpx.post(cluster.replicas[0].url + "/update", json=one, timeout=10)
    scored, prioritized = _score_and_prioritize(cluster)  # in-memory model: answered
    starting_at = time.time()  # the server may accept connections before start() returns
    cluster.pg.start()
    back_at = time.time()
    t.join(120)
    assert ready == [200, 200, 200]
    assert refused.status_code == 503 and refused.headers["Retry-After"] == "5"
    assert scored and prioritized  # gRPC ScoreNodes and the extender, with the database down
    assert "/update refused with 503" in cluster.replicas[0].log_tail(20000)
    assert set(log.predict_status) == {200}
    assert set(log.update_status) <= {200, 503} and 503 in log.update_status
    assert all(not (down_at + 2.5 < w < starting_at) for w in log.update_ok_at)  # really down
    after = [w for w in log.update_ok_at if w >= back_at]
    assert after and after[0] - back_at < 5.0, "no /update succeeded within 5 s"
    assert log.unretried == 0
    check = check_exactly_once(cluster, log)
    assert check["missing"] == 0 and check["duplicates"] == 0, check


def _score_and_prioritize(c: Cluster) -> tuple[bool, bool]:
    """gRPC ``ScoreNodes`` and ``/extender/prioritize`` on replica 1, each within 2 s."""
    import grpc

    from rlsched.serve.proto import scheduler_pb2 as pb
    from rlsched.serve.proto import scheduler_pb2_grpc as pb_grpc

    r = c.replicas[1]
    with grpc.insecure_channel(f"127.0.0.1:{r.grpc_port}") as ch:
        nodes = [pb.NodeResources(name=f"n{i}", cpu_allocatable_millicores=4000,
                                  memory_allocatable_bytes=2**34) for i in range(4)]  # fmt: skip
        res = pb_grpc.SchedulerV1Stub(ch).ScoreNodes(
            pb.ScoreNodesRequest(pod=pb.PodResources(cpu_millicores=500, memory_bytes=2**28),
                                 nodes=nodes), timeout=2.0,
        )  # fmt: skip
    node = {"metadata": {"name": "a"}, "status": {"allocatable": {"cpu": "4", "memory": "8Gi"}}}
    pod = {"metadata": {"name": "p"}, "spec": {"containers": [
        {"name": "c", "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}]}}
    ext = httpx.post(r.url + "/extender/prioritize", timeout=2.0,
                     json={"Pod": pod, "Nodes": {"items": [node]}, "NodeNames": None})
    return len(res.scores) == 4 and res.chosen_index >= 0, ext.status_code == 200
