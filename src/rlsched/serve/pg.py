"""The PostgreSQL connection of the replicated mode: URL checks, the pool, the schema.

A store URL names the server and the database (``postgresql://user@host:port/db`` or
``postgresql:///?service=NAME``); the password comes from ``RLSCHED_STORE_PASSWORD`` or
libpq's own files (a service file, ``~/.pgpass``), never from the URL, which shows up in
process lists and shell histories.

The schema is created and migrated by whoever opens the database first (under an advisory
lock, so replicas starting together do not race); its version is recorded in
``rlsched_schema``. A database newer than this code is refused with one line naming both
versions: an old replica must not write rows a newer one reads differently.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from rlsched.errors import ConfigError

log = logging.getLogger("rlsched.serve")

SCHEMES = ("postgresql://", "postgres://")
PASSWORD_ENV = "RLSCHED_STORE_PASSWORD"
SCHEMA_VERSION = 1
_MIGRATION_LOCK = 0x726C73636865  # pg_advisory_xact_lock key while creating / migrating
LEARNER_LOCK = 0x726C736C726E  # pg_try_advisory_lock key of the one active learner
NOTIFY_CHANNEL = "rlsched_registry"
POOL_TIMEOUT_S = 2.0  # a request waits at most this for a connection, then 503
CONNECT_TIMEOUT_S = 2


def is_pg_url(url: str | os.PathLike[str] | None) -> bool:
    return url is not None and str(url).startswith(SCHEMES)


def conninfo(url: str, application: str = "rlsched") -> str:
    """The libpq connection string for ``url`` plus the password from the environment;
    :class:`ConfigError` (one line) for a password in the URL or a malformed URL."""
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    try:
        params = conninfo_to_dict(url)
    except Exception as e:
        raise ConfigError(f"--store: not a PostgreSQL URL ({type(e).__name__})") from None
    if "password" in params:
        raise ConfigError(
            "--store: the URL carries a password; remove it and set RLSCHED_STORE_PASSWORD "
            "(or use a libpq service or password file): a URL shows up in process lists"
        )
    extra: dict[str, Any] = {"application_name": application}
    extra.setdefault("connect_timeout", CONNECT_TIMEOUT_S)
    pw = os.environ.get(PASSWORD_ENV)
    if pw:
        extra["password"] = pw
    return make_conninfo(url, **{k: v for k, v in extra.items() if k not in params})


def redact(url: str) -> str:
    """``url`` for logs and messages (user, host, port, database; never a password)."""
    try:
        from psycopg.conninfo import conninfo_to_dict

        p = conninfo_to_dict(url)
    except Exception:
        return "postgresql://..."
    if "service" in p and "host" not in p:
        return f"postgresql service {p['service']}"
    host = p.get("host", "localhost")
    return f"postgresql://{p.get('user', '')}@{host}:{p.get('port', 5432)}/{p.get('dbname', '')}"


_DDL_V1 = (
    """CREATE TABLE IF NOT EXISTS rlsched_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS rlsched_batches (
        id BIGSERIAL PRIMARY KEY,
        created DOUBLE PRECISION NOT NULL,
        n INTEGER NOT NULL,
        state_dim INTEGER NOT NULL,
        model_version INTEGER,
        states BYTEA NOT NULL,
        actions BYTEA NOT NULL,
        rewards BYTEA NOT NULL,
        dones BYTEA NOT NULL
    )""",
    """CREATE INDEX IF NOT EXISTS rlsched_batches_created ON rlsched_batches(created)""",
    """CREATE TABLE IF NOT EXISTS rlsched_progress (
        id BIGINT PRIMARY KEY REFERENCES rlsched_batches(id) ON DELETE CASCADE,
        consumed BYTEA NOT NULL,
        remaining INTEGER NOT NULL
    )""",
    """CREATE INDEX IF NOT EXISTS rlsched_progress_open ON rlsched_progress(id)
        WHERE remaining > 0""",
    # counters in slots: concurrent appends update different rows (no hot row lock)
    """CREATE TABLE IF NOT EXISTS rlsched_counters (
        slot INTEGER PRIMARY KEY,
        rows BIGINT NOT NULL,
        pending BIGINT NOT NULL
    )""",
    """INSERT INTO rlsched_counters(slot, rows, pending)
        SELECT s, 0, 0 FROM generate_series(0, 7) AS s ON CONFLICT DO NOTHING""",
    """CREATE TABLE IF NOT EXISTS rlsched_idempotency (
        key TEXT PRIMARY KEY,
        digest TEXT NOT NULL,
        batch_id BIGINT NOT NULL,
        n INTEGER NOT NULL,
        model_version INTEGER,
        created DOUBLE PRECISION NOT NULL
    )""",
    """CREATE INDEX IF NOT EXISTS rlsched_idempotency_created ON rlsched_idempotency(created)""",
    """CREATE TABLE IF NOT EXISTS rlsched_learner_runs (
        id BIGSERIAL PRIMARY KEY,
        finished DOUBLE PRECISION NOT NULL,
        learner TEXT NOT NULL,
        status TEXT NOT NULL,
        reason TEXT NOT NULL,
        from_version INTEGER,
        version INTEGER,
        claimed INTEGER NOT NULL,
        consumed INTEGER NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS rlsched_versions (
        version INTEGER PRIMARY KEY,
        created_unix DOUBLE PRECISION NOT NULL,
        parent INTEGER,
        note TEXT NOT NULL DEFAULT '',
        info JSONB NOT NULL,
        bundle_json TEXT NOT NULL,
        weights BYTEA NOT NULL,
        pinned BOOLEAN NOT NULL DEFAULT FALSE
    )""",
    """CREATE TABLE IF NOT EXISTS rlsched_registry (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        current INTEGER,
        history INTEGER[] NOT NULL DEFAULT '{}'
    )""",
    """INSERT INTO rlsched_registry(id, current) VALUES (1, NULL) ON CONFLICT DO NOTHING""",
    """CREATE TABLE IF NOT EXISTS rlsched_activations (
        id BIGSERIAL PRIMARY KEY,
        at DOUBLE PRECISION NOT NULL,
        version INTEGER NOT NULL,
        previous INTEGER,
        action TEXT NOT NULL
    )""",
)

# MIGRATIONS[k] takes the schema from version k to k + 1
MIGRATIONS: dict[int, tuple[str, ...]] = {0: _DDL_V1}


def ensure_schema(conn: Any, code_version: int = SCHEMA_VERSION) -> int:
    """Create or migrate the schema to ``code_version`` in one transaction; returns the
    version found. :class:`ConfigError` when the database is newer than the code."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
        conn.execute(
            "CREATE TABLE IF NOT EXISTS rlsched_schema (id INTEGER PRIMARY KEY CHECK (id = 1), "
            "version INTEGER NOT NULL)"
        )
        row = conn.execute("SELECT version FROM rlsched_schema WHERE id = 1").fetchone()
        found = 0 if row is None else int(row[0])
        if found > code_version:
            raise ConfigError(
                f"the database schema is version {found}, newer than this rlsched's "
                f"version {code_version}: upgrade rlsched before starting it on this database"
            )
        for v in range(found, code_version):
            for stmt in MIGRATIONS[v]:
                conn.execute(stmt)
        conn.execute(
            "INSERT INTO rlsched_schema(id, version) VALUES (1, %s) ON CONFLICT (id) DO UPDATE "
            "SET version = EXCLUDED.version",
            (code_version,),
        )
        if found < code_version:
            log.info("database schema migrated from version %d to %d", found, code_version)
        return found


class Database:
    """A psycopg connection pool over one store URL, with the schema ensured on open.

    ``timeout``: how long a caller waits for a connection before :class:`StoreUnavailable`
    (a down database costs a request at most this); broken connections are dropped at
    checkout and the pool reconnects by itself when the server returns."""

    def __init__(
        self, url: str, *, max_size: int = 8, timeout: float = POOL_TIMEOUT_S,
        application: str = "rlsched", migrate: bool = True,
    ) -> None:  # fmt: skip
        import psycopg
        from psycopg_pool import ConnectionPool

        self.url = url
        self.conninfo = conninfo(url, application)
        self.where = redact(url)
        try:  # one direct connection first: a wrong URL or a newer schema fails here, clearly
            with psycopg.connect(self.conninfo, autocommit=True) as c:
                if migrate:
                    ensure_schema(c)
        except psycopg.Error as e:
            msg = " ".join(str(e).split()) or type(e).__name__
            raise ConfigError(f"cannot open the store {self.where}: {msg}") from None
        self.pool = ConnectionPool(
            self.conninfo, min_size=1, max_size=max_size, timeout=timeout,
            kwargs={"autocommit": True}, check=ConnectionPool.check_connection,
            reconnect_timeout=timeout, name="rlsched", open=True,
        )  # fmt: skip

    def connection(self) -> Any:
        """A pooled connection (context manager; autocommit, use ``conn.transaction()``)."""
        return self.pool.connection()

    def close(self) -> None:
        self.pool.close()
