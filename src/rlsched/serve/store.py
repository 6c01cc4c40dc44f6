"""Durable storage of the experiences the scheduler plugin sends to ``POST /update``.

SQLite in WAL mode with ``synchronous=FULL``: :meth:`ExperienceStore.append` writes one batch
in one transaction and returns only after the commit, so a batch whose id was acknowledged
survives ``kill -9`` of the server (and, with FULL, a power cut).

One row per batch (one ``/update`` call), its arrays stored as little blobs::

    batches(id, created, n, state_dim, model_version, first_row,
            states float32[n, state_dim], actions int64[n], rewards float64[n], dones uint8[n])
    progress(id -> batches.id, consumed uint8[n], remaining)

Experience ``k`` of a batch has the row id ``first_row + k``; row ids grow with insertion, so
sorting by row id is insertion order. Reading 100k experiences is a handful of blob reads
(rather than 100k SQLite rows), and consumption is a per-batch byte map kept in its own small
table (an UPDATE rewrites the whole row), so :meth:`mark_consumed` accepts any subset of row
ids. Rewards are stored as they came (NaN
included): the store does not judge the data, the learner does.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

import numpy as np

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS batches (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        created REAL NOT NULL,
        n INTEGER NOT NULL,
        state_dim INTEGER NOT NULL,
        model_version INTEGER,
        first_row INTEGER NOT NULL UNIQUE,
        states BLOB NOT NULL,
        actions BLOB NOT NULL,
        rewards BLOB NOT NULL,
        dones BLOB NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS progress (
        id INTEGER PRIMARY KEY REFERENCES batches(id),
        consumed BLOB NOT NULL,
        remaining INTEGER NOT NULL
    )""",
    """CREATE INDEX IF NOT EXISTS progress_open ON progress(id) WHERE remaining > 0""",
)

Arrays = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


