"""ExperienceStore: round trip, consumption, refusals, acknowledged batches surviving kill -9."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

from rlsched.serve.store import ExperienceStore, StoreUnavailable


def _batch(n: int, dim: int = 6, seed: int = 0):
    rng = np.random.default_rng(seed)
    return (
        rng.random((n, dim), dtype=np.float32),
        rng.integers(0, dim, n),
        rng.normal(size=n),
        rng.random(n) < 0.2,
    )


def test_append_unconsumed_mark_consumed(tmp_path):
    st = ExperienceStore(tmp_path / "x.sqlite")
    assert st.count() == 0 and st.state_dim is None
    ids, s, *_ = st.unconsumed()
    assert len(ids) == 0 and s.shape[0] == 0
    b1 = _batch(5, seed=1)
    b2 = _batch(3, seed=2)
    id1 = st.append(*b1, model_version=1)
    id2 = st.append(*b2)
    assert id2 > id1 and st.state_dim == 6
    assert st.count() == 8 and st.count(consumed=False) == 8 and st.count(consumed=True) == 0
    ids, s, a, r, d, bids = st.unconsumed()
    assert ids.tolist() == list(range(ids[0], ids[0] + 8))
    assert np.array_equal(s, np.concatenate([b1[0], b2[0]]))
    assert s.dtype == np.float32 and a.dtype == np.int64 and d.dtype == bool
    assert np.array_equal(a, np.concatenate([b1[1], b2[1]]))
    assert np.array_equal(r, np.concatenate([b1[2], b2[2]]))
    assert np.array_equal(d, np.concatenate([b1[3], b2[3]]))
    assert bids.tolist() == [id1] * 5 + [id2] * 3
    # limit and partial consumption (also across a batch boundary)
    assert len(st.unconsumed(limit=6)[0]) == 6
    st.mark_consumed(ids[[0, 2, 5]])
    assert st.count(consumed=True) == 3 and st.count(consumed=False) == 5
    rest = st.unconsumed()
    assert rest[0].tolist() == ids[[1, 3, 4, 6, 7]].tolist()
    assert np.array_equal(rest[1], s[[1, 3, 4, 6, 7]])
    st.mark_consumed(rest[0])
    st.mark_consumed(np.array([10**9]))  # unknown ids are ignored
    assert st.count(consumed=False) == 0 and len(st.unconsumed()[0]) == 0
    st.close()
    # reopened: everything still there
    with ExperienceStore(tmp_path / "x.sqlite") as st2:
        assert st2.count() == 8 and st2.count(consumed=True) == 8
        mode = st2.conn.execute("PRAGMA journal_mode").fetchone()[0]
        assert mode == "wal"
        assert st2.conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL


def test_single_state_and_nan_reward_kept(tmp_path):
    st = ExperienceStore(tmp_path / "x.sqlite")
    st.append(np.ones(4), np.array([1]), np.array([np.nan]), np.array([True]))
    _, s, a, r, d, _ = st.unconsumed()
    assert s.shape == (1, 4) and a.tolist() == [1] and np.isnan(r[0]) and d.tolist() == [True]


def test_refusals(tmp_path):
    st = ExperienceStore(tmp_path / "x.sqlite")
    st.append(*_batch(4, dim=6))
    with pytest.raises(ValueError, match="6-feature"):
        st.append(*_batch(4, dim=8))
    s, a, r, d = _batch(4)
    with pytest.raises(ValueError, match="lengths differ"):
        st.append(s, a[:3], r, d)
    with pytest.raises(ValueError, match="empty"):
        st.append(np.zeros((0, 6)), [], [], [])
    with pytest.raises(ValueError, match="integers"):
        st.append(s, a + 0.5, r, d)
    with pytest.raises(ValueError, match=">= 0"):
        st.append(s, -a - 1, r, d)
    assert st.count() == 4  # refused batches left nothing behind
    st.close()
    with pytest.raises(RuntimeError, match="closed"):
        st.count()


def test_threads_append_concurrently(tmp_path):
    st = ExperienceStore(tmp_path / "x.sqlite")
    got: list[int] = []

    def worker(k: int) -> None:
        for j in range(20):
            got.append(st.append(*_batch(3, seed=k * 100 + j)))

    ts = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert len(set(got)) == 80 and st.count() == 240
    ids = st.unconsumed()[0]
    assert len(np.unique(ids)) == 240 and np.all(np.diff(ids) > 0)


def test_unconsumed_100k_is_fast(tmp_path):
    import time

    st = ExperienceStore(tmp_path / "x.sqlite")
    for k in range(10):
        st.append(*_batch(10_000, dim=202, seed=k))
    t0 = time.perf_counter()
    ids, s, *_ = st.unconsumed(limit=100_000)
    took = time.perf_counter() - t0
    assert s.shape == (100_000, 202)
    st.mark_consumed(ids)
    assert st.count(consumed=False) == 0
    assert took < 3.0, f"unconsumed() of 100k rows took {took:.2f} s"


WRITER = textwrap.dedent(
    """
    import sys
    import numpy as np
    from rlsched.serve.store import ExperienceStore

    st = ExperienceStore(sys.argv[1])
    rng = np.random.default_rng(0)
    k = 0
    while True:
        n = 1 + k % 7
        s = np.full((n, 10), k, dtype=np.float32)
        bid = st.append(s, np.arange(n) % 10, np.full(n, float(k)), np.zeros(n, bool))
        print(bid, k, n, flush=True)
        k += 1
    """
)


def test_acknowledged_batches_survive_sigkill(tmp_path):
    db = tmp_path / "x.sqlite"
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(db)], stdout=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    acked: dict[int, tuple[int, int]] = {}
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            bid, k, n = map(int, line.split())
            acked[bid] = (k, n)
            if len(acked) >= 60:
                break
        os.kill(proc.pid, signal.SIGKILL)  # mid-stream: it is appending more right now
    finally:
        proc.kill()
        proc.wait(30)
    assert proc.returncode == -signal.SIGKILL
    with ExperienceStore(db) as st:
        _, s, _, r, _, bids = st.unconsumed()
        for bid, (k, n) in acked.items():
            rows = bids == bid
            assert rows.sum() == n, f"acknowledged batch {bid} lost or torn"
            assert np.all(s[rows] == k) and np.all(r[rows] == k)
        # nothing torn beyond the acknowledged ones either
        for bid in np.unique(bids):
            rows = bids == bid
            k = int(r[rows][0])
            assert rows.sum() == 1 + k % 7


# ---------------------------------------------------------------------------- failures (#14.7)
def _chattr(path, flag: str) -> bool:
    """chattr +i / -i (needs root and a file system that supports it)."""
    try:
        return subprocess.run(["chattr", flag, str(path)], capture_output=True).returncode == 0
    except FileNotFoundError:
        return False


def test_no_shared_memory_index_so_no_sigbus(tmp_path):
    """The WAL index lives in the process (locking_mode=EXCLUSIVE): no -shm file is used,
    so an immutable -shm left behind cannot kill the process with SIGBUS."""
    p = tmp_path / "x.sqlite"
    shm = tmp_path / "x.sqlite-shm"
    shm.write_bytes(b"")
    immutable = _chattr(shm, "+i")
    try:
        code = textwrap.dedent(f"""
            import numpy as np
            from rlsched.serve.store import ExperienceStore
            st = ExperienceStore({str(p)!r})
            for _ in range(50):
                st.append(np.zeros((8, 6), np.float32), np.zeros(8, int), np.zeros(8),
                          np.zeros(8, bool))
            print(st.count())
            st.close()
        """)
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           timeout=60)  # fmt: skip
        assert r.returncode == 0, (r.returncode, r.stderr[-2000:])  # SIGBUS would be -7
        assert r.stdout.strip() == "400"
    finally:
        if immutable:
            _chattr(shm, "-i")
    with ExperienceStore(p) as st:
        st.append(*_batch(2))
        assert not (tmp_path / "x.sqlite-shm").exists() or shm.stat().st_size == 0


def test_store_held_by_another_connection_fails_fast_and_says_so(tmp_path):
    import time

    p = tmp_path / "x.sqlite"
    with ExperienceStore(p) as st:
        st.append(*_batch(2))
        t0 = time.monotonic()
        with pytest.raises(StoreUnavailable) as e:
            ExperienceStore(p)
        assert time.monotonic() - t0 < 10  # busy_timeout is 2 s, not 30
        assert str(p) in str(e.value) and "another process" in str(e.value)


def test_deleted_store_file_is_detected_before_acknowledging(tmp_path):
    p = tmp_path / "x.sqlite"
    st = ExperienceStore(p)
    st.append(*_batch(3))
    for f in tmp_path.glob("x.sqlite*"):
        f.unlink()
    with pytest.raises(StoreUnavailable, match="deleted while the server ran"):
        st.append(*_batch(3))
    assert st.count() == 3  # the refused batch is not counted
    st.close()


def test_unwritable_store_path_is_one_clear_error(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    p = blocker / "experiences.sqlite"
    with pytest.raises(StoreUnavailable) as e:
        ExperienceStore(p)
    msg = str(e.value)
    assert str(p) in msg and "\n" not in msg


@pytest.mark.skipif(os.geteuid() != 0, reason="chattr +i needs root")
def test_immutable_wal_is_store_unavailable(tmp_path):
    p = tmp_path / "x.sqlite"
    st = ExperienceStore(p)
    st.append(*_batch(3))
    wal = tmp_path / "x.sqlite-wal"
    if not _chattr(wal, "+i"):
        st.close()
        pytest.skip("this file system does not support chattr +i")
    try:
        with pytest.raises(StoreUnavailable, match=str(p)):
            for _ in range(200):  # until the WAL must grow
                st.append(*_batch(64))
    finally:
        _chattr(wal, "-i")
    st.append(*_batch(3))  # writable again: works again
    st.close()


# ---------------------------------------------------------------------------- counters (#14.8)
def test_counters_prune_and_row_ids_are_not_reused(tmp_path):
    st = ExperienceStore(tmp_path / "x.sqlite")
    for k in range(4):
        st.append(*_batch(5, seed=k))
    ids = st.unconsumed()[0]
    st.mark_consumed(ids[:12])  # batches 1, 2 fully, batch 3 partly
    st.mark_consumed(ids[:3])  # again: no double counting
    assert (st.count(), st.count(consumed=True), st.count(consumed=False)) == (20, 12, 8)
    assert st.prune(older_than_s=3600) == 0  # too recent
    assert st.prune(older_than_s=0) == 10  # the two fully consumed batches
    assert (st.count(), st.count(consumed=True), st.count(consumed=False)) == (10, 2, 8)
    bid = st.append(*_batch(1))
    assert bid == 5 and st.unconsumed()[0][-1] == 21  # ids continue after pruning
    st.close()
    with ExperienceStore(tmp_path / "x.sqlite") as st:  # counters persist
        assert (st.count(), st.count(consumed=False)) == (11, 9)


def test_count_does_not_scan(tmp_path):
    """count() reads the counters: as fast with 20,000 batches as with one."""
    import time

    st = ExperienceStore(tmp_path / "x.sqlite")
    st.append(*_batch(1))
    t0 = time.perf_counter()
    for _ in range(200):
        st.count(consumed=False)
    small = time.perf_counter() - t0
    s, a, r, _ = _batch(1)
    with st._tx() as c:  # 20,000 more batches, quickly, as the store writes them
        c.executemany(
            "INSERT INTO batches(created, n, state_dim, model_version, first_row, states, "
            "actions, rewards, dones) VALUES (0, 1, 6, NULL, ?, ?, ?, ?, ?)",
            [(10 + i, s.tobytes(), a.astype("<i8").tobytes(), r.tobytes(), b"\x00")
             for i in range(20_000)],
        )  # fmt: skip
        c.execute("INSERT INTO progress(id, consumed, remaining) SELECT id, x'00', 1 FROM "
                  "batches WHERE id > 1")  # fmt: skip
    t0 = time.perf_counter()
    for _ in range(200):
        st.count(consumed=False)
    big = time.perf_counter() - t0
    assert big < 5 * small + 0.05, (small, big)
    st.close()


# ---------------------------------------------------------------------------- idempotency (#14.15)
def test_idempotency_key(tmp_path):
    from rlsched.serve.store import IdempotencyConflict

    p = tmp_path / "x.sqlite"
    st = ExperienceStore(p)
    a = st.append_batch(*_batch(4), model_version=3, idempotency_key="k-1")
    b = st.append_batch(*_batch(4), model_version=7, idempotency_key="k-1")
    assert not a.repeated and b.repeated
    assert (b.batch_id, b.n, b.model_version) == (a.batch_id, 4, 3) and st.count() == 4
    with pytest.raises(IdempotencyConflict):
        st.append_batch(*_batch(4, seed=9), idempotency_key="k-1")
    st.close()
    with ExperienceStore(p) as st:  # survives a restart
        assert st.append_batch(*_batch(4), idempotency_key="k-1").repeated
        assert st.count() == 4
