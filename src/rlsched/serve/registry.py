"""A versioned, file-based model registry with an atomic ``current`` pointer.

Layout::

    ROOT/versions/v0001/weights.npz    the bundle (PolicyBundle.save)
    ROOT/versions/v0001/bundle.json
    ROOT/versions/v0001/version.json   version, created, parent, metrics, note, versions, git
    ROOT/current                       {"version": n, "history": [..., n], "pinned": [...]}
                                       (replaced atomically)
    ROOT/.lock                         flock'd while publishing / activating

A version folder is written completely in a temp folder inside ``ROOT`` and then renamed into
place (``rename`` of a directory is atomic and fails if the target exists and is not empty), so
a reader never sees a half-written version. The pointer is written to ``current.tmp``, fsync'd
and ``os.replace``'d over ``current``, so a reader sees either the old or the new pointer.
Publishers and activators serialise on an ``flock`` of ``ROOT/.lock`` (across processes and,
as each call opens the file itself, across threads); should two ever race past it (e.g. a
file system without ``flock``), the rename still refuses an existing version and the
publisher retries with the next number.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import shutil
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rlsched.runtime import git_commit, versions
from rlsched.serve.bundle import PolicyBundle

_VERSION_DIR = re.compile(r"^v(\d+)$")
HISTORY_LIMIT = 1000


class StaleVersion(Exception):
    """A compare-and-set publish found another current version than the one it expected."""

    def __init__(self, expected: int | None, current: int | None) -> None:
        super().__init__(f"the current version is {current}, not {expected}")
        self.expected = expected
        self.current = current


_UNSET: Any = object()

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX
    fcntl = None  # type: ignore[assignment]


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # pragma: no cover
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


class ModelRegistry:
    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.versions_dir = self.root / "versions"
        self.versions_dir.mkdir(parents=True, exist_ok=True)
        self._pointer = self.root / "current"
        self._thread_lock = threading.Lock()  # for platforms without flock

    # ------------------------------------------------------------------ helpers
    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        if fcntl is None:  # pragma: no cover
            with self._thread_lock:
                yield
            return
        with open(self.root / ".lock", "a+b") as fh:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh.fileno(), fcntl.LOCK_UN)

    def _dir(self, version: int) -> Path:
        return self.versions_dir / f"v{int(version):04d}"

    def versions(self) -> list[int]:
        out = []
        for p in self.versions_dir.iterdir():
            m = _VERSION_DIR.match(p.name)
            if m and (p / "version.json").is_file():
                out.append(int(m.group(1)))
        return sorted(out)

    def _read_pointer(self) -> dict[str, Any]:
        try:
            data = json.loads(self._pointer.read_text())
        except FileNotFoundError:
            return {"version": None, "history": [], "pinned": []}
        history = list(data.get("history", []))
        # a pointer written before pins existed: every version it ever activated is pinned
        pinned = list(data["pinned"]) if "pinned" in data else sorted(set(history))
        return {"version": data.get("version"), "history": history, "pinned": pinned}

    def _write_pointer(
        self, version: int, history: list[int], pinned: list[int] | None = None
    ) -> None:
        tmp = self.root / "current.tmp"
        if pinned is None:
            pinned = self._read_pointer()["pinned"]
        data = json.dumps(
            {"version": version, "history": history[-HISTORY_LIMIT:], "pinned": sorted(pinned)}
        )
        with open(tmp, "w") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self._pointer)
        _fsync_dir(self.root)

    def _check(self, version: int) -> None:
        if not (self._dir(version) / "version.json").is_file():
            known = ", ".join(str(v) for v in self.versions()) or "none"
            raise KeyError(
                f"model version {version} is not in the registry at {self.root} "
                f"(known versions: {known})"
            )

    # ------------------------------------------------------------------ API
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
        """Store ``bundle`` as the next version; returns its number.

        ``parent``: the version it was derived from (default: the current one).
        ``expect_current``: compare-and-set: publish only if the current version is still this
        one, else raise :class:`StaleVersion` (nothing is written). ``pin``: keep it through
        :meth:`prune` (operators' versions; ``activate``/``rollback`` pin theirs too)."""
        tmp = Path(tempfile.mkdtemp(prefix=".publish-", dir=self.root))
        try:
            bundle.save(tmp)
            for f in tmp.iterdir():
                with open(f, "rb") as fh:
                    os.fsync(fh.fileno())
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
            with self._locked():
                ptr = self._read_pointer()
                if expect_current is not _UNSET and ptr["version"] != expect_current:
                    raise StaleVersion(expect_current, ptr["version"])
                n = max(self.versions(), default=0) + 1
                if parent is _UNSET:
                    parent = ptr["version"]
                while True:
                    info = {"version": n, "parent": parent, **record}
                    (tmp / "version.json").write_text(json.dumps(info, indent=2, default=str))
                    try:
                        os.rename(tmp, self._dir(n))
                        break
                    except OSError as e:
                        if (
                            e.errno not in (errno.EEXIST, errno.ENOTEMPTY)
                            and not self._dir(n).exists()
                        ):
                            raise
                        n += 1
                _fsync_dir(self.versions_dir)
                if activate:
                    self._activate_locked(n, pin=pin)
                elif pin:
                    p = self._read_pointer()
                    if p["version"] is not None:
                        self._write_pointer(p["version"], p["history"], [*p["pinned"], n])
            return n
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)

    def _activate_locked(self, version: int, pin: bool = True) -> None:
        self._check(version)
        ptr = self._read_pointer()
        history = ptr["history"]
        if not history or history[-1] != version:
            history.append(version)
        pinned = ptr["pinned"]
        if pin and version not in pinned:
            pinned.append(version)
        self._write_pointer(version, history, pinned)

    def activate(self, version: int) -> None:
        """Make ``version`` the current one (``KeyError`` if it does not exist); it is pinned
        (kept by :meth:`prune`)."""
        with self._locked():
            self._activate_locked(int(version))

    def rollback(self) -> int:
        """Re-activate the version active before the current one; returns it."""
        with self._locked():
            history = self._read_pointer()["history"]
            if len(history) < 2:
                raise ValueError(
                    f"nothing to roll back to in {self.root}: activation history is {history}"
                )
            history.pop()
            prev = history[-1]
            self._check(prev)
            pinned = self._read_pointer()["pinned"]
            self._write_pointer(prev, history, sorted({*pinned, prev}))
            return prev

    def prune(self, keep: int) -> list[int]:
        """Delete old versions: keep the newest ``keep``, every pinned one (published or
        activated by an operator), the current one and the rollback target (the previous
        entry of the history). Returns the deleted versions."""
        if keep < 1:
            raise ValueError("keep must be >= 1")
        removed: list[int] = []
        with self._locked():
            ptr = self._read_pointer()
            versions = self.versions()
            hist = ptr["history"]
            protected = {*versions[-keep:], *ptr["pinned"], *hist[-2:]}
            if ptr["version"] is not None:
                protected.add(int(ptr["version"]))
            for v in versions:
                if v in protected:
                    continue
                trash = self.root / f".trash-v{v}-{os.getpid()}"
                os.rename(self._dir(v), trash)  # gone for readers at once
                shutil.rmtree(trash, ignore_errors=True)
                removed.append(v)
            if removed and ptr["version"] is not None:
                gone = set(removed)
                self._write_pointer(
                    int(ptr["version"]), [h for h in hist if h not in gone], ptr["pinned"]
                )
        return removed

    def current_version(self) -> int | None:
        v = self._read_pointer()["version"]
        return None if v is None else int(v)

    def history(self) -> list[int]:
        return self._read_pointer()["history"]

    def pinned(self) -> list[int]:
        return self._read_pointer()["pinned"]

    def path(self, version: int) -> Path:
        self._check(version)
        return self._dir(version)

    def info(self, version: int) -> dict[str, Any]:
        self._check(version)
        return json.loads((self._dir(version) / "version.json").read_text())

    def load(self, version: int | None = None) -> PolicyBundle:
        """The bundle of ``version`` (None: the current one; ``KeyError`` if there is none)."""
        if version is None:
            version = self.current_version()
            if version is None:
                raise KeyError(f"no active model version in the registry at {self.root}")
        self._check(version)
        b = PolicyBundle.load(self._dir(version))
        b.meta["registry_version"] = int(version)
        return b

    def list(self) -> list[dict[str, Any]]:
        cur = self.current_version()
        out = []
        for v in self.versions():
            info = json.loads((self._dir(v) / "version.json").read_text())
            out.append(
                {
                    "version": v,
                    "created": info.get("created"),
                    "metrics": info.get("metrics", {}),
                    "note": info.get("note", ""),
                    "parent": info.get("parent"),
                    "active": v == cur,
                }
            )
        return out
