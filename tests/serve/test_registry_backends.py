"""The registry contract once per backend (folder, PostgreSQL); on PostgreSQL also: a
replica follows activations by NOTIFY, and an operator's rollback from another process
while the learner trains is never undone."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

from rlsched.serve.bundle import PolicyBundle
from rlsched.serve.registry import ModelRegistry, StaleVersion

S = A = 10
Opener = Callable[[], Any]


def _bundle(seed: int = 0) -> PolicyBundle:
    return PolicyBundle.fresh(S, A, hidden=(8,), seed=seed)


@pytest.fixture(params=["folder", "postgresql"])
def open_registry(request: pytest.FixtureRequest, tmp_path: Any) -> Iterator[Opener]:
    dbs: list[Any] = []
    if request.param == "folder":

        def opener() -> Any:
            return ModelRegistry(tmp_path / "reg")
    else:
        url = request.getfixturevalue("pg_url")
        from rlsched.serve.pg import Database
        from rlsched.serve.pg_registry import PgRegistry

        def opener() -> Any:
            dbs.append(Database(url))
            return PgRegistry(dbs[-1])

    yield opener
    for db in dbs:
        db.close()


def test_publish_activate_rollback_list(open_registry: Opener) -> None:
    reg = open_registry()
    assert reg.current_version() is None and reg.list() == []
    with pytest.raises(KeyError, match="no active"):
        reg.load()
    assert reg.publish(_bundle(1), metrics={"score": 1.0}, note="first") == 1
    assert reg.current_version() is None
    assert reg.publish(_bundle(2), activate=True) == 2 and reg.current_version() == 2
    v3 = reg.publish(_bundle(3), note="third")
    rows = reg.list()
    assert [r["version"] for r in rows] == [1, 2, 3]
    assert [r["active"] for r in rows] == [False, True, False]
    assert rows[0]["metrics"] == {"score": 1.0} and rows[0]["note"] == "first"
    assert rows[0]["parent"] is None and rows[2]["parent"] == 2
    assert reg.info(3)["parent"] == 2 and "numpy" in reg.info(1)["versions"]
    x = np.ones((2, S), np.float32)
    assert np.array_equal(reg.load(1).logits(x), _bundle(1).logits(x))
    assert np.array_equal(reg.load().logits(x), _bundle(2).logits(x))
    assert reg.load().meta["registry_version"] == 2
    reg.activate(v3)
    reg.activate(1)
    assert reg.current_version() == 1 and reg.history() == [2, 3, 1]
    assert reg.rollback() == 3 and reg.rollback() == 2
    with pytest.raises(ValueError, match="nothing to roll back"):
        reg.rollback()
    with pytest.raises(KeyError, match="version 9 is not in the registry"):
        reg.activate(9)
    again = open_registry()  # another handle (process) sees the same state
    assert again.current_version() == 2 and len(again.list()) == 3


def test_compare_and_set_publish(open_registry: Opener) -> None:
    reg = open_registry()
    reg.publish(_bundle(1), activate=True)
    with pytest.raises(StaleVersion) as e:
        reg.publish(_bundle(2), activate=True, expect_current=7)
    assert e.value.current == 1 and reg.versions() == [1]  # nothing written
    v = reg.publish(_bundle(2), activate=True, expect_current=1, parent=1)
    assert v == 2 and reg.current_version() == 2


def test_prune_keeps_pinned_current_and_rollback_target(open_registry: Opener) -> None:
    reg = open_registry()
    reg.publish(_bundle(0), activate=True, pin=True)  # an operator's version
    for s in range(1, 7):
        reg.publish(_bundle(s), activate=True)  # learner-like publishes
    removed = reg.prune(2)
    assert removed == [2, 3, 4, 5]
    assert reg.versions() == [1, 6, 7] and reg.current_version() == 7
    assert reg.rollback() == 6


def test_concurrent_publishers_get_distinct_versions(open_registry: Opener) -> None:
    regs = [open_registry() for _ in range(3)]
    got: list[int] = []
    lock = threading.Lock()

    def work(r: Any, k: int) -> None:
        for j in range(4):
            v = r.publish(_bundle(10 * k + j))
            with lock:
                got.append(v)

    ts = [threading.Thread(target=work, args=(r, k)) for k, r in enumerate(regs)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert sorted(got) == list(range(1, 13)) == regs[0].versions()


# ---------------------------------------------------------------------------- PostgreSQL only
def test_a_replica_follows_activations_by_notify_within_a_second(pg_url: str) -> None:
    from rlsched.serve.pg import Database
    from rlsched.serve.pg_registry import PgRegistry
    from rlsched.serve.pg_watch import RegistryWatcher
    from rlsched.serve.service import SchedulerService

    db = Database(pg_url)
    reg = PgRegistry(db)
    for s in range(3):
        reg.publish(_bundle(s), activate=s == 0)
    svc = SchedulerService(registry=reg)
    # a long poll: the swaps below can only come from the notifications
    watcher = RegistryWatcher(svc, db.conninfo, poll=30.0).start()
    other = PgRegistry(Database(pg_url))  # an operator elsewhere
    try:
        deadline = time.monotonic() + 10
        while not watcher.connected:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        for v in (2, 3, 1, 3):
            t0 = time.monotonic()
            other.activate(v)
            while svc.model_version != v:
                assert time.monotonic() - t0 < 1.0, f"v{v} not served within 1 s"
                time.sleep(0.005)
        assert watcher.notifications >= 4
    finally:
        watcher.stop()
        other.db.close()
        db.close()


def test_operator_rollback_while_the_learner_trains_is_never_undone(pg_url: str) -> None:
    """The hardening issue's race across processes: the learner trains from v2 with its
    claim open; an operator runs `rlsched registry rollback --store URL` (another process);
    the learner's compare-and-set publish then fails: its update is discarded, v1 stays
    current, the experiences stay unconsumed and the outcome is recorded."""
    from rlsched.serve.learner import GateResult, OnlineLearner
    from rlsched.serve.pg import Database
    from rlsched.serve.pg_registry import PgRegistry
    from rlsched.serve.pg_store import PgExperienceStore

    db = Database(pg_url)
    reg, st = PgRegistry(db), PgExperienceStore(db)
    reg.publish(_bundle(1), activate=True)
    reg.publish(_bundle(2), activate=True)
    rng = np.random.default_rng(0)
    st.append(
        rng.random((64, S)), rng.integers(0, A, 64), rng.normal(size=64), rng.random(64) < 0.1
    )
    in_gate, release = threading.Event(), threading.Event()

    def gate(candidate: PolicyBundle, current: PolicyBundle) -> GateResult:
        in_gate.set()
        assert release.wait(60)
        return GateResult(True, "test gate")

    learner = OnlineLearner(reg, st, gate, min_experiences=32, epochs=1, name="L")
    out: list[Any] = []
    t = threading.Thread(target=lambda: out.append(learner.run_once()))
    t.start()
    try:
        assert in_gate.wait(60)
        r = subprocess.run(
            [sys.executable, "-c", "from rlsched.cli import main; main()", "registry",
             "rollback", "--store", pg_url], capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert r.returncode == 0, r.stderr
        assert "current version: 1" in r.stdout
    finally:
        release.set()
        t.join(60)
    report = out[0]
    assert report.status == "discarded" and report.from_version == 2
    assert reg.current_version() == 1 and reg.versions() == [1, 2]
    assert st.count(consumed=False) == 64
    runs = st.learner_runs()
    assert [(x["status"], x["claimed"], x["consumed"]) for x in runs] == [("discarded", 64, 0)]
    # the next run learns from the rolled-back version and publishes over it
    rep = OnlineLearner(reg, st, None, min_experiences=32, epochs=1).run_once()
    assert rep.status == "published" and rep.from_version == 1 and reg.current_version() == 3
    assert st.count(consumed=False) == 0
    db.close()


def test_pg_registry_implements_the_interface(pg_url: str) -> None:
    from rlsched.serve.pg import Database
    from rlsched.serve.pg_registry import PgRegistry
    from rlsched.serve.store_api import RegistryAPI, open_backend

    db = Database(pg_url)
    assert isinstance(PgRegistry(db), RegistryAPI)
    db.close()
    store, reg = open_backend(pg_url)
    assert isinstance(reg, RegistryAPI) and store.count() == 0
    store.close()
