"""The model registry on PostgreSQL: what :class:`~rlsched.serve.registry.ModelRegistry`
does in a folder, shared by every replica, the learner and ``rlsched registry --store``.

Tables: ``rlsched_versions`` (number, parent, note, info, the bundle's ``bundle.json`` and
``weights.npz`` bytes, pinned), ``rlsched_registry`` (one row: the current version and the
activation history used by rollback) and ``rlsched_activations`` (an append-only log of
every activation, rollback and publish-activate).

Every write takes the one registry row ``FOR UPDATE`` first, so publishes and activations
serialise as they do on the folder's ``flock``; a compare-and-set publish checks the current
version under that lock, in the same transaction as its insert. A change of the current
version sends ``NOTIFY rlsched_registry`` in its transaction (delivered at commit): replicas
listening swap models at once (:mod:`rlsched.serve.pg_watch`).
"""

from __future__ import annotations

import builtins
import contextlib
import json
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rlsched.runtime import git_commit, versions
from rlsched.serve.bundle import PolicyBundle
from rlsched.serve.pg import NOTIFY_CHANNEL, Database
from rlsched.serve.pg_store import _db_errors
from rlsched.serve.registry import HISTORY_LIMIT, StaleVersion

_UNSET: Any = object()


def bundle_bytes(bundle: PolicyBundle) -> tuple[str, bytes]:
    """``(bundle.json text, weights.npz bytes)`` of ``bundle``."""
    with tempfile.TemporaryDirectory(prefix="rlsched-bundle-") as d:
        bundle.save(d)
        return (Path(d) / "bundle.json").read_text(), (Path(d) / "weights.npz").read_bytes()


def bundle_from_bytes(bundle_json: str, weights: bytes) -> PolicyBundle:
    with tempfile.TemporaryDirectory(prefix="rlsched-bundle-") as d:
        (Path(d) / "bundle.json").write_text(bundle_json)
        (Path(d) / "weights.npz").write_bytes(bytes(weights))
        return PolicyBundle.load(d)


