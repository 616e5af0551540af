"""What a worker thread does with its database connection between units of work."""

from __future__ import annotations

from django.db import close_old_connections


def connection_done() -> None:
    """After a unit of work on a thread of our own (a render, a claim, a run).

    Does what Django does at the end of a request: a SQLite connection is kept for the
    thread's next unit unless a query on it failed (``CONN_MAX_AGE`` and
    ``jaiweb/store/sqlite/base.py``), and a PostgreSQL one goes back to the pool.
    """
    close_old_connections()
