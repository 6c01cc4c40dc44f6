"""ModelRegistry: versions, activation history, atomic pointer, concurrent publishers."""

from __future__ import annotations

import json
import multiprocessing as mp
import threading

import numpy as np
import pytest

from rlsched.serve.bundle import PolicyBundle
from rlsched.serve.registry import ModelRegistry


def _bundle(seed: int = 0) -> PolicyBundle:
    return PolicyBundle.fresh(6, 4, hidden=(8,), seed=seed)


def test_publish_activate_rollback_list(tmp_path):
    reg = ModelRegistry(tmp_path / "reg")
    assert (tmp_path / "reg" / "versions").is_dir()
    assert reg.current_version() is None and reg.list() == []
    with pytest.raises(KeyError, match="no active"):
        reg.load()
    v1 = reg.publish(_bundle(1), metrics={"score": 1.0}, note="first")
    assert v1 == 1 and reg.current_version() is None
    v2 = reg.publish(_bundle(2), activate=True)
    assert v2 == 2 and reg.current_version() == 2
    v3 = reg.publish(_bundle(3), note="third")
    rows = reg.list()
    assert [r["version"] for r in rows] == [1, 2, 3]
    assert [r["active"] for r in rows] == [False, True, False]
    assert rows[0]["metrics"] == {"score": 1.0} and rows[0]["note"] == "first"
    assert rows[0]["parent"] is None and rows[2]["parent"] == 2
    assert set(rows[0]) == {"version", "created", "metrics", "note", "parent", "active"}
    info = reg.info(1)
    assert "numpy" in info["versions"] and "git_commit" in info
    # loaded bundles are the published ones
    x = np.ones((2, 6), np.float32)
    assert np.array_equal(reg.load(1).logits(x), _bundle(1).logits(x))
    assert np.array_equal(reg.load().logits(x), _bundle(2).logits(x))
    assert reg.load().meta["registry_version"] == 2
    reg.activate(v3)
    reg.activate(v1)
    assert reg.current_version() == 1 and reg.history() == [2, 3, 1]
    assert reg.rollback() == 3 and reg.current_version() == 3
    assert reg.rollback() == 2
    with pytest.raises(ValueError, match="nothing to roll back"):
        reg.rollback()
    assert reg.current_version() == 2
    with pytest.raises(KeyError, match="version 9 is not in the registry"):
        reg.activate(9)
    with pytest.raises(KeyError):
        reg.load(9)
    # a second registry object over the same root sees the same state
    again = ModelRegistry(tmp_path / "reg")
    assert again.current_version() == 2 and len(again.list()) == 3
    assert json.loads((tmp_path / "reg" / "current").read_text())["version"] == 2
    assert not list((tmp_path / "reg").glob(".publish-*"))


def test_pointer_is_atomic_for_readers(tmp_path):
    reg = ModelRegistry(tmp_path)
    versions = [reg.publish(_bundle(i), activate=(i == 0)) for i in range(4)]
    expected = {v: reg.load(v).logits(np.ones(6, np.float32)).tolist() for v in versions}
    stop = threading.Event()
    errors: list[str] = []
    seen: set[int] = set()

    def reader() -> None:
        r = ModelRegistry(tmp_path)
        while not stop.is_set():
            try:
                raw = (tmp_path / "current").read_text()
                v = json.loads(raw)["version"]
                seen.add(v)
                b = r.load()
                if (
                    b.logits(np.ones(6, np.float32)).tolist()
                    != expected[b.meta["registry_version"]]
                ):
                    errors.append("wrong weights")
            except Exception as e:  # any broken state is a failure
                errors.append(repr(e))

    threads = [threading.Thread(target=reader) for _ in range(2)]
    for t in threads:
        t.start()
    for i in range(300):
        reg.activate(versions[i % 4])
    stop.set()
    for t in threads:
        t.join()
    assert errors == []
    assert seen <= set(versions) and len(seen) >= 2


def _publish_many(root: str, n: int, q) -> None:
    reg = ModelRegistry(root)
    q.put([reg.publish(_bundle(k)) for k in range(n)])


def test_concurrent_publishers_get_distinct_versions(tmp_path):
    reg = ModelRegistry(tmp_path)
    out: list[int] = []
    lock = threading.Lock()

    def pub(k: int) -> None:
        v = reg.publish(_bundle(k), activate=True)
        with lock:
            out.append(v)

    threads = [threading.Thread(target=pub, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    procs = [ctx.Process(target=_publish_many, args=(str(tmp_path), 3, q)) for _ in range(2)]
    for p in procs:
        p.start()
    for _ in procs:
        out.extend(q.get(timeout=60))
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    assert sorted(out) == list(range(1, 15))
    assert [r["version"] for r in reg.list()] == list(range(1, 15))
    assert len(reg.history()) == 8
    for v in range(1, 15):
        reg.load(v)  # every version folder is complete


def test_compare_and_set_publish(tmp_path):
    from rlsched.serve.registry import StaleVersion

    reg = ModelRegistry(tmp_path)
    reg.publish(_bundle(0), activate=True)
    reg.publish(_bundle(1))
    reg.activate(2)
    with pytest.raises(StaleVersion) as e:
        reg.publish(_bundle(2), activate=True, parent=1, expect_current=1)
    assert e.value.current == 2 and reg.versions() == [1, 2] and reg.current_version() == 2
    v = reg.publish(_bundle(2), activate=True, parent=2, expect_current=2)
    assert reg.info(v)["parent"] == 2 and reg.current_version() == v


def test_prune_keeps_last_k_pinned_current_and_rollback_target(tmp_path):
    reg = ModelRegistry(tmp_path)
    reg.publish(_bundle(0), activate=True, pin=True)  # v1: an operator's
    for s in range(1, 8):  # v2..v8: a learner's (activated, not pinned)
        reg.publish(_bundle(s), activate=True)
    reg.activate(3)  # an operator activates v3: pinned, current; rollback target v8
    assert reg.prune(keep=2) == [2, 4, 5, 6]
    assert reg.versions() == [1, 3, 7, 8]
    assert reg.rollback() == 8  # pinned now; its rollback target is v7
    assert reg.prune(keep=1) == [] and reg.versions() == [1, 3, 7, 8]
    with pytest.raises(ValueError):
        reg.prune(keep=0)
