"""New work reaches the runners of other processes at once: PostgreSQL's LISTEN/NOTIFY.

A runner polls the operations table (``RunnerConfig.poll_seconds``), so a prompt accepted
by a web process would wait up to a poll for a runner elsewhere. ``work_announce`` sends a
notification inside the accepting transaction, which PostgreSQL delivers only when that
transaction commits (and not at all on a rollback); ``WorkListener`` hears it on a
connection of its own and wakes the runners of its process. A lost notification costs
nothing but the poll it would have saved: the table stays the queue. On SQLite, one
process is the whole studio, and its runners are woken in process.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from django.db import connection, connections

log = logging.getLogger(__name__)

CHANNEL = "jaiweb_work"
MAX_BACKOFF = 5.0


def work_announce() -> None:
    """Tell every listening runner, when the current transaction commits, that work is waiting."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_notify(%s, '')", [CHANNEL])


def _listen_params() -> dict[str, Any]:
    """psycopg.connect arguments for the default database, as Django would connect."""
    params = connections["default"].get_connection_params()
    for key in ("context", "cursor_factory", "prepare_threshold"):
        params.pop(key, None)
    return params


class WorkListener:
    """A daemon thread that calls ``on_work`` for each notification (and after each
    connect, for what was announced while it was not listening)."""

    def __init__(
        self, on_work: Callable[[], None], *, params: dict[str, Any] | None = None
    ) -> None:
        self.on_work = on_work
        self.params = params
        self.listening = threading.Event()  # set while LISTEN is in force
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="jaiweb-work-listener", daemon=True)

    @classmethod
    def for_database(cls, on_work: Callable[[], None]) -> WorkListener | None:
        """A listener on the default database, or None where there is nothing to listen to."""
        if connection.vendor != "postgresql":
            return None
        return cls(on_work, params=_listen_params())

    def start(self) -> WorkListener:
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self._thread.join(timeout)

    def _run(self) -> None:
        import psycopg

        failures = 0
        while not self._stop.is_set():
            try:
                with psycopg.connect(**(self.params or {}), autocommit=True) as conn:
                    conn.execute(f"LISTEN {CHANNEL}")
                    self.listening.set()
                    failures = 0
                    self.on_work()
                    while not self._stop.is_set():
                        for _notify in conn.notifies(timeout=0.5):
                            self.on_work()
            except psycopg.Error as exc:  # the runners poll meanwhile: only latency is lost
                self.listening.clear()
                failures += 1
                pause = min(MAX_BACKOFF, 0.25 * 2**failures)
                log.warning("work listener: %s; listening again in %.1f s", exc, pause)
                self._stop.wait(pause)
        self.listening.clear()