class PgRegistry:
    """The registry on a :class:`~rlsched.serve.pg.Database`; the same methods and errors as
    :class:`~rlsched.serve.registry.ModelRegistry` (``KeyError`` for an unknown version,
    ``ValueError`` for nothing to roll back to, :class:`StaleVersion` for a lost
    compare-and-set)."""

    def __init__(self, db: Database, conn: Any = None) -> None:
        self.db = db
        self.root = db.where  # what messages call the registry's location
        self.where = db.where
        self._conn = conn  # set: every call runs on this connection (a learner's transaction)

    def within(self, consumption: Any) -> PgRegistry:
        """This registry on the transaction of a store :meth:`consumption` (so a learner's
        publish commits with the experiences it consumed); itself for other stores."""
        conn = getattr(consumption, "conn", None)
        return self if conn is None else PgRegistry(self.db, conn)

    @contextlib.contextmanager
    def _tx(self) -> Iterator[Any]:
        if self._conn is not None:
            with self._conn.transaction():  # a savepoint inside the learner's transaction
                yield self._conn
            return
        with self.db.connection() as conn, conn.transaction():
            yield conn

    @contextlib.contextmanager
    def _read(self) -> Iterator[Any]:
        if self._conn is not None:
            yield self._conn
            return
        with self.db.connection() as conn:
            yield conn

    @staticmethod
    def _pointer(conn: Any, lock: bool = False) -> tuple[int | None, list[int]]:
        row = conn.execute(
            "SELECT current, history FROM rlsched_registry WHERE id = 1"
            + (" FOR UPDATE" if lock else "")
        ).fetchone()
        return (None if row[0] is None else int(row[0])), [int(v) for v in row[1] or []]

    @staticmethod
    def _set_current(conn: Any, version: int, history: list[int], previous: int | None,
                     action: str) -> None:  # fmt: skip
        conn.execute(
            "UPDATE rlsched_registry SET current = %s, history = %s WHERE id = 1",
            (version, history[-HISTORY_LIMIT:]),
        )
        conn.execute(
            "INSERT INTO rlsched_activations(at, version, previous, action) "
            "VALUES (%s, %s, %s, %s)", (time.time(), version, previous, action),
        )  # fmt: skip
        conn.execute("SELECT pg_notify(%s, %s)", (NOTIFY_CHANNEL, str(version)))

    def _check(self, conn: Any, version: int) -> None:
        row = conn.execute(
            "SELECT 1 FROM rlsched_versions WHERE version = %s", (int(version),)
        ).fetchone()
        if row is None:
            known = ", ".join(str(v) for v in self._versions(conn)) or "none"
            raise KeyError(
                f"model version {version} is not in the registry at {self.root} "
                f"(known versions: {known})"
            )

    @staticmethod
    def _versions(conn: Any) -> list[int]:
        return [int(r[0]) for r in conn.execute(
            "SELECT version FROM rlsched_versions ORDER BY version").fetchall()]  # fmt: skip

    # ------------------------------------------------------------------ writes
    @_db_errors
    def publish(
        self,
        bundle: PolicyBundle,
        metrics: dict[str, Any] | None = None,
        note: str = "",
        activate: bool = False,
        *,
        parent: int | None = _UNSET,
        expect_current: int | None = _UNSET,
        pin: bool = False,
    ) -> int:
        """As :meth:`ModelRegistry.publish`: the next version; with ``expect_current``, only
        if the current version is still that one (else :class:`StaleVersion`, nothing
        written)."""
        bundle_json, weights = bundle_bytes(bundle)
        record = {
            "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "created_unix": time.time(),
            "metrics": metrics or {},
            "note": note,
            "state_dim": bundle.state_dim,
            "action_dim": bundle.action_dim,
            "hidden": list(bundle.hidden),
            "versions": versions(),
            "git_commit": git_commit(),
        }
        with self._tx() as conn:
            cur, history = self._pointer(conn, lock=True)
            if expect_current is not _UNSET and cur != expect_current:
                raise StaleVersion(expect_current, cur)
            n = int(conn.execute(
                "SELECT COALESCE(MAX(version), 0) + 1 FROM rlsched_versions").fetchone()[0])
            if parent is _UNSET:
                parent = cur
            info = {"version": n, "parent": parent, **record}
            conn.execute(
                "INSERT INTO rlsched_versions(version, created_unix, parent, note, info, "
                "bundle_json, weights, pinned) VALUES (%s,%s,%s,%s,%s,%s,%s,%s)",
                (n, record["created_unix"], parent, note, json.dumps(info, default=str),
                 bundle_json, weights, bool(pin)),
            )  # fmt: skip
            if activate:
                if not history or history[-1] != n:
                    history.append(n)
                self._set_current(conn, n, history, cur, "publish")
            return n

    @_db_errors
    def activate(self, version: int) -> None:
        """Make ``version`` current (``KeyError`` if unknown); it is pinned."""
        version = int(version)
        with self._tx() as conn:
            cur, history = self._pointer(conn, lock=True)
            self._check(conn, version)
            if not history or history[-1] != version:
                history.append(version)
            conn.execute("UPDATE rlsched_versions SET pinned = TRUE WHERE version = %s",
                         (version,))  # fmt: skip
            self._set_current(conn, version, history, cur, "activate")

    @_db_errors
    def rollback(self) -> int:
        """Re-activate the version active before the current one; returns it."""
        with self._tx() as conn:
            cur, history = self._pointer(conn, lock=True)
            if len(history) < 2:
                raise ValueError(
                    f"nothing to roll back to in {self.root}: activation history is {history}"
                )
            history.pop()
            prev = history[-1]
            self._check(conn, prev)
            conn.execute("UPDATE rlsched_versions SET pinned = TRUE WHERE version = %s",
                         (prev,))  # fmt: skip
            self._set_current(conn, prev, history, cur, "rollback")
            return prev

    @_db_errors
    def prune(self, keep: int) -> list[int]:
        """As :meth:`ModelRegistry.prune`: keeps the newest ``keep``, the pinned ones, the
        current one and the rollback target."""
        if keep < 1:
            raise ValueError("keep must be >= 1")
        with self._tx() as conn:
            cur, history = self._pointer(conn, lock=True)
            rows = conn.execute(
                "SELECT version, pinned FROM rlsched_versions ORDER BY version").fetchall()
            versions = [int(v) for v, _ in rows]
            protected = {*versions[-keep:], *(int(v) for v, p in rows if p), *history[-2:]}
            if cur is not None:
                protected.add(cur)
            removed = [v for v in versions if v not in protected]
            if removed:
                conn.execute("DELETE FROM rlsched_versions WHERE version = ANY(%s)", (removed,))
                gone = set(removed)
                conn.execute(
                    "UPDATE rlsched_registry SET history = %s WHERE id = 1",
                    ([h for h in history if h not in gone],),
                )
            return removed

    # ------------------------------------------------------------------ reads
    @_db_errors
    def versions(self) -> list[int]:
        with self._read() as conn:
            return self._versions(conn)

    @_db_errors
    def current_version(self) -> int | None:
        with self._read() as conn:
            return self._pointer(conn)[0]

    @_db_errors
    def history(self) -> list[int]:
        with self._read() as conn:
            return self._pointer(conn)[1]

    @_db_errors
    def pinned(self) -> list[int]:
        with self._read() as conn:
            return [int(r[0]) for r in conn.execute(
                "SELECT version FROM rlsched_versions WHERE pinned ORDER BY version"
            ).fetchall()]  # fmt: skip

    @_db_errors
    def info(self, version: int) -> dict[str, Any]:
        with self._read() as conn:
            row = conn.execute(
                "SELECT info FROM rlsched_versions WHERE version = %s", (int(version),)
            ).fetchone()
            if row is None:
                self._check(conn, version)
            return dict(row[0])

    @_db_errors
    def load(self, version: int | None = None) -> PolicyBundle:
        """The bundle of ``version`` (None: the current one; ``KeyError`` if there is none)."""
        with self._read() as conn:
            if version is None:
                version = self._pointer(conn)[0]
                if version is None:
                    raise KeyError(f"no active model version in the registry at {self.root}")
            row = conn.execute(
                "SELECT bundle_json, weights FROM rlsched_versions WHERE version = %s",
                (int(version),),
            ).fetchone()
            if row is None:
                self._check(conn, version)
        b = bundle_from_bytes(row[0], row[1])
        b.meta["registry_version"] = int(version)
        return b

    @_db_errors
    def list(self) -> list[dict[str, Any]]:
        with self._read() as conn:
            cur = self._pointer(conn)[0]
            rows = conn.execute(
                "SELECT version, info, note, parent FROM rlsched_versions ORDER BY version"
            ).fetchall()
        return [
            {
                "version": int(v),
                "created": (info or {}).get("created"),
                "metrics": (info or {}).get("metrics", {}),
                "note": note or "",
                "parent": parent,
                "active": int(v) == cur,
            }
            for v, info, note, parent in rows
        ]

    @_db_errors
    def activations(self) -> builtins.list[dict[str, Any]]:  # (list: the method above)
        """The activation log, oldest first."""
        with self._read() as conn:
            rows = conn.execute(
                "SELECT at, version, previous, action FROM rlsched_activations ORDER BY id"
            ).fetchall()
        return [{"at": a, "version": v, "previous": p, "action": act} for a, v, p, act in rows]
