"""Counting the SQL statements every thread runs: the studio's catch-ups read on threads of
their own (jaiweb.studio.consumers._RENDERERS), each with its own connection, which
``CaptureQueriesContext`` (one connection) would not see."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

from django.db.backends.utils import CursorWrapper


@contextlib.contextmanager
def every_query() -> Iterator[list[str]]:
    """The statements run on any thread and connection while inside, in order."""
    seen: list[str] = []
    lock = threading.Lock()
    execute, executemany = CursorWrapper._execute, CursorWrapper._executemany

    def counted_execute(self, sql, params, *rest):
        with lock:
            seen.append(sql)
        return execute(self, sql, params, *rest)

    def counted_executemany(self, sql, param_list, *rest):
        with lock:
            seen.append(sql)
        return executemany(self, sql, param_list, *rest)

    CursorWrapper._execute = counted_execute
    CursorWrapper._executemany = counted_executemany
    try:
        yield seen
    finally:
        CursorWrapper._execute, CursorWrapper._executemany = execute, executemany
