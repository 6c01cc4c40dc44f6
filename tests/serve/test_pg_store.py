"""What only the PostgreSQL store does: URL and schema-version refusals, a claim that
commits with its outcome or not at all (also when its process is killed)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from typing import Any

import numpy as np
import psycopg
import pytest

from rlsched.errors import ConfigError
from rlsched.serve.pg import SCHEMA_VERSION, Database, conninfo
from rlsched.serve.pg_store import PgExperienceStore


def _fill(st: PgExperienceStore, batches: int = 6, n: int = 10) -> None:
    rng = np.random.default_rng(0)
    for _ in range(batches):
        st.append(
            rng.random((n, 6)), rng.integers(0, 6, n), rng.normal(size=n), rng.random(n) < 0.1
        )


def test_password_in_url_is_refused_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match="RLSCHED_STORE_PASSWORD") as e:
        conninfo("postgresql://u:hunter2@127.0.0.1/db")
    assert "hunter2" not in str(e.value) and "\n" not in str(e.value)
    monkeypatch.setenv("RLSCHED_STORE_PASSWORD", "s3cret")
    assert "password=s3cret" in conninfo("postgresql://u@127.0.0.1/db")


def test_cli_refuses_a_password_in_the_url() -> None:
    r = subprocess.run(
        [sys.executable, "-c", "from rlsched.cli import main; main()", "serve", "--store",
         "postgresql://u:hunter2@127.0.0.1:1/db", "--state-dim", "10", "--action-dim", "10"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "RLSCHED_STORE_PASSWORD" in lines[0] and "hunter2" not in r.stderr


def test_schema_is_created_with_its_version_and_a_newer_database_is_refused(pg_url: str) -> None:
    Database(pg_url).close()
    with psycopg.connect(pg_url, autocommit=True) as c:
        assert c.execute("SELECT version FROM rlsched_schema").fetchone()[0] == SCHEMA_VERSION
        Database(pg_url).close()  # opening again: no change
        c.execute("UPDATE rlsched_schema SET version = %s", (SCHEMA_VERSION + 41,))
    with pytest.raises(ConfigError) as e:
        Database(pg_url)
    msg = str(e.value)
    assert f"version {SCHEMA_VERSION + 41}" in msg and f"version {SCHEMA_VERSION}" in msg
    r = subprocess.run(
        [sys.executable, "-c", "from rlsched.cli import main; main()", "serve", "--store",
         pg_url, "--state-dim", "10", "--action-dim", "10"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    assert f"version {SCHEMA_VERSION + 41}" in r.stderr


def test_a_failed_run_consumes_nothing_and_records_nothing(pg_url: str) -> None:
    st = PgExperienceStore(Database(pg_url))
    _fill(st)
    with pytest.raises(RuntimeError), st.consumption("t") as view:
        ids = view.unconsumed(1000)[0]
        view.mark_consumed(ids)
        view.record_outcome("published", "x", 1, 2)
        raise RuntimeError("the learner failed mid-run")
    assert st.count(consumed=False) == 60 and st.learner_runs() == []
    with st.consumption("t") as view:
        view.mark_consumed(view.unconsumed(1000)[0][:25])
        view.record_outcome("rejected", "gate", 1, None)
    runs = st.learner_runs()
    assert [(r["status"], r["claimed"], r["consumed"]) for r in runs] == [("rejected", 60, 25)]
    assert st.count(consumed=True) == 25
    st.close()


def test_a_consumer_killed_mid_run_leaves_its_claim_unconsumed(pg_url: str) -> None:
    st = PgExperienceStore(Database(pg_url))
    _fill(st)
    code = textwrap.dedent(f"""
        import time
        from rlsched.serve.pg import Database
        from rlsched.serve.pg_store import PgExperienceStore
        st = PgExperienceStore(Database({pg_url!r}))
        with st.consumption("doomed") as view:
            ids = view.unconsumed(1000)[0]
            view.mark_consumed(ids)
            print(len(ids), flush=True)
            time.sleep(600)
    """)
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout is not None and p.stdout.readline().strip() == "60"
        with st.consumption("other") as view:  # its claim: every batch is locked
            assert len(view.unconsumed(1000)[0]) == 0
    finally:
        p.kill()
        p.wait(10)
    deadline = time.monotonic() + 10  # the server ends the session when the socket closes
    while True:
        with st.consumption("other") as view:
            ids = view.unconsumed(1000)[0]
            if len(ids) == 60:
                view.mark_consumed(ids)
                view.record_outcome("published", "ok", 1, 2)
                break
        assert time.monotonic() < deadline, "the killed consumer's rows stayed locked"
        time.sleep(0.1)
    assert st.count(consumed=True) == 60
    assert [r["learner"] for r in st.learner_runs()] == ["other"]
    st.close()


def test_database_down_is_store_unavailable_fast_and_names_no_password(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rlsched.serve.pg_local import _free_port
    from rlsched.serve.store import StoreUnavailable

    url = f"postgresql://nobody@127.0.0.1:{_free_port()}/none"
    monkeypatch.setenv("RLSCHED_STORE_PASSWORD", "pw-not-shown")
    t0 = time.monotonic()
    with pytest.raises(ConfigError) as e:
        Database(url)
    assert time.monotonic() - t0 < 10 and "pw-not-shown" not in str(e.value)
    assert isinstance(StoreUnavailable("x"), RuntimeError)


def test_learn_needs_a_postgresql_store() -> None:
    r = subprocess.run(
        [sys.executable, "-c", "from rlsched.cli import main; main()", "learn", "--store",
         "runs/x.sqlite"], capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    assert "postgresql://" in r.stderr and "--learn" in r.stderr
