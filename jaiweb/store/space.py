"""Writes that failed for lack of disk space: told apart from other failures, and remembered.

A full disk shows as different errors depending on where the write went: SQLite's
``SQLITE_FULL`` ("database or disk is full"), PostgreSQL's ``disk_full`` (SQLSTATE
53100), and ``OSError`` ``ENOSPC`` or ``EDQUOT`` from a file of our own (a panel, an
import's image). Whoever catches a failed write notes it here, and /healthz reports
the disk as full while such a failure is recent.
"""

from __future__ import annotations

import errno
import logging
import threading
import time

log = logging.getLogger(__name__)

SQLITE_FULL = 13  # the primary result code; extended codes keep it in their low byte
PG_DISK_FULL = "53100"
NO_SPACE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})

RECENT_SECONDS = 60.0  # how long a failure keeps the disk reported as full
clock = time.monotonic  # tests replace it to let the minute pass

_lock = threading.Lock()
_failed_at: float | None = None  # time.monotonic() of the last failure noted


def _is_no_space(exc: BaseException) -> bool:
    if isinstance(exc, OSError) and exc.errno in NO_SPACE_ERRNOS:
        return True
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int) and code & 0xFF == SQLITE_FULL:
        return True
    return getattr(exc, "sqlstate", None) == PG_DISK_FULL


def out_of_space(exc: BaseException) -> bool:
    """Tell whether ``exc``, or an exception it was raised from, says no space was left."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if _is_no_space(current):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def space_failure_note(*, exc: BaseException) -> bool:
    """Remember that a write failed for lack of space, if ``exc`` says so; return whether
    it did."""
    global _failed_at
    if not out_of_space(exc):
        return False
    now = clock()
    with _lock:
        first = _failed_at is None or not 0 <= now - _failed_at < RECENT_SECONDS
        _failed_at = now
    if first:
        log.error("a write failed for lack of disk space: %s", exc)
    return True


def space_failure_recent() -> bool:
    """Tell whether a write of this process failed for lack of space in the last
    RECENT_SECONDS."""
    failed = _failed_at
    return failed is not None and 0 <= clock() - failed < RECENT_SECONDS
