"""The layer contract (``[tool.importlinter]`` in pyproject.toml, docs/architecture.md) and no
import cycles anywhere in the package: both on the real package, and both shown to fail on a
copy of it that adds an upward import / a cycle."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"

pytest.importorskip("importlinter")
pytest.importorskip("grimp")

# runs in a fresh interpreter whose sys.path starts with the given source folder: grimp finds
# the package through importlib, so the copy must not be shadowed by the rlsched imported here
CYCLES = textwrap.dedent(
    """
    import json, sys
    import grimp

    graph = grimp.build_graph("rlsched", cache_dir=None)
    edges = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in graph.modules}
    # Tarjan's strongly connected components, iteratively
    index, low, on, stack, out, n = {}, {}, set(), [], [], [0]
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(edges[root]))]
        index[root] = low[root] = n[0]; n[0] += 1; stack.append(root); on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = n[0]; n[0] += 1; stack.append(w); on.add(w)
                    work.append((w, iter(edges.get(w, []))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop(); on.discard(w); comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1 or v in edges.get(v, []):
                    out.append(sorted(comp))
    print(json.dumps(sorted(out)))
    """
)


def _env(src: Path) -> dict[str, str]:
    import os

    return {**os.environ, "PYTHONPATH": str(src)}


def lint_imports(src: Path, config_dir: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` over the package under ``src`` with the contracts in ``config_dir``."""
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "from importlinter.cli import lint_imports_command as c; c()",
            "--no-cache",
        ],
        cwd=config_dir,
        env=_env(src),
        capture_output=True,
        text=True,
        timeout=300,
    )


def import_cycles(src: Path) -> list[list[str]]:
    """Every set of modules of the package under ``src`` that import each other in a cycle."""
    r = subprocess.run(
        [sys.executable, "-c", CYCLES], env=_env(src), capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.fixture(scope="module")
def package_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of src/rlsched (sources only) with the project's import-linter configuration."""
    root = tmp_path_factory.mktemp("layers")
    shutil.copytree(
        SRC / "rlsched",
        root / "src" / "rlsched",
        ignore=shutil.ignore_patterns("__pycache__", "*.zip", "*.csv", "*.json", "datasets"),
    )
    (root / "src" / "rlsched" / "datasets").mkdir()
    (root / "src" / "rlsched" / "datasets" / "__init__.py").write_text("")
    shutil.copy(ROOT / "pyproject.toml", root / "pyproject.toml")
    return root


def test_the_package_keeps_its_layers() -> None:
    r = lint_imports(SRC, ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "1 kept, 0 broken" in r.stdout


def test_the_package_has_no_import_cycles() -> None:
    assert import_cycles(SRC) == []


def test_the_docs_draw_the_contract() -> None:
    """The picture of the layers in docs/architecture.md is the contract, row by row."""
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    (contract,) = cfg["contracts"]
    want = [[n.strip() for n in layer.split("|")] for layer in contract["layers"]]
    doc = (ROOT / "docs" / "architecture.md").read_text()
    picture = doc.split("## Layers", 1)[1].split("```", 2)[1]
    rows = [
        [cell.split()[0] for cell in line.strip().strip("│").split("│") if cell.strip()]
        for line in picture.splitlines()
        if line.strip().startswith("│")
    ]
    assert rows == want


def test_an_upward_import_breaks_the_contract(package_copy: Path) -> None:
    """core (the bottom domain layer) importing the evaluation layer is refused."""
    bad = package_copy / "src" / "rlsched" / "core" / "upward.py"
    bad.write_text("from rlsched.evaluate import evaluate  # an upward import\n")
    try:
        r = lint_imports(package_copy / "src", package_copy)
    finally:
        bad.unlink()
    print(r.stdout)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "BROKEN" in r.stdout
    assert "rlsched.core.upward -> rlsched.evaluate" in r.stdout


def test_an_import_inside_a_function_counts_too(package_copy: Path) -> None:
    bad = package_copy / "src" / "rlsched" / "data" / "upward.py"
    bad.write_text("def f():\n    from rlsched.policies import registry\n    return registry\n")
    try:
        r = lint_imports(package_copy / "src", package_copy)
    finally:
        bad.unlink()
    assert r.returncode == 1, r.stdout + r.stderr
    assert "rlsched.data.upward -> rlsched.policies" in r.stdout


def test_a_cycle_is_found(package_copy: Path) -> None:
    pkg = package_copy / "src" / "rlsched" / "core"
    (pkg / "cyc_a.py").write_text("from rlsched.core import cyc_b\n")
    (pkg / "cyc_b.py").write_text("def f():\n    from rlsched.core import cyc_a\n")
    try:
        cycles = import_cycles(package_copy / "src")
    finally:
        (pkg / "cyc_a.py").unlink()
        (pkg / "cyc_b.py").unlink()
    assert ["rlsched.core.cyc_a", "rlsched.core.cyc_b"] in cycles
