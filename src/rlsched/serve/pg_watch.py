"""A replica follows the registry's current version: ``LISTEN rlsched_registry`` on a
dedicated connection (an activation's ``NOTIFY`` arrives at its commit, so every replica
swaps within milliseconds), and a re-read of the current version every ``poll`` seconds as
the fallback for notifications lost while that connection was down. A down database only
delays the follow-up: the served model stays, and the watcher reconnects by itself."""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from rlsched.serve.pg import NOTIFY_CHANNEL

log = logging.getLogger("rlsched.serve")


class RegistryWatcher:
    def __init__(self, service: Any, conninfo: str, poll: float = 2.0) -> None:
        if not poll > 0:
            raise ValueError(f"poll must be > 0 seconds, got {poll}")
        self.service = service
        self.conninfo = conninfo
        self.poll = float(poll)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.notifications = 0
        self.connected = False
        self._conn: Any = None

    def start(self) -> RegistryWatcher:
        self._thread = threading.Thread(target=self._loop, name="rlsched-registry-watch",
                                        daemon=True)  # fmt: skip
        self._thread.start()
        return self

    def _follow(self) -> None:
        """Serve the registry's current version if it is not the one served."""
        try:
            self.service.reload()
        except Exception as e:  # the database may be down: keep serving, try again later
            log.warning("registry watch: could not re-read the current version: %s", e)

    def _loop(self) -> None:
        import psycopg

        backoff = 0.2
        while not self._stop.is_set():
            try:
                with psycopg.connect(self.conninfo, autocommit=True) as conn:
                    self._conn = conn
                    conn.execute(f"LISTEN {NOTIFY_CHANNEL}")
                    self.connected = True
                    backoff = 0.2
                    self._follow()  # whatever changed while not listening
                    next_read = time.monotonic() + self.poll
                    while not self._stop.is_set():
                        got = False
                        # short waits: stop() is noticed within a quarter second
                        for _ in conn.notifies(timeout=min(0.25, self.poll), stop_after=1):
                            got = True
                            self.notifications += 1
                        if got or time.monotonic() >= next_read:
                            self._follow()  # on a notification, and every poll (fallback)
                            next_read = time.monotonic() + self.poll
            except Exception as e:
                if self._stop.is_set():
                    break
                if self.connected:
                    log.warning("registry watch: lost the notification connection (%s); "
                                "re-reading every %gs until it is back", e, self.poll)  # fmt: skip
                self.connected = False
                end = time.monotonic() + min(backoff, self.poll)
                self._stop.wait(max(0.0, end - time.monotonic()))
                self._follow()
                backoff = min(backoff * 2, self.poll)
            finally:
                self._conn = None
                self.connected = False

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
