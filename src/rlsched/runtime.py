"""Process-wide runtime settings: compute threads, versions and git commit for run records."""

from __future__ import annotations

import os
import platform
import subprocess
from importlib import metadata
from pathlib import Path

_TRACKED = (
    "rlsched",
    "numpy",
    "gymnasium",
    "torch",
    "stable-baselines3",
    "sb3-contrib",
    "wfcommons",
)


_blas_threads: int | None = None


def set_torch_threads(n: int | None = None) -> int:
    """Use one thread for torch and for numpy's BLAS unless told otherwise
    (``RLSCHED_TORCH_THREADS`` or ``n``).

    On small networks more threads only cost: two torch threads run up to 15x slower than one
    on 2-core machines, and OpenBLAS's default of one thread per core made the numpy acting
    path's 101x128 by 128x128 product 1.8x slower (78 against 44 us here). BLAS is limited
    through threadpoolctl, as it reads its thread count when numpy loads, before any of
    our code runs.
    """
    global _blas_threads
    import torch
    from threadpoolctl import threadpool_limits

    n = n or int(os.environ.get("RLSCHED_TORCH_THREADS", "1"))
    if torch.get_num_threads() != n:
        torch.set_num_threads(n)
    if _blas_threads != n:  # threadpoolctl scans the loaded libraries: once per setting
        threadpool_limits(limits=n, user_api="blas")
        _blas_threads = n
    return n


def versions() -> dict[str, str]:
    out = {"python": platform.python_version(), "platform": platform.platform()}
    for pkg in _TRACKED:
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[pkg] = "not installed"
    return out


def git_commit(path: Path | None = None) -> str | None:
    """The commit of the checkout holding ``path`` (default: this package), with ``+dirty``."""
    where = str(path or Path(__file__).resolve().parent)
    try:
        sha = subprocess.run(
            ["git", "-C", where, "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5
        )
        if sha.returncode != 0:
            return None
        dirty = subprocess.run(
            ["git", "-C", where, "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=5,
        )
        return sha.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return None
