"""The sweep and leaderboard commands' errors: one line, exit status 2."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rlsched.cli import app
from tests.sweep.conftest import CI_SWEEP

runner = CliRunner()


def test_sweep_without_ray_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for name in [m for m in sys.modules if m == "ray" or m.startswith("ray.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now raises ImportError
    res = runner.invoke(app, ["sweep", str(CI_SWEEP), "--out", str(tmp_path / "x")])
    assert res.exit_code == 2
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "pip install 'rlsched[ray]'" in lines[0], res.stderr
    assert not (tmp_path / "x").exists()


def _rlsched(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", "from rlsched.cli import main; main()", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_bad_sweep_config_and_empty_results_exit_2(tmp_path: Path) -> None:
    pytest.importorskip("ray.tune")
    bad = tmp_path / "bad.yaml"
    bad.write_text("envs: [{id: rlsched/Nope-v0}]\npolicies: [first_fit]\n")
    proc = _rlsched("sweep", str(bad), "--out", str(tmp_path / "out"))
    assert proc.returncode == 2
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "bad.yaml" in lines[0] and "Nope-v0" in lines[0], proc.stderr
    proc = _rlsched("leaderboard", str(tmp_path / "nothing"))
    assert proc.returncode == 2 and "no finished trials" in proc.stderr
