"""Runners in other processes hear of new work at commit (PostgreSQL LISTEN/NOTIFY).

A wake-up that must not happen is never waited out: after it, the test sends a sentinel
notification of its own and waits for the wake-up that one causes. PostgreSQL delivers
notifications in the order their transactions commit and the listener calls back once
for each, in order, so when the sentinel's wake-up has come, anything delivered before
it has woken the listener already. Each wake-up is labelled with its notification's
payload (the product's are empty; the sentinels say which they are).
"""

from __future__ import annotations

import threading

import psycopg
import pytest
from django.db import connection, transaction

from jaiweb.store.wakeups import CHANNEL, WorkListener, work_announce
from tests.support.waiting import wait_until

CONNECT = "<connect>"  # the wake-up on (re)connecting: work announced meanwhile


class Heard:
    """The listener's wake-ups, in order, each as the payload of the notification that
    caused it (``CONNECT`` for the one a connect makes)."""

    def __init__(self) -> None:
        self.wakes: list[str] = []
        self.delivered: str | None = None  # the notification being handled, if any
        self._lock = threading.Lock()

    def __call__(self) -> None:
        with self._lock:
            self.wakes.append(CONNECT if self.delivered is None else self.delivered)
            self.delivered = None

    def reset(self) -> None:
        with self._lock:
            self.wakes.clear()


@pytest.fixture
def heard(monkeypatch) -> Heard:
    """A ``Heard`` that learns each notification's payload as the listener's connection
    hands it over (psycopg's ``Connection.notifies``, wrapped: nothing else changes)."""
    heard = Heard()
    real = psycopg.Connection.notifies

    def notifies(self, *args, **kwargs):
        for notify in real(self, *args, **kwargs):
            heard.delivered = notify.payload
            yield notify

    monkeypatch.setattr(psycopg.Connection, "notifies", notifies)
    return heard


def notify(url: str | dict, payload: str) -> None:
    """A notification of this test's own, committed at once (autocommit); ``url`` a conninfo
    string or psycopg's connect arguments."""
    params = {"conninfo": url} if isinstance(url, str) else url
    with psycopg.connect(**params, autocommit=True) as conn:
        conn.execute("SELECT pg_notify(%s, %s)", [CHANNEL, payload])


def wait_for_wake(heard: Heard, payload: str) -> list[str]:
    """Every wake-up so far, once ``payload``'s has come."""
    return wait_until(
        lambda: payload in heard.wakes and list(heard.wakes), 10, f"the wake-up of {payload!r}"
    )


def _listening(url: str, heard: Heard) -> WorkListener:
    listener = WorkListener(heard, params={"conninfo": url}).start()
    assert listener.listening.wait(10)
    wait_for_wake(heard, CONNECT)
    heard.reset()
    return listener


def test_a_committed_notification_wakes_and_a_rolled_back_one_does_not(cluster_database, heard):
    listener = _listening(cluster_database, heard)
    try:
        with psycopg.connect(cluster_database) as conn:  # a transaction, rolled back
            conn.execute("SELECT pg_notify(%s, 'rolled back')", [CHANNEL])
            conn.rollback()
        notify(cluster_database, "sentinel 1")
        assert wait_for_wake(heard, "sentinel 1") == ["sentinel 1"]
        with psycopg.connect(cluster_database) as conn:
            conn.execute("SELECT pg_notify(%s, 'committed')", [CHANNEL])
            notify(cluster_database, "sentinel 2")  # while that transaction is open
            assert wait_for_wake(heard, "sentinel 2") == ["sentinel 1", "sentinel 2"]  # not
            conn.commit()  # … before the commit …
        assert wait_for_wake(heard, "committed") == ["sentinel 1", "sentinel 2", "committed"]
    finally:
        listener.stop()
    assert not listener.listening.is_set()


def test_the_listener_comes_back_after_its_connection_is_cut(cluster_database, heard):
    listener = _listening(cluster_database, heard)
    try:
        with psycopg.connect(cluster_database, autocommit=True) as conn:
            conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'LISTEN%%'"
                " AND datname = current_database()"
            )
        wait_for_wake(heard, CONNECT)  # reconnected: its connect is a wake-up too
        assert listener.listening.is_set()
        heard.reset()
        notify(cluster_database, "after")
        assert wait_for_wake(heard, "after") == ["after"]
    finally:
        listener.stop()


@pytest.mark.django_db(transaction=True)
def test_work_announced_in_a_transaction_reaches_listeners_at_its_commit(heard):
    listener = WorkListener.for_database(heard)
    if connection.vendor != "postgresql":
        # One process is the whole studio: nothing to listen to, and announcing is a no-op.
        assert listener is None
        with transaction.atomic():
            work_announce()
        return
    assert listener is not None
    # The test database, as Django connects to it (less what only Django's cursors take).
    url = {
        k: v
        for k, v in connection.get_connection_params().items()
        if k not in ("context", "cursor_factory", "prepare_threshold")
    }
    listener.start()
    try:
        assert listener.listening.wait(10)
        wait_for_wake(heard, CONNECT)
        heard.reset()
        with transaction.atomic():
            work_announce()
            work_announce()
            notify(url, "sentinel 1")
            assert wait_for_wake(heard, "sentinel 1") == ["sentinel 1"]  # not before the commit
        notify(url, "sentinel 2")
        # At the commit, and once: the same notification twice in one transaction is one.
        assert wait_for_wake(heard, "sentinel 2") == ["sentinel 1", "", "sentinel 2"]
        heard.reset()
        with pytest.raises(RuntimeError), transaction.atomic():
            work_announce()
            raise RuntimeError("rolled back")
        notify(url, "sentinel 3")
        assert wait_for_wake(heard, "sentinel 3") == ["sentinel 3"]
    finally:
        listener.stop()
