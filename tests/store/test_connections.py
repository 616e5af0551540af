"""A worker thread's connection after a unit of work (jaiweb.store.connections)."""

from __future__ import annotations

import pytest
from django.db import DatabaseError, connection

from jaiweb.store.connections import connection_done
from tests.support.threads import orm_thread


@pytest.mark.django_db(transaction=True)
def test_a_worker_keeps_its_sqlite_connection_until_a_query_fails_and_gives_back_any_other():
    open_after: list[bool] = []

    def unit_of_work() -> None:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        connection_done()
        open_after.append(connection.connection is not None)
        with pytest.raises(DatabaseError), connection.cursor() as cursor:
            cursor.execute("SELECT * FROM no_such_table")
        connection_done()
        open_after.append(connection.connection is not None)

    thread = orm_thread(unit_of_work)
    thread.start()
    thread.join(30)
    # SQLite: opening a connection costs more than many a read, and autocommit pins no
    # snapshot, so it is kept; a failed query closes it. PostgreSQL: back to the pool.
    assert open_after == ([True, False] if connection.vendor == "sqlite" else [False, False])
