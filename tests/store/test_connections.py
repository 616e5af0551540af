"""A worker thread's connection after a unit of work: Django's ``close_old_connections``,
as at a request's end, with the SQLite settings and backend (``CONN_MAX_AGE``,
``jaiweb/store/sqlite/base.py``)."""

from __future__ import annotations

import pytest
from django.db import DatabaseError, close_old_connections, connection

from tests.support.threads import orm_thread


@pytest.mark.django_db(transaction=True)
def test_a_worker_keeps_its_sqlite_connection_until_a_query_fails_and_gives_back_any_other():
    open_after: list[bool] = []

    def unit_of_work() -> None:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        close_old_connections()
        open_after.append(connection.connection is not None)
        with pytest.raises(DatabaseError), connection.cursor() as cursor:
            cursor.execute("SELECT * FROM no_such_table")
        close_old_connections()
        open_after.append(connection.connection is not None)

    thread = orm_thread(unit_of_work)
    thread.start()
    thread.join(30)
    # SQLite: opening a connection costs more than many a read, and autocommit pins no
    # snapshot, so it is kept; a failed query closes it. PostgreSQL: back to the pool.
    assert open_after == ([True, False] if connection.vendor == "sqlite" else [False, False])
