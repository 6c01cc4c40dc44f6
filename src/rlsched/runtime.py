"""Process-wide runtime settings: torch threads, versions and git commit for run records."""

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


def set_torch_threads(n: int | None = None) -> int:
    """Use one torch thread unless told otherwise (``RLSCHED_TORCH_THREADS`` or ``n``).

    On small MLPs two threads run up to 15x slower than one on 2-core machines.
    """
    import torch

    n = n or int(os.environ.get("RLSCHED_TORCH_THREADS", "1"))
    if torch.get_num_threads() != n:
        torch.set_num_threads(n)
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
