"""The experience store on PostgreSQL: what :class:`~rlsched.serve.store.ExperienceStore`
does on SQLite, shared by every replica and the learner.

Same layout (one row per batch, its arrays as little blobs; a per-batch consumed byte map in
``rlsched_progress``), same answers. What differs:

* row ids are ``batch_id * 2**16 + k`` (so a batch holds at most 65536 experiences; the
  service sends at most 4096): no shared row counter for concurrent appends to wait on;
* counters live in 8 slot rows (an append updates the slot of its batch id, a count sums the
  8): kept incrementally, never a scan, and no hot row every ``/update`` queues on;
* the idempotency key is written in the transaction of its batch; two replicas racing on one
  key: the loser's insert conflicts, it rolls back and answers the winner's batch;
* :meth:`consumption` claims batches with ``SELECT ... FOR UPDATE SKIP LOCKED`` in one
  transaction that stays open while the learner trains and commits the consumed flags with
  the learner's outcome (and its publish: :meth:`PgRegistry.within`). Two consumers never get
  the same batch; a consumer killed mid-run leaves nothing consumed (its transaction dies
  with its connection and the rows are unlocked).

Every database failure (down, pool exhausted, a connection lost) is raised as
:class:`StoreUnavailable` naming the database (never its password).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import socket
import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import numpy as np

from rlsched.serve.pg import Database
from rlsched.serve.store import (
    Appended,
    Arrays,
    IdempotencyConflict,
    StoreUnavailable,
    batch_blobs,
)

ROW_BITS = 16
MAX_BATCH = 1 << ROW_BITS
SLOTS = 8
_CLAIM_CHUNK = 64  # batches per claiming query
F = TypeVar("F", bound=Callable[..., Any])


def _db_errors(fn: F) -> F:
    """psycopg and pool errors become :class:`StoreUnavailable` naming the database."""

    @functools.wraps(fn)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        import psycopg
        from psycopg_pool import PoolTimeout

        try:
            return fn(self, *args, **kwargs)
        except PoolTimeout:
            raise StoreUnavailable(
                f"experience store {self.where}: no database connection (down or overloaded)"
            ) from None
        except psycopg.Error as e:
            msg = " ".join(str(e).split()) or type(e).__name__
            raise StoreUnavailable(f"experience store {self.where}: {msg}") from e

    return wrapper  # type: ignore[return-value]


def _empty(dim: int) -> Arrays:
    e = np.zeros(0, dtype=np.int64)
    return e, np.zeros((0, dim), np.float32), e.copy(), np.zeros(0), np.zeros(0, bool), e


def _blobs(
    states: np.ndarray, actions: np.ndarray, rewards: np.ndarray, dones: np.ndarray
) -> tuple[int, int, tuple[bytes, bytes, bytes, bytes]]:
    """Validate one batch as every store does (:func:`rlsched.serve.store.batch_blobs`), within
    this store's batch limit; (B, S, blobs)."""
    b, dim, blobs = batch_blobs(states, actions, rewards, dones)
    if b > MAX_BATCH:
        raise ValueError(f"{b} experiences in one batch; the PostgreSQL store takes {MAX_BATCH}")
    return b, dim, blobs


def _arrays(bid: int, n: int, dim: int, blobs: tuple[bytes, ...], idx: np.ndarray) -> tuple:
    sb, ab, rb, db = blobs
    return (
        (bid << ROW_BITS) + idx.astype(np.int64),
        np.frombuffer(sb, dtype="<f4").reshape(n, dim)[idx],
        np.frombuffer(ab, dtype="<i8")[idx],
        np.frombuffer(rb, dtype="<f8")[idx],
        np.frombuffer(db, dtype=np.uint8)[idx] != 0,
        np.full(len(idx), bid, dtype=np.int64),
    )


def _concat(parts: list[tuple], dim: int) -> Arrays:
    if not parts:
        return _empty(dim)
    ids, states, actions, rewards, dones, bids = (
        np.concatenate(p) for p in zip(*parts, strict=True)
    )
    return (
        ids.astype(np.int64), states.astype(np.float32), actions.astype(np.int64),
        rewards.astype(np.float64), dones, bids,
    )  # fmt: skip


def _mark(conn: Any, rows: list[tuple[int, int, bytes]], ids: np.ndarray) -> int:
    """Set the consumed flags of ``ids`` in ``rows`` ((batch id, n, flags), locked by the
    caller); returns how many flags went from 0 to 1."""
    newly = 0
    updates = []
    for bid, n, cb in rows:
        first = bid << ROW_BITS
        lo, hi = np.searchsorted(ids, [first, first + n])
        if lo == hi:
            continue
        flags = np.frombuffer(bytes(cb), dtype=np.uint8).copy()
        before = int(flags.sum())
        flags[ids[lo:hi] - first] = 1
        after = int(flags.sum())
        newly += after - before
        updates.append((flags.tobytes(), int(n - after), bid))
    if updates:
        with conn.cursor() as cur:
            cur.executemany(
                "UPDATE rlsched_progress SET consumed = %s, remaining = %s WHERE id = %s", updates
            )
    return newly


