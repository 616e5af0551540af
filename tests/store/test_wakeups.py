"""Runners in other processes hear of new work at commit (PostgreSQL LISTEN/NOTIFY)."""

from __future__ import annotations

import threading
import time

import psycopg
import pytest
from django.db import connection, transaction

from jaiweb.store.wakeups import CHANNEL, WorkListener, work_announce


class Heard:
    """Counts the listener's wake-ups."""

    def __init__(self) -> None:
        self.count = 0
        self.event = threading.Event()

    def __call__(self) -> None:
        self.count += 1
        self.event.set()

    def reset(self) -> None:
        self.count = 0
        self.event.clear()


def _listening(url: str) -> tuple[WorkListener, Heard]:
    heard = Heard()
    listener = WorkListener(heard, params={"conninfo": url}).start()
    assert listener.listening.wait(10)
    assert heard.event.wait(5)  # one call on connecting: work announced meanwhile
    heard.reset()
    return listener, heard


def test_a_committed_notification_wakes_and_a_rolled_back_one_does_not(cluster_database):
    listener, heard = _listening(cluster_database)
    try:
        with psycopg.connect(cluster_database) as conn:  # a transaction, rolled back
            conn.execute("SELECT pg_notify(%s, '')", [CHANNEL])
            conn.rollback()
        assert not heard.event.wait(1.0)
        with psycopg.connect(cluster_database) as conn:
            conn.execute("SELECT pg_notify(%s, '')", [CHANNEL])
            time.sleep(0.3)
            assert not heard.event.is_set()  # not before the commit …
            conn.commit()
        assert heard.event.wait(5)  # … at once after it
    finally:
        listener.stop()
    assert not listener.listening.is_set()


def test_the_listener_comes_back_after_its_connection_is_cut(cluster_database):
    listener, heard = _listening(cluster_database)
    try:
        with psycopg.connect(cluster_database, autocommit=True) as conn:
            conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'LISTEN%%'"
                " AND datname = current_database()"
            )
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:  # reconnected (its connect call is a wake-up too)
            if heard.event.wait(0.2) and listener.listening.is_set():
                break
        assert listener.listening.is_set()
        heard.reset()
        with psycopg.connect(cluster_database, autocommit=True) as conn:
            conn.execute("SELECT pg_notify(%s, '')", [CHANNEL])
        assert heard.event.wait(5)
    finally:
        listener.stop()


@pytest.mark.django_db(transaction=True)
def test_work_announced_in_a_transaction_reaches_listeners_at_its_commit():
    heard = Heard()
    listener = WorkListener.for_database(heard)
    if connection.vendor != "postgresql":
        # One process is the whole studio: nothing to listen to, and announcing is a no-op.
        assert listener is None
        with transaction.atomic():
            work_announce()
        return
    assert listener is not None
    listener.start()
    try:
        assert listener.listening.wait(10) and heard.event.wait(5)
        heard.reset()
        with transaction.atomic():
            work_announce()
            work_announce()
            assert not heard.event.wait(0.5)
        assert heard.event.wait(5)
        time.sleep(0.3)
        assert heard.count == 1  # the same notification twice in one transaction is one
        heard.reset()
        with pytest.raises(RuntimeError), transaction.atomic():
            work_announce()
            raise RuntimeError("rolled back")
        assert not heard.event.wait(1.0)
    finally:
        listener.stop()
