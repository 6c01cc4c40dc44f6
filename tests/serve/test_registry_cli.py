"""``rlsched registry list / activate / rollback`` on a folder (--registry) and on the
database of the replicas (--store)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from rlsched.serve.bundle import PolicyBundle
from rlsched.serve.registry import ModelRegistry


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from rlsched.cli import main; main()", "registry", *args],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip


@pytest.mark.parametrize("backend", ["folder", "postgresql"])
def test_list_activate_rollback(backend: str, tmp_path: Path, request: pytest.FixtureRequest):
    if backend == "folder":
        reg = ModelRegistry(tmp_path / "reg")
        where = ["--registry", str(tmp_path / "reg")]
    else:
        from rlsched.serve.pg import Database
        from rlsched.serve.pg_registry import PgRegistry

        url = request.getfixturevalue("pg_url")
        reg = PgRegistry(Database(url))
        where = ["--store", url]
    for s in range(3):
        reg.publish(PolicyBundle.fresh(10, 10, seed=s), note=f"seed {s}", activate=s == 0)
    r = _cli("activate", "3", *where)
    assert r.returncode == 0 and "current version: 3" in r.stdout, r.stderr
    assert reg.current_version() == 3
    r = _cli("list", *where)
    assert r.returncode == 0 and "seed 2" in r.stdout
    assert [ln for ln in r.stdout.splitlines() if "*" in ln and " 3 " in ln]
    r = _cli("rollback", *where)
    assert r.returncode == 0 and "current version: 1" in r.stdout
    r = _cli("rollback", *where)
    assert r.returncode == 2 and "nothing to roll back" in r.stderr
    r = _cli("activate", "9", *where)
    assert r.returncode == 2 and "version 9 is not in the registry" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    if backend == "postgresql":
        reg.db.close()
