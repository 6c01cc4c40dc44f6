"""Optional dependencies: each extra of ``pyproject.toml`` and what it installs, and
:func:`require`, which imports one where it is first needed or raises one line naming the
install command (``rlsched`` prints it and exits with status 2).

The core (``pip install rlsched``) holds what the envs, the policies and training need. The
extras add the rest: ``serve`` (the HTTP / gRPC servers), ``solver`` (OR-Tools CP-SAT),
``workflows`` (WfCommons' generator), ``ray`` (``rlsched sweep``) and ``tensorboard`` (training
curves); ``dev`` pulls them all with the test tools.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
from collections.abc import Iterator
from types import ModuleType
from typing import Any

from rlsched.errors import MissingDependencyError

#: extra -> what it is for (the words of the error message)
EXTRAS = {
    "serve": "serving (rlsched serve)",
    "solver": "the CP-SAT solver (OR-Tools)",
    "workflows": "WfCommons workflow generation (wfcommons: datasets)",
    "ray": "Ray Tune (rlsched sweep)",
    "tensorboard": "TensorBoard training logs",
}


#: extra -> the modules it installs that rlsched imports (checked by :func:`require_extra`)
EXTRA_MODULES = {
    "serve": (
        "fastapi",
        "uvicorn",
        "httptools",
        "anyio",
        "grpc",
        "grpc_health",
        "google.protobuf",
        "prometheus_client",
    ),
    "solver": ("ortools",),
    "workflows": ("wfcommons",),
    "ray": ("ray.tune",),
    "tensorboard": ("tensorboard",),
}


def install_hint(extra: str) -> str:
    """The install command of ``extra``: ``pip install 'rlsched[extra]'``."""
    return f"pip install 'rlsched[{extra}]'"


def require(module: str, extra: str, what: str | None = None) -> ModuleType:
    """``importlib.import_module(module)``, or :class:`MissingDependencyError` naming
    ``pip install 'rlsched[extra]'`` when it (or one of its own imports) is missing."""
    if extra not in EXTRAS:
        raise ValueError(f"unknown extra {extra!r}; extras: {', '.join(EXTRAS)}")
    try:
        return importlib.import_module(module)
    except ImportError as e:
        missing = e.name or module
        raise MissingDependencyError(
            f"{what or EXTRAS[extra]} needs {missing}, which is not installed: "
            f"{install_hint(extra)}"
        ) from e


def imported(module: str) -> ModuleType | None:
    """``module``, or None where it (or one of its own imports) is missing: an optional fast
    path with a plain one beside it (the numba kernels)."""
    try:
        return importlib.import_module(module)
    except ImportError:
        return None


@functools.cache
def loaded(module: str) -> ModuleType | None:
    """:func:`imported`, looked for once per process: for a compiled path asked for at every
    decision (where the module is missing, each import would search the path again)."""
    return imported(module)


@contextlib.contextmanager
def numpy_path(*modules: Any) -> Iterator[None]:
    """Within the block, the numpy paths of ``modules`` (modules with a ``COMPILED`` switch)
    run where numba would run their compiled kernels: each switch off, then back as it was.
    How the tests and benchmarks compare the two paths."""
    before = [m.COMPILED for m in modules]
    for m in modules:
        m.COMPILED = False
    try:
        yield
    finally:
        for m, was in zip(modules, before, strict=True):
            m.COMPILED = was


def available(module: str) -> bool:
    """Whether ``module`` imports (for optional features that are skipped, not refused)."""
    return imported(module) is not None


def require_extra(extra: str, what: str | None = None) -> None:
    """:func:`require` every module of ``extra`` (:data:`EXTRA_MODULES`)."""
    for module in EXTRA_MODULES[extra]:
        require(module, extra, what)
