"""A throwaway PostgreSQL server on loopback, for the tests, the benchmarks and
``make cluster-demo``: ``initdb`` into a temp folder, ``postgres`` on 127.0.0.1 and a private
unix-socket folder, trust authentication for the one local user, torn down by :meth:`stop`.

PostgreSQL refuses to run as root, so when this process is root the server runs as an
unprivileged user (``nobody`` unless ``RLSCHED_PG_USER`` names another) that owns the folder.
The server binaries are looked up on ``PATH`` and under ``/usr/lib/postgresql/*/bin``
(Debian's ``postgresql`` package).
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path


def find_bin_dir() -> Path | None:
    """The folder holding ``initdb`` and ``postgres`` (newest Debian version first)."""
    for d in sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=_major, reverse=True):
        if os.access(os.path.join(d, "initdb"), os.X_OK):
            return Path(d)
    initdb = shutil.which("initdb")
    if initdb and shutil.which("postgres"):
        return Path(initdb).parent
    return None


def _major(d: str) -> int:
    try:
        return int(Path(d).parent.name)
    except ValueError:
        return 0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class LocalPostgres:
    """One server; :attr:`url` is ``postgresql://USER@127.0.0.1:PORT/rlsched``."""

    root: Path
    bin_dir: Path
    port: int
    os_user: str | None  # the unprivileged user the server runs as (None: this user)
    db_user: str = "rlsched"
    database: str = "rlsched"
    proc: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def url(self) -> str:
        return f"postgresql://{self.db_user}@127.0.0.1:{self.port}/{self.database}"

    def _cmd(self, *args: str) -> list[str]:
        if self.os_user is None:
            return list(args)
        return ["runuser", "-u", self.os_user, "--", *args]

    @classmethod
    def create(
        cls, root: Path | None = None, port: int | None = None, fsync: bool = True
    ) -> LocalPostgres:
        """A new server in ``root`` (default: a new temp folder; when run as root, every
        folder above ``root`` must be traversable by the server's user). ``fsync=False``
        (tests): writes survive a crash of the server, not of the machine; much faster on
        a busy disk (a test creates a database per test)."""
        bin_dir = find_bin_dir()
        if bin_dir is None:
            raise FileNotFoundError(
                "no PostgreSQL server binaries (initdb, postgres) on PATH or under "
                "/usr/lib/postgresql/*/bin; install Debian's postgresql package"
            )
        os_user = None
        if os.geteuid() == 0:
            os_user = os.environ.get("RLSCHED_PG_USER", "nobody")
        root = Path(root or tempfile.mkdtemp(prefix="rlsched-pg-"))
        root.mkdir(parents=True, exist_ok=True)
        pg = cls(root, bin_dir, port or _free_port(), os_user)
        if os_user is not None:
            pw = pwd.getpwnam(os_user)
            os.chmod(root, 0o700)
            os.chown(root, pw.pw_uid, pw.pw_gid)
        (root / "sock").mkdir(exist_ok=True)
        if os_user is not None:
            os.chown(root / "sock", pw.pw_uid, pw.pw_gid)
        r = subprocess.run(
            pg._cmd(str(bin_dir / "initdb"), "-D", str(pg.data), "-U", pg.db_user,
                    "--auth=trust", "-E", "UTF8", "--no-sync", "--locale=C"),
            capture_output=True, cwd=root, text=True,
        )  # fmt: skip
        if r.returncode != 0:
            raise RuntimeError(f"initdb failed in {root}: {(r.stderr or r.stdout).strip()}")
        with open(pg.data / "postgresql.conf", "a") as fh:
            fh.write(
                f"\nport = {pg.port}\nlisten_addresses = '127.0.0.1'\n"
                f"unix_socket_directories = '{root / 'sock'}'\nmax_connections = 200\n"
                f"shared_buffers = 64MB\nfsync = {'on' if fsync else 'off'}\n"
                f"full_page_writes = {'on' if fsync else 'off'}\nlog_min_messages = warning\n"
            )
        pg.start()
        subprocess.run(
            pg._cmd(str(bin_dir / "createdb") if (bin_dir / "createdb").exists() else
                    "createdb", "-h", str(root / "sock"), "-p", str(pg.port),
                    "-U", pg.db_user, pg.database),
            check=True, capture_output=True, cwd=root,
        )  # fmt: skip
        return pg

    def start(self, timeout: float = 30.0) -> None:
        """Start the server (again) and wait until it accepts connections."""
        log = open(self.root / "postgres.log", "ab")  # noqa: SIM115 - the server keeps it
        self.proc = subprocess.Popen(
            self._cmd(str(self.bin_dir / "postgres"), "-D", str(self.data)),
            stdout=log, stderr=subprocess.STDOUT, cwd=self.root, start_new_session=True,
        )  # fmt: skip
        log.close()
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                tail = (self.root / "postgres.log").read_text(errors="replace")[-2000:]
                raise RuntimeError(f"postgres exited with {self.proc.returncode}:\n{tail}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    pass
                if self._ready():
                    return
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("postgres did not accept connections in time")
            time.sleep(0.1)

    def _ready(self) -> bool:
        isready = self.bin_dir / "pg_isready"
        if not isready.exists():
            return True
        r = subprocess.run(
            [str(isready), "-h", "127.0.0.1", "-p", str(self.port), "-U", self.db_user],
            capture_output=True,
        )
        return r.returncode == 0

    def stop(self, mode: str = "fast", timeout: float = 30.0) -> None:
        """Stop the server: ``fast`` (SIGINT: abort sessions, clean shutdown) or
        ``immediate`` (SIGQUIT: a crash, recovered from the WAL at the next start)."""
        p = self.proc
        if p is None or p.poll() is not None:
            return
        # the server runs under runuser: signal the postmaster itself (its pid file)
        sig = {"fast": signal.SIGINT, "immediate": signal.SIGQUIT, "smart": signal.SIGTERM}[mode]
        pid = self._postmaster_pid()
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid if pid else p.pid, sig)
        try:
            p.wait(timeout)
        except subprocess.TimeoutExpired:
            if pid:
                os.kill(pid, signal.SIGKILL)
            p.kill()
            p.wait(5)

    def _postmaster_pid(self) -> int | None:
        try:
            return int((self.data / "postmaster.pid").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def destroy(self) -> None:
        self.stop()
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> LocalPostgres:
        return self

    def __exit__(self, *exc: object) -> None:
        self.destroy()