class PgExperienceStore:
    """The experience store on a :class:`~rlsched.serve.pg.Database` (thread-safe: every
    call takes a pooled connection)."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.where = db.where
        self.path = db.where  # what the SQLite store's messages call its location

    # ------------------------------------------------------------------ writes
    def append(self, states: Any, actions: Any, rewards: Any, dones: Any,
               model_version: int | None = None) -> int:  # fmt: skip
        return self.append_batch(states, actions, rewards, dones, model_version).batch_id

    def append_batch(
        self,
        states: Any,
        actions: Any,
        rewards: Any,
        dones: Any,
        model_version: int | None = None,
        idempotency_key: str | None = None,
    ) -> Appended:
        """Store one batch (committed before returning), as
        :meth:`ExperienceStore.append_batch`."""
        import psycopg

        b, dim, blobs = _blobs(states, actions, rewards, dones)
        digest = hashlib.sha256(b"".join(blobs)).hexdigest() if idempotency_key else ""
        return self._append_retrying(b, dim, blobs, model_version, idempotency_key, digest,
                                     psycopg.errors.UniqueViolation)  # fmt: skip

    @_db_errors
    def _append_retrying(self, b: int, dim: int, blobs: tuple[bytes, ...],
                         model_version: int | None, key: str | None, digest: str,
                         unique_violation: type[Exception]) -> Appended:  # fmt: skip
        try:
            return self._append(b, dim, blobs, model_version, key, digest)
        except unique_violation:
            # another replica stored this key meanwhile (a client retrying elsewhere while
            # its first call was still in flight): answer its batch, or the conflict
            return self._append(b, dim, blobs, model_version, key, digest)

    def _append(self, b: int, dim: int, blobs: tuple[bytes, ...], model_version: int | None,
                key: str | None, digest: str) -> Appended:  # fmt: skip
        with self.db.connection() as conn, conn.transaction():
            if key is not None:
                seen = conn.execute(
                    "SELECT digest, batch_id, n, model_version FROM rlsched_idempotency "
                    "WHERE key = %s", (key,),
                ).fetchone()  # fmt: skip
                if seen is not None:
                    if seen[0] != digest:
                        raise IdempotencyConflict(
                            "this Idempotency-Key was used before with a different batch"
                        )
                    return Appended(int(seen[1]), int(seen[2]), seen[3], repeated=True)
            # read first: an upsert would lock this one row in every append until commit
            row = conn.execute("SELECT value FROM rlsched_meta WHERE key = 'state_dim'").fetchone()
            if row is None:
                conn.execute(
                    "INSERT INTO rlsched_meta(key, value) VALUES ('state_dim', %s) "
                    "ON CONFLICT (key) DO NOTHING", (str(dim),),
                )  # fmt: skip
                row = conn.execute(
                    "SELECT value FROM rlsched_meta WHERE key = 'state_dim'").fetchone()
            if int(row[0]) != dim:
                raise ValueError(
                    f"states have {dim} features but this store holds {row[0]}-feature states "
                    f"({self.where}); use another store for another cluster size"
                )
            now = time.time()
            bid = int(conn.execute(
                "INSERT INTO rlsched_batches(created, n, state_dim, model_version, states, "
                "actions, rewards, dones) VALUES (%s,%s,%s,%s,%s,%s,%s,%s) RETURNING id",
                (now, b, dim, model_version, *blobs),
            ).fetchone()[0])  # fmt: skip
            conn.execute(
                "INSERT INTO rlsched_progress(id, consumed, remaining) VALUES (%s,%s,%s)",
                (bid, bytes(b), b),
            )
            conn.execute(
                "UPDATE rlsched_counters SET rows = rows + %s, pending = pending + %s "
                "WHERE slot = %s", (b, b, bid % SLOTS),
            )  # fmt: skip
            if key is not None:
                conn.execute(
                    "INSERT INTO rlsched_idempotency(key, digest, batch_id, n, model_version, "
                    "created) VALUES (%s,%s,%s,%s,%s,%s)",
                    (key, digest, bid, b, model_version, now),
                )
            return Appended(bid, b, model_version)

    # ------------------------------------------------------------------ reads
    @property
    @_db_errors
    def state_dim(self) -> int | None:
        with self.db.connection() as conn:
            row = conn.execute("SELECT value FROM rlsched_meta WHERE key='state_dim'").fetchone()
        return None if row is None else int(row[0])

    @_db_errors
    def count(self, consumed: bool | None = None) -> int:
        """As :meth:`ExperienceStore.count`: from the counters (8 rows), no scan."""
        with self.db.connection() as conn:
            rows, pending = conn.execute(
                "SELECT COALESCE(SUM(rows), 0), COALESCE(SUM(pending), 0) FROM rlsched_counters"
            ).fetchone()
        rows, pending = int(rows), int(pending)
        return {None: rows, True: rows - pending, False: pending}[consumed]

    @_db_errors
    def batches(self) -> int:
        with self.db.connection() as conn:
            return int(conn.execute("SELECT COUNT(*) FROM rlsched_batches").fetchone()[0])

    @_db_errors
    def unconsumed(self, limit: int = 100_000) -> Arrays:
        """The oldest ``limit`` unconsumed experiences (a snapshot; no claim), as
        :meth:`ExperienceStore.unconsumed`."""
        with self.db.connection() as conn:
            return _read(conn, limit, lock=False)[0]

    # ------------------------------------------------------------------ consumption
    @_db_errors
    def mark_consumed(self, row_ids: Any) -> None:
        """Mark these experiences consumed (ids not in the store are ignored)."""
        ids = np.unique(np.asarray(row_ids, dtype=np.int64).reshape(-1))
        if ids.size == 0:
            return
        bids = sorted({int(i) >> ROW_BITS for i in ids})
        with self.db.connection() as conn, conn.transaction():
            rows = conn.execute(
                "SELECT b.id, b.n, p.consumed FROM rlsched_batches b JOIN rlsched_progress p "
                "ON p.id = b.id WHERE b.id = ANY(%s) AND p.remaining > 0 ORDER BY b.id "
                "FOR UPDATE OF p", (bids,),
            ).fetchall()  # fmt: skip
            newly = _mark(conn, rows, ids)
            if newly:
                conn.execute(
                    "UPDATE rlsched_counters SET pending = pending - %s WHERE slot = 0", (newly,)
                )

    @contextlib.contextmanager
    def consumption(self, learner: str | None = None) -> Iterator[Consumption]:
        """One learner run's claim: see :class:`Consumption`. Committed when the block ends
        normally, rolled back (nothing consumed) on an exception or a lost connection."""
        try:
            with self.db.connection() as conn, conn.transaction():
                c = Consumption(self, conn, learner or socket.gethostname())
                yield c
                c._finish()
        except StoreUnavailable:
            raise
        except Exception as e:
            import psycopg
            from psycopg_pool import PoolTimeout

            if isinstance(e, (psycopg.Error, PoolTimeout)):
                msg = " ".join(str(e).split()) or type(e).__name__
                raise StoreUnavailable(f"experience store {self.where}: {msg}") from e
            raise

    @_db_errors
    def prune(self, older_than_s: float) -> int:
        """Delete fully consumed batches and idempotency keys older than ``older_than_s``
        seconds; returns the number of experiences deleted."""
        cutoff = time.time() - older_than_s
        with self.db.connection() as conn, conn.transaction():
            gone = conn.execute(
                "DELETE FROM rlsched_batches b USING rlsched_progress p WHERE p.id = b.id "
                "AND p.remaining = 0 AND b.created < %s RETURNING b.id, b.n", (cutoff,),
            ).fetchall()  # fmt: skip
            by_slot: dict[int, int] = {}
            for bid, n in gone:
                by_slot[int(bid) % SLOTS] = by_slot.get(int(bid) % SLOTS, 0) + int(n)
            for slot, n in by_slot.items():
                conn.execute(
                    "UPDATE rlsched_counters SET rows = rows - %s WHERE slot = %s", (n, slot)
                )
            conn.execute("DELETE FROM rlsched_idempotency WHERE created < %s", (cutoff,))
        return sum(by_slot.values())

    @_db_errors
    def learner_runs(self) -> list[dict[str, Any]]:
        """The recorded learner outcomes, oldest first."""
        with self.db.connection() as conn:
            cur = conn.execute(
                "SELECT id, finished, learner, status, reason, from_version, version, claimed, "
                "consumed FROM rlsched_learner_runs ORDER BY id"
            )
            names = [d.name for d in cur.description]
            return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> PgExperienceStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _read(conn: Any, limit: int, lock: bool) -> tuple[Arrays, list[tuple[int, int, bytes]]]:
    """Unconsumed experiences in batch order (``lock``: claim the batches with FOR UPDATE
    SKIP LOCKED); also the (id, n, flags) rows read."""
    dim_row = conn.execute("SELECT value FROM rlsched_meta WHERE key='state_dim'").fetchone()
    dim = int(dim_row[0]) if dim_row else 0
    parts: list[tuple] = []
    rows: list[tuple[int, int, bytes]] = []
    got, last = 0, 0
    while got < limit:
        # candidates first (no lock), then lock only as many batches as the limit needs:
        # locking a whole chunk would keep batches this run never reads from other consumers
        cand = conn.execute(
            "SELECT id, remaining FROM rlsched_progress WHERE remaining > 0 AND id > %s "
            "ORDER BY id LIMIT %s", (last, _CLAIM_CHUNK),
        ).fetchall()  # fmt: skip
        if not cand:
            break
        need, pick = limit - got, []
        for bid, rem in cand:
            pick.append(int(bid))
            need -= int(rem)
            if need <= 0:
                break
        last = pick[-1]
        chunk = conn.execute(
            "SELECT b.id, b.n, b.states, b.actions, b.rewards, b.dones, p.consumed "
            "FROM rlsched_progress p JOIN rlsched_batches b ON b.id = p.id "
            "WHERE p.id = ANY(%s) AND p.remaining > 0 ORDER BY p.id"
            + (" FOR UPDATE OF p SKIP LOCKED" if lock else ""), (pick,),
        ).fetchall()  # fmt: skip
        for bid, n, sb, ab, rb, db, cb in chunk:
            keep = np.frombuffer(bytes(cb), dtype=np.uint8) == 0
            idx = np.flatnonzero(keep)[: limit - got]
            if len(idx) == 0:
                continue
            rows.append((int(bid), int(n), bytes(cb)))
            parts.append(_arrays(int(bid), int(n), dim, (bytes(sb), bytes(ab), bytes(rb),
                                                         bytes(db)), idx))  # fmt: skip
            got += len(idx)
            if got >= limit:
                break
    return _concat(parts, dim), rows


class Consumption:
    """The store as one learner run sees it, inside one transaction: :meth:`unconsumed`
    claims (locks) the batches it returns, :meth:`mark_consumed` flags rows of the claim,
    :meth:`record_outcome` writes the run's outcome. Nothing is visible to others until the
    run's block ends; then flags, counters, outcome (and a publish made through
    :meth:`PgRegistry.within`) commit together."""

    def __init__(self, store: PgExperienceStore, conn: Any, learner: str) -> None:
        self.store = store
        self.conn = conn
        self.learner = learner
        self._rows: dict[int, tuple[int, int, bytes]] = {}
        self._newly = 0
        self.claimed = 0
        self.consumed_ids: set[int] = set()
        self._outcome: tuple[Any, ...] | None = None

    @property
    def state_dim(self) -> int | None:
        return self.store.state_dim

    def count(self, consumed: bool | None = None) -> int:
        return self.store.count(consumed)

    def unconsumed(self, limit: int = 100_000) -> Arrays:
        arrays, rows = _read(self.conn, limit, lock=True)
        for r in rows:
            self._rows[r[0]] = r
        self.claimed += len(arrays[0])
        return arrays

    def mark_consumed(self, row_ids: Any) -> None:
        ids = np.unique(np.asarray(row_ids, dtype=np.int64).reshape(-1))
        ids = ids[np.isin(ids >> ROW_BITS, list(self._rows))]  # only rows of this claim
        if ids.size == 0:
            return
        rows = [self._rows[b] for b in sorted({int(i) >> ROW_BITS for i in ids})]
        # re-read the flags this transaction already wrote for these batches
        fresh = self.conn.execute(
            "SELECT id, consumed FROM rlsched_progress WHERE id = ANY(%s)",
            ([r[0] for r in rows],),
        ).fetchall()
        flags = {int(i): bytes(c) for i, c in fresh}
        rows = [(b, n, flags.get(b, cb)) for b, n, cb in rows]
        self._newly += _mark(self.conn, rows, ids)
        self.consumed_ids.update(int(i) for i in ids)

    def record_outcome(self, status: str, reason: str, from_version: int | None,
                       version: int | None) -> None:  # fmt: skip
        self._outcome = (status, reason, from_version, version)

    def _finish(self) -> None:
        """Counters and the outcome, last: the counter row is locked only for the commit."""
        if self._newly:
            self.conn.execute(
                "UPDATE rlsched_counters SET pending = pending - %s WHERE slot = 0",
                (self._newly,),
            )
        if self._outcome is not None or self.claimed:
            status, reason, frm, ver = self._outcome or ("none", "", None, None)
            self.conn.execute(
                "INSERT INTO rlsched_learner_runs(finished, learner, status, reason, "
                "from_version, version, claimed, consumed) VALUES (%s,%s,%s,%s,%s,%s,%s,%s)",
                (time.time(), self.learner, status, reason[:2000], frm, ver, self.claimed,
                 len(self.consumed_ids)),
            )  # fmt: skip