class ExperienceStore:
    """Thread-safe (one connection behind a lock); several processes may share the file."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = sqlite3.connect(
            str(self.path), check_same_thread=False, isolation_level=None, timeout=30.0
        )
        c = self._conn
        c.execute("PRAGMA busy_timeout=30000")
        c.execute("PRAGMA journal_mode=WAL")
        c.execute("PRAGMA synchronous=FULL")
        with self._tx() as c:
            for stmt in _SCHEMA:
                c.execute(stmt)

    # ------------------------------------------------------------------ helpers
    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            raise RuntimeError(f"experience store {self.path} is closed")
        return self._conn

    class _Tx:
        def __init__(self, store: ExperienceStore) -> None:
            self.store = store

        def __enter__(self) -> sqlite3.Connection:
            self.store._lock.acquire()
            try:
                c = self.store.conn
                c.execute("BEGIN IMMEDIATE")
            except BaseException:
                self.store._lock.release()
                raise
            return c

        def __exit__(self, exc_type: object, *rest: object) -> None:
            c = self.store.conn
            try:
                c.execute("ROLLBACK" if exc_type is not None else "COMMIT")
            finally:
                self.store._lock.release()

    def _tx(self) -> ExperienceStore._Tx:
        return ExperienceStore._Tx(self)

    @property
    def state_dim(self) -> int | None:
        with self._lock:
            row = self.conn.execute("SELECT value FROM meta WHERE key='state_dim'").fetchone()
        return None if row is None else int(row[0])

    # ------------------------------------------------------------------ API
    def append(
        self,
        states: np.ndarray,
        actions: np.ndarray,
        rewards: np.ndarray,
        dones: np.ndarray,
        model_version: int | None = None,
    ) -> int:
        """Store one batch (committed before returning); returns its batch id.

        ``states`` is ``(B, S)`` (or ``(S,)`` for one experience), the others ``(B,)``.
        Raises ``ValueError`` on inconsistent lengths, an empty batch, negative or
        non-integer actions, or a state width other than the one already in the store.
        """
        s = np.asarray(states, dtype=np.float32)
        if s.ndim == 1:
            s = s[None]
        if s.ndim != 2:
            raise ValueError(f"states must be (B, S), got shape {s.shape}")
        b, dim = s.shape
        a_raw = np.asarray(actions).reshape(-1)
        if a_raw.dtype.kind not in "iub":
            f = a_raw.astype(np.float64)
            if not np.all(np.isfinite(f)) or np.any(f != np.round(f)):
                raise ValueError("actions must be integers")
        a = a_raw.astype("<i8")
        r = np.asarray(rewards, dtype="<f8").reshape(-1)
        d = np.asarray(dones).reshape(-1).astype(np.uint8)
        if b == 0:
            raise ValueError("empty batch")
        if not (len(a) == len(r) == len(d) == b):
            raise ValueError(
                f"batch lengths differ: {b} states, {len(a)} actions, {len(r)} rewards, "
                f"{len(d)} dones"
            )
        if np.any(a < 0):
            raise ValueError("actions must be >= 0")
        blobs = (
            np.ascontiguousarray(s, dtype="<f4").tobytes(),
            a.tobytes(),
            r.tobytes(),
            (d != 0).astype(np.uint8).tobytes(),
        )
        with self._tx() as c:
            row = c.execute("SELECT value FROM meta WHERE key='state_dim'").fetchone()
            if row is None:
                c.execute("INSERT INTO meta(key, value) VALUES ('state_dim', ?)", (str(dim),))
            elif int(row[0]) != dim:
                raise ValueError(
                    f"states have {dim} features but this store holds {row[0]}-feature states "
                    f"({self.path}); use another store for another cluster size"
                )
            last = c.execute(
                "SELECT first_row + n FROM batches ORDER BY id DESC LIMIT 1"
            ).fetchone()
            first = int(last[0]) if last else 1
            cur = c.execute(
                "INSERT INTO batches(created, n, state_dim, model_version, first_row, states, "
                "actions, rewards, dones) VALUES (?,?,?,?,?,?,?,?,?)",
                (time.time(), b, dim, model_version, first, *blobs),
            )
            bid = int(cur.lastrowid or 0)
            c.execute(
                "INSERT INTO progress(id, consumed, remaining) VALUES (?,?,?)", (bid, bytes(b), b)
            )
            return bid

    def count(self, consumed: bool | None = None) -> int:
        """Experiences stored (``None``), consumed (``True``) or not yet consumed (``False``)."""
        q = {
            None: "SELECT COALESCE(SUM(n), 0) FROM batches",
            True: "SELECT COALESCE(SUM(b.n - p.remaining), 0) FROM batches b JOIN progress p "
            "ON p.id = b.id",
            False: "SELECT COALESCE(SUM(remaining), 0) FROM progress",
        }[consumed]
        with self._lock:
            return int(self.conn.execute(q).fetchone()[0])

    def batches(self) -> int:
        with self._lock:
            return int(self.conn.execute("SELECT COUNT(*) FROM batches").fetchone()[0])

    def unconsumed(self, limit: int = 100_000) -> Arrays:
        """The oldest ``limit`` unconsumed experiences, in insertion order:
        ``(row_ids int64, states float32 (n, S), actions int64, rewards float64, dones bool,
        batch_ids int64)``."""
        parts: list[tuple[np.ndarray, ...]] = []
        got = 0
        with self._lock:
            c = self.conn
            dim_row = c.execute("SELECT value FROM meta WHERE key='state_dim'").fetchone()
            dim = int(dim_row[0]) if dim_row else 0
            if limit > 0:
                cur = c.execute(
                    "SELECT b.id, b.n, b.first_row, b.states, b.actions, b.rewards, b.dones, "
                    "p.consumed FROM progress AS p JOIN batches AS b ON b.id = p.id "
                    "WHERE p.remaining > 0 ORDER BY p.id"
                )
                for bid, n, first, sb, ab, rb, db, cb in cur:
                    keep = np.frombuffer(cb, dtype=np.uint8) == 0
                    idx = np.flatnonzero(keep)[: limit - got]
                    parts.append(
                        (
                            first + idx,
                            np.frombuffer(sb, dtype="<f4").reshape(n, dim)[idx],
                            np.frombuffer(ab, dtype="<i8")[idx],
                            np.frombuffer(rb, dtype="<f8")[idx],
                            np.frombuffer(db, dtype=np.uint8)[idx] != 0,
                            np.full(len(idx), bid, dtype=np.int64),
                        )
                    )
                    got += len(idx)
                    if got >= limit:
                        break
                cur.close()
        if not parts:
            e = np.zeros(0, dtype=np.int64)
            return e, np.zeros((0, dim), np.float32), e.copy(), np.zeros(0), np.zeros(0, bool), e
        ids, states, actions, rewards, dones, bids = (
            np.concatenate(p) for p in zip(*parts, strict=True)
        )
        return (
            ids.astype(np.int64),
            states.astype(np.float32),
            actions.astype(np.int64),
            rewards.astype(np.float64),
            dones,
            bids,
        )

    def mark_consumed(self, row_ids: np.ndarray) -> None:
        """Mark these experiences consumed (ids not in the store are ignored)."""
        ids = np.unique(np.asarray(row_ids, dtype=np.int64).reshape(-1))
        if ids.size == 0:
            return
        with self._tx() as c:
            rows = c.execute(
                "SELECT b.id, b.first_row, b.n, p.consumed FROM batches AS b "
                "JOIN progress AS p ON p.id = b.id "
                "WHERE b.first_row <= ? AND b.first_row + b.n > ? AND p.remaining > 0",
                (int(ids[-1]), int(ids[0])),
            ).fetchall()
            updates = []
            for bid, first, n, cb in rows:
                lo, hi = np.searchsorted(ids, [first, first + n])
                if lo == hi:
                    continue
                flags = np.frombuffer(cb, dtype=np.uint8).copy()
                flags[ids[lo:hi] - first] = 1
                updates.append((flags.tobytes(), int(n - flags.sum()), bid))
            c.executemany("UPDATE progress SET consumed = ?, remaining = ? WHERE id = ?", updates)

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> ExperienceStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
