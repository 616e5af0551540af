"""PostgreSQL: the app's backends are ended while requests run (a server restart, a
failover, pg_terminate_backend) — no request answers 500 (issue 14.8).

The pool checks each connection it hands out, so a dead one is never used; a read whose
connection dies under it is made once more; a write answers 503 with nothing committed.
"""

from __future__ import annotations

import threading
import time
from collections import Counter

import psycopg
import pytest
from django.conf import settings
from django.db import connection, connections

from jaiweb.store.models import ComicSession
from tests.api.conftest import Api, api_for

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        not settings.DATABASES["default"]["ENGINE"].endswith("postgresql"),
        reason="PostgreSQL's connection pool",
    ),
]


def terminate_the_apps_backends() -> int:
    db = connection.settings_dict
    with psycopg.connect(
        dbname=db["NAME"],
        user=db["USER"],
        password=db["PASSWORD"],
        host=db["HOST"],
        port=db["PORT"] or None,
        autocommit=True,
    ) as admin:
        return admin.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        ).fetchone()[0]


def test_ended_backends_cost_no_request_a_500(alice, session):
    assert connection.settings_dict["CONN_HEALTH_CHECKS"] is True
    assert connection.pool._check is not None  # psycopg_pool's check_connection
    statuses: Counter = Counter()
    lock = threading.Lock()
    done = threading.Event()

    def client_loop(api: Api, write: bool) -> None:
        try:
            n = 0
            while not done.is_set() and n < 400:
                n += 1
                kind = "write" if write else "read"
                try:
                    if write:
                        r = api.patch(f"/sessions/{session.id}", {"title": f"t{n}"})
                    else:
                        r = api.get(f"/sessions/{session.id}" + ("/entries" if n % 2 else ""))
                    status = r.status_code
                except Exception as exc:  # the test client re-raises what a server would 500
                    status = f"{type(exc).__name__}: {exc}"
                with lock:
                    statuses[(kind, status)] += 1
        finally:
            connections.close_all()

    apis = [(api_for(alice), False), (api_for(alice), False), (api_for(alice), True)]
    connection.close()  # the test's own connection goes back to the pool too
    threads = [threading.Thread(target=client_loop, args=a) for a in apis]
    for t in threads:
        t.start()
    ended = 0
    try:
        for _ in range(4):  # the pool reconnects between two rounds
            time.sleep(0.5)
            ended += terminate_the_apps_backends()
    finally:
        done.set()
        for t in threads:
            t.join(timeout=60)
    connection.close()
    assert ended > 0
    assert statuses[("read", 500)] == 0 and statuses[("write", 500)] == 0, statuses
    # A write whose connection died answers 503 (nothing of it kept); a read is made again,
    # and answers 503 only if the backend it was given was being ended too (signalled a
    # moment before: the pool's check may still have passed).
    assert set(statuses) <= {("read", 200), ("read", 503), ("write", 200), ("write", 503)}, statuses
    assert statuses[("read", 503)] <= 2 and statuses[("read", 200)] > 20, statuses
    assert ComicSession.objects.get(pk=session.pk).title.startswith("t")
