"""PostgreSQL: the app's backends are ended while requests run (a server restart, a
failover, pg_terminate_backend) — no request answers 500 (issue 14.8).

The pool checks each connection it hands out, so a dead one is never used; a read whose
connection dies under it is made once more; a write answers 503 with nothing committed.

Always on PostgreSQL, whatever the pass: a web process of a local cluster on a database
of its own (tests/support/clusters.py), driven over HTTP, its backends ended from here.
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter

import httpx
import psycopg
import pytest

from jaiweb.devtools.cluster import Cluster
from tests.support.clusters import SETUP

pytestmark = pytest.mark.slow


def terminate_the_apps_backends(database: str) -> int:
    with psycopg.connect(database, autocommit=True) as admin:
        return admin.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        ).fetchone()[0]


def test_ended_backends_cost_no_request_a_500(cluster_env, cluster_database, tmp_path):
    cluster = Cluster(web=1, runners=0, port=0, logs=tmp_path / "logs", env=cluster_env)
    cluster.start()
    try:
        secrets = json.loads(cluster.manage("shell", "-c", SETUP).strip().splitlines()[-1])
        headers = {"Authorization": f"Bearer {secrets['token']}"}
        base = cluster.urls[0] + "api/v1"
        made = httpx.post(base + "/sessions", json={"title": "pool"}, headers=headers, timeout=30)
        assert made.status_code == 201, made.text
        session_id = made.json()["id"]
        statuses: Counter = Counter()
        lock = threading.Lock()
        done = threading.Event()

        def client_loop(write: bool) -> None:
            with httpx.Client(base_url=base, headers=headers, timeout=30) as http:
                n = 0
                while not done.is_set() and n < 400:
                    n += 1
                    kind = "write" if write else "read"
                    if write:
                        r = http.patch(f"/sessions/{session_id}", json={"title": f"t{n}"})
                    else:
                        r = http.get(f"/sessions/{session_id}" + ("/entries" if n % 2 else ""))
                    with lock:
                        statuses[(kind, r.status_code)] += 1

        threads = [threading.Thread(target=client_loop, args=(w,)) for w in (False, False, True)]
        for t in threads:
            t.start()
        ended = 0
        try:
            for _ in range(4):  # the pool reconnects between two rounds
                time.sleep(0.5)
                ended += terminate_the_apps_backends(cluster_database)
        finally:
            done.set()
            for t in threads:
                t.join(timeout=60)
        title = httpx.get(f"{base}/sessions/{session_id}", headers=headers, timeout=30)
    finally:
        cluster.stop()
    assert ended > 0
    assert statuses[("read", 500)] == 0 and statuses[("write", 500)] == 0, statuses
    # A write whose connection died answers 503 (nothing of it kept); a read is made again,
    # and answers 503 only if the backend it was given was being ended too (signalled a
    # moment before: the pool's check may still have passed).
    assert set(statuses) <= {("read", 200), ("read", 503), ("write", 200), ("write", 503)}, statuses
    assert statuses[("read", 503)] <= 2 and statuses[("read", 200)] > 20, statuses
    assert title.json()["title"].startswith("t")
