"""Django's SQLite backend, with a process's writers queued on a lock.

SQLite lets one transaction write at a time. A connection that finds the file locked
waits in SQLite's busy handler, which sleeps longer and longer between tries: the lock
is often free long before the sleeper looks again, and a few writers sleep through many
turns. With the runner's threads and the web's writing at once, that gave the embedded
studio's operations a long tail under load (docs/PERFORMANCE.md, "SQLite writers").
So the threads of one process take turns on a `threading.Lock` around
`BEGIN IMMEDIATE … COMMIT` instead: a waiter wakes the moment the writer before it is
done. Other processes on the same file (`runagents`
beside `daphne`) still meet SQLite's lock and its busy handler, as before.

A thread that waits longer than the configured `timeout` goes on to `BEGIN IMMEDIATE`
unqueued, so a writer stuck in a transaction fails its waiters with SQLite's own
"database is locked", as it would without the lock.
"""

from __future__ import annotations

import threading

from django.db.backends.sqlite3 import base

_locks: dict[str, threading.Lock] = {}
_locks_guard = threading.Lock()


def writer_lock(name: str) -> threading.Lock:
    """The lock a process's writers to the database file `name` take turns on."""
    with _locks_guard:
        return _locks.setdefault(name, threading.Lock())


class DatabaseWrapper(base.DatabaseWrapper):
    """SQLite whose write transactions queue on a per-file lock in this process."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._writer: tuple[str, threading.Lock] | None = None  # (file name, its lock)
        self._held: threading.Lock | None = None  # the turn this connection has, if any

    def _writer_acquire(self) -> None:
        # NAME is read each time: the test runner points a connection at the test database
        # after it was made. The lock of a name is looked up once.
        name = str(self.settings_dict["NAME"])
        if self._writer is None or self._writer[0] != name:
            self._writer = (name, writer_lock(name))
        lock = self._writer[1]
        timeout = float(self.settings_dict["OPTIONS"].get("timeout", 5))
        self._held = lock if lock.acquire(timeout=timeout) else None

    def _writer_release(self) -> None:
        held, self._held = self._held, None
        if held is not None:
            held.release()

    def write_begin(self) -> None:
        """`BEGIN IMMEDIATE` on the driver's connection, in turn (the appends' fast path)."""
        self.ensure_connection()
        self._writer_acquire()
        try:
            with self.wrap_database_errors:
                self.connection.execute("BEGIN IMMEDIATE")
        except BaseException:
            self._writer_release()
            raise

    def write_end(self, *, commit: bool) -> None:
        """`COMMIT` (or `ROLLBACK`) what `write_begin` began, and give the turn on."""
        try:
            with self.wrap_database_errors:
                self.connection.execute("COMMIT" if commit else "ROLLBACK")
        except BaseException:
            if commit and self.connection.in_transaction:
                self.connection.execute("ROLLBACK")
            raise
        finally:
            self._writer_release()

    def _start_transaction_under_autocommit(self) -> None:
        self._writer_acquire()
        try:
            super()._start_transaction_under_autocommit()
        except BaseException:
            self._writer_release()
            raise

    def _commit(self) -> None:
        try:
            super()._commit()
        finally:
            # A failed COMMIT leaves the transaction open; Django rolls it back next.
            if self.connection is None or not self.connection.in_transaction:
                self._writer_release()

    def _rollback(self) -> None:
        try:
            super()._rollback()
        finally:
            self._writer_release()

    def is_usable(self) -> bool:
        """Whether a kept connection may serve the thread's next request or unit of work.

        Django asks only after a query failed, and its SQLite backend says yes to keep
        it. A connection that saw a failure (a full disk, a file swapped beneath it) is
        closed instead, and the next unit opens a fresh one.
        """
        return not self.errors_occurred

    def _close(self) -> None:
        try:
            super()._close()
        finally:
            self._writer_release()
