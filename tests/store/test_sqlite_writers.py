"""The SQLite backend's writers take turns on a lock in the process (jaiweb.store.sqlite).

Each test opens its own connections to a SQLite file of its own, whatever database the
suite runs on: what is tested is the backend, not the data."""

from __future__ import annotations

import sqlite3
import threading

import pytest
from django.db import OperationalError
from django.db.utils import ConnectionHandler

from jaiweb.settings import parse_database_url
from jaiweb.store.sqlite import base as sqlite_base
from jaiweb.store.sqlite.base import writer_lock

pytestmark = pytest.mark.one_pass("sqlite")

WAIT = 10  # seconds an event may take before the test calls it lost


@pytest.fixture
def handler(tmp_path, django_db_blocker):
    """Connections to a fresh SQLite file, configured as settings configure the product's;
    each thread that asks ``handler["default"]`` gets a connection of its own. (Not the
    test database, so pytest-django's guard is lifted for them.)"""
    config = parse_database_url(f"sqlite:///{tmp_path}/writers.sqlite3", tmp_path)
    connections = ConnectionHandler({"default": config})
    with django_db_blocker.unblock():
        with connections["default"].cursor() as cursor:
            cursor.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, who TEXT)")
        yield connections
        connections.close_all()


def begin(conn) -> None:
    """What transaction.atomic() does first on SQLite (autocommit stays on)."""
    conn.ensure_connection()
    conn._start_transaction_under_autocommit()


def statements_of(conn) -> list[str]:
    """Every statement the driver runs on ``conn`` from now on."""
    conn.ensure_connection()
    seen: list[str] = []
    conn.connection.set_trace_callback(seen.append)
    return seen


def lock_of(conn) -> threading.Lock:
    return writer_lock(str(conn.settings_dict["NAME"]))


class CountedLock:
    """A real lock that tells how many acquires it has been asked for."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.asked = 0
        self.changed = threading.Condition()

    def acquire(self, timeout: float = -1) -> bool:
        with self.changed:
            self.asked += 1
            self.changed.notify_all()
        return self.lock.acquire(timeout=timeout)

    def release(self) -> None:
        self.lock.release()

    def locked(self) -> bool:
        return self.lock.locked()

    def wait_for_asks(self, n: int) -> bool:
        with self.changed:
            return self.changed.wait_for(lambda: self.asked >= n, WAIT)


def test_a_second_writer_waits_for_its_turn_in_the_process_not_in_sqlite(handler, monkeypatch):
    first = handler["default"]
    counted = CountedLock()
    monkeypatch.setitem(sqlite_base._locks, str(first.settings_dict["NAME"]), counted)
    begin(first)
    first.cursor().execute("INSERT INTO t (who) VALUES ('first')")
    second_sent: list[str] = []
    second_began, second_done = threading.Event(), threading.Event()

    def second_writer() -> None:
        conn = handler["default"]
        conn.ensure_connection()
        conn.connection.set_trace_callback(second_sent.append)
        begin(conn)
        second_began.set()
        conn.cursor().execute("INSERT INTO t (who) VALUES ('second')")
        conn.commit()
        conn.close()
        second_done.set()

    thread = threading.Thread(target=second_writer)
    thread.start()
    # The second writer has asked for its turn and is queued on the lock: it has sent
    # SQLite nothing, so it is not sleeping in SQLite's busy handler (which would have
    # sent BEGIN IMMEDIATE and retried it).
    assert counted.wait_for_asks(2)
    assert not second_began.is_set()
    assert not any(s.startswith("BEGIN") for s in second_sent), second_sent
    assert counted.locked()
    first.commit()
    assert second_done.wait(WAIT)
    thread.join(WAIT)
    assert second_sent[0] == "BEGIN IMMEDIATE"
    rows = first.cursor().execute("SELECT who FROM t ORDER BY id").fetchall()
    assert rows == [("first",), ("second",)]
    assert not counted.locked()


def test_every_way_a_transaction_ends_gives_the_turn_back(handler):
    conn = handler["default"]
    lock = lock_of(conn)

    begin(conn)
    assert lock.locked()
    conn.rollback()
    assert not lock.locked()

    begin(conn)
    with pytest.raises(OperationalError):
        conn.cursor().execute("INSERT INTO no_such_table VALUES (1)")
    assert lock.locked()  # a failed statement leaves the transaction open: still its turn
    conn.rollback()
    assert not lock.locked()

    begin(conn)
    conn.close()  # a connection closed inside its transaction: SQLite rolled it back
    assert not lock.locked()
    assert conn.cursor().execute("SELECT count(*) FROM t").fetchone() == (0,)

    conn.write_begin()  # the appends' path, on the driver's connection
    assert lock.locked()
    conn.connection.execute("INSERT INTO t (who) VALUES ('kept')")
    conn.write_end(commit=True)
    assert not lock.locked()
    conn.write_begin()
    conn.connection.execute("INSERT INTO t (who) VALUES ('dropped')")
    conn.write_end(commit=False)
    assert not lock.locked()
    assert conn.cursor().execute("SELECT who FROM t").fetchall() == [("kept",)]


def test_a_writer_kept_waiting_past_the_timeout_gets_sqlites_own_error(handler, tmp_path):
    # A transaction that never ends must fail its waiters as SQLite would, not hang them.
    config = parse_database_url(f"sqlite:///{tmp_path}/writers.sqlite3", tmp_path)
    config["OPTIONS"]["timeout"] = 0.2
    impatient = ConnectionHandler({"default": config})
    holder = handler["default"]
    begin(holder)
    outcome: list[BaseException] = []

    def waiter() -> None:
        conn = impatient["default"]
        try:
            begin(conn)
        except BaseException as exc:  # the test reads it
            outcome.append(exc)
        finally:
            conn.close()

    thread = threading.Thread(target=waiter)
    thread.start()
    thread.join(WAIT)
    assert len(outcome) == 1 and isinstance(outcome[0], OperationalError)
    assert "locked" in str(outcome[0])
    assert isinstance(outcome[0].__cause__, sqlite3.OperationalError)
    # The waiter that gave up did not take or give back the holder's turn.
    assert lock_of(holder).locked()
    holder.commit()
    assert not lock_of(holder).locked()
