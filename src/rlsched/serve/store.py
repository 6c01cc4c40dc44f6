"""Durable storage of the experiences the scheduler plugin sends to ``POST /update``.

SQLite in WAL mode with ``synchronous=FULL``: :meth:`ExperienceStore.append` writes one batch
in one transaction and returns only after the commit, so a batch whose id was acknowledged
survives ``kill -9`` of the server (and, with FULL, a power cut).

The store belongs to one process: ``locking_mode=EXCLUSIVE`` is set before WAL is, so SQLite
keeps the WAL index in the process's memory and never maps a ``-shm`` file (a ``-shm`` the
process cannot grow would kill it with SIGBUS); a second process opening the same file gets
:class:`StoreUnavailable` within ``busy_timeout`` rather than sharing it. Every SQLite or
file-system failure is raised as :class:`StoreUnavailable` naming the path; a store file
deleted or replaced while the server runs is detected before a batch is acknowledged.

Counters (experiences in the store, unconsumed, the next row id) are kept in a one-row table
updated in the same transactions, so counting never scans the table; :meth:`prune` deletes
consumed batches (and idempotency keys) older than a retention period.

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

import contextlib
import functools
import hashlib
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar, cast

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
    """CREATE TABLE IF NOT EXISTS counters (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        rows INTEGER NOT NULL,
        pending INTEGER NOT NULL,
        next_row INTEGER NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS idempotency (
        key TEXT PRIMARY KEY,
        digest TEXT NOT NULL,
        batch_id INTEGER NOT NULL,
        n INTEGER NOT NULL,
        model_version INTEGER,
        created REAL NOT NULL
    )""",
    """CREATE INDEX IF NOT EXISTS batches_created ON batches(created)""",
)

BUSY_TIMEOUT_S = 2.0  # a lock held elsewhere: StoreUnavailable after this, not 30 s


class StoreUnavailable(RuntimeError):
    """The store cannot be used now (SQLite error, lock, missing or unwritable file); the
    message names the path and says what happened."""


class IdempotencyConflict(ValueError):
    """An ``Idempotency-Key`` reused with a different batch."""


@dataclass(frozen=True)
class Appended:
    """What :meth:`ExperienceStore.append` stored (or had stored, for a repeated key)."""

    batch_id: int
    n: int
    model_version: int | None
    repeated: bool = False


Arrays = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]
F = TypeVar("F", bound=Callable[..., Any])


def _store_errors(fn: F) -> F:
    """SQLite and OS errors become :class:`StoreUnavailable` naming the store's path."""

    @functools.wraps(fn)
    def wrapper(self: ExperienceStore, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(self, *args, **kwargs)
        except sqlite3.Error as e:
            what = "locked by another process" if "locked" in str(e) else str(e)
            raise StoreUnavailable(f"experience store {self.path}: {what}") from e
        except OSError as e:
            raise StoreUnavailable(f"experience store {self.path}: {e.strerror or e}") from e

    return cast(F, wrapper)


def batch_blobs(
    states: np.ndarray, actions: np.ndarray, rewards: np.ndarray, dones: np.ndarray
) -> tuple[int, int, tuple[bytes, bytes, bytes, bytes]]:
    """Validate one batch of experiences (every store takes the same): ``(B, S, blobs)``, the
    blobs little-endian float32 states, int64 actions, float64 rewards and uint8 dones."""
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
    return b, dim, blobs


class ExperienceStore:
    """Thread-safe (one connection behind a lock); several processes may share the file."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._consume_lock = threading.Lock()  # one consumption() at a time
        self._conn: sqlite3.Connection | None = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(
                str(self.path), check_same_thread=False, isolation_level=None,
                timeout=BUSY_TIMEOUT_S,
            )  # fmt: skip
            c = self._conn
            c.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_S * 1000)}")
            c.execute("PRAGMA locking_mode=EXCLUSIVE")  # before WAL: no -shm, no SIGBUS
            mode = c.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise sqlite3.OperationalError(f"cannot switch to WAL (journal_mode {mode})")
            c.execute("PRAGMA synchronous=FULL")
            with self._tx() as c:
                for stmt in _SCHEMA:
                    c.execute(stmt)
                if c.execute("SELECT 1 FROM counters").fetchone() is None:  # once per store
                    rows, pending, nxt = c.execute(
                        "SELECT COALESCE(SUM(b.n), 0), COALESCE(SUM(p.remaining), 0), "
                        "COALESCE(MAX(b.first_row + b.n), 1) FROM batches b "
                        "JOIN progress p ON p.id = b.id"
                    ).fetchone()
                    c.execute(
                        "INSERT INTO counters(id, rows, pending, next_row) VALUES (1, ?, ?, ?)",
                        (rows, pending, nxt),
                    )
            st = os.stat(self.path)
            self._identity = (st.st_dev, st.st_ino)
        except (sqlite3.Error, OSError) as e:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
            msg = getattr(e, "strerror", None) or str(e)
            if "locked" in msg:
                msg += " (another process has it open: a store belongs to one server)"
            raise StoreUnavailable(f"cannot open the experience store {self.path}: {msg}") from e

    # ------------------------------------------------------------------ helpers
    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            raise StoreUnavailable(f"experience store {self.path} is closed")
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

    def check_file(self) -> None:
        """:class:`StoreUnavailable` if the database file was deleted or replaced since it
        was opened (writes would go to an unlinked inode and be lost at exit)."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            raise StoreUnavailable(
                f"experience store {self.path} was deleted while the server ran; restart "
                "the server to create a new one"
            ) from None
        if (st.st_dev, st.st_ino) != self._identity:
            raise StoreUnavailable(
                f"experience store {self.path} was replaced while the server ran; restart "
                "the server to use the new file"
            )

    @property
    @_store_errors
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
        non-integer actions, or a state width other than the one already in the store;
        :class:`StoreUnavailable` when the store cannot be written.
        """
        return self.append_batch(states, actions, rewards, dones, model_version).batch_id

    @_store_errors
    def append_batch(
        self,
        states: np.ndarray,
        actions: np.ndarray,
        rewards: np.ndarray,
        dones: np.ndarray,
        model_version: int | None = None,
        idempotency_key: str | None = None,
    ) -> Appended:
        """:meth:`append` with an optional idempotency key: a batch stored before under the
        same key is not stored again; its first answer is returned (``repeated``), or
        :class:`IdempotencyConflict` if the key came with a different batch."""
        b, dim, blobs = batch_blobs(states, actions, rewards, dones)
        digest = hashlib.sha256(b"".join(blobs)).hexdigest() if idempotency_key else ""
        with self._tx() as c:
            if idempotency_key is not None:
                seen = c.execute(
                    "SELECT digest, batch_id, n, model_version FROM idempotency WHERE key = ?",
                    (idempotency_key,),
                ).fetchone()
                if seen is not None:
                    if seen[0] != digest:
                        raise IdempotencyConflict(
                            "this Idempotency-Key was used before with a different batch"
                        )
                    return Appended(int(seen[1]), int(seen[2]), seen[3], repeated=True)
            self.check_file()  # never acknowledge into a deleted file
            row = c.execute("SELECT value FROM meta WHERE key='state_dim'").fetchone()
            if row is None:
                c.execute("INSERT INTO meta(key, value) VALUES ('state_dim', ?)", (str(dim),))
            elif int(row[0]) != dim:
                raise ValueError(
                    f"states have {dim} features but this store holds {row[0]}-feature states "
                    f"({self.path}); use another store for another cluster size"
                )
            first = int(c.execute("SELECT next_row FROM counters").fetchone()[0])
            cur = c.execute(
                "INSERT INTO batches(created, n, state_dim, model_version, first_row, states, "
                "actions, rewards, dones) VALUES (?,?,?,?,?,?,?,?,?)",
                (time.time(), b, dim, model_version, first, *blobs),
            )
            bid = int(cur.lastrowid or 0)
            c.execute(
                "INSERT INTO progress(id, consumed, remaining) VALUES (?,?,?)", (bid, bytes(b), b)
            )
            c.execute(
                "UPDATE counters SET rows = rows + ?, pending = pending + ?, next_row = ?",
                (b, b, first + b),
            )
            if idempotency_key is not None:
                c.execute(
                    "INSERT INTO idempotency(key, digest, batch_id, n, model_version, created) "
                    "VALUES (?,?,?,?,?,?)",
                    (idempotency_key, digest, bid, b, model_version, time.time()),
                )
            return Appended(bid, b, model_version)

    @_store_errors
    def count(self, consumed: bool | None = None) -> int:
        """Experiences in the store (``None``), consumed (``True``) or not yet consumed
        (``False``); read from the counters, no scan. Pruned batches are no longer counted."""
        with self._lock:
            rows, pending = self.conn.execute("SELECT rows, pending FROM counters").fetchone()
        return {None: rows, True: rows - pending, False: pending}[consumed]

    @_store_errors
    def prune(self, older_than_s: float) -> int:
        """Delete fully consumed batches and idempotency keys older than ``older_than_s``
        seconds; returns the number of experiences deleted."""
        cutoff = time.time() - older_than_s
        with self._tx() as c:
            gone = c.execute(
                "SELECT b.id, b.n FROM batches b JOIN progress p ON p.id = b.id "
                "WHERE p.remaining = 0 AND b.created < ?",
                (cutoff,),
            ).fetchall()
            ids = [(bid,) for bid, _ in gone]
            c.executemany("DELETE FROM progress WHERE id = ?", ids)
            c.executemany("DELETE FROM batches WHERE id = ?", ids)
            n = sum(int(k) for _, k in gone)
            c.execute("UPDATE counters SET rows = rows - ?", (n,))
            c.execute("DELETE FROM idempotency WHERE created < ?", (cutoff,))
        return n

    @_store_errors
    def batches(self) -> int:
        with self._lock:
            return int(self.conn.execute("SELECT COUNT(*) FROM batches").fetchone()[0])

    @_store_errors
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

    @_store_errors
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
            newly = 0
            for bid, first, n, cb in rows:
                lo, hi = np.searchsorted(ids, [first, first + n])
                if lo == hi:
                    continue
                flags = np.frombuffer(cb, dtype=np.uint8).copy()
                before = int(flags.sum())
                flags[ids[lo:hi] - first] = 1
                after = int(flags.sum())
                newly += after - before
                updates.append((flags.tobytes(), int(n - after), bid))
            c.executemany("UPDATE progress SET consumed = ?, remaining = ? WHERE id = ?", updates)
            c.execute("UPDATE counters SET pending = pending - ?", (newly,))

    @contextlib.contextmanager
    def consumption(self, learner: str | None = None) -> Iterator[ExperienceStore]:
        """One learner run's view of the store: the store itself, one run at a time (a
        SQLite store belongs to one process; see the PostgreSQL store for claims shared
        between processes). Its flags commit as they are marked."""
        with self._consume_lock:
            yield self

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> ExperienceStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
