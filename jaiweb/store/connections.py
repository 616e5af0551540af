"""What a worker thread does with its database connection between units of work."""

from __future__ import annotations

from django.db import close_old_connections, connection


def connection_done() -> None:
    """After a unit of work on a thread of our own (a render, a claim, a run).

    On SQLite the connection stays open unless a query failed: opening one (Django's
    functions registered, the pragmas run) costs more than many a read or an append, and
    in autocommit it holds no transaction between units, so it pins no old snapshot of the
    WAL. Elsewhere as Django does between requests (`CONN_MAX_AGE`, the pool)."""
    if connection.vendor == "sqlite" and not connection.errors_occurred:
        return
    close_old_connections()
