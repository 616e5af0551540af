"""The per-minute limits on a local cluster, as the review of issue 27 met them: through the
web processes' real daphne, with the cache on a Redis of the test's own.

* Redis stops: prompts through either web process are still accepted (never a 500), the
  share page answers, /healthz says the cache is down, and the runs go on to their end.
* 130 views of a share page, each with a made-up X-Forwarded-For, are limited: daphne no
  longer puts the leftmost entry in REMOTE_ADDR.

Always on PostgreSQL, whatever the pass (tests/support/clusters.py).
"""

from __future__ import annotations

import json
from collections import Counter

import httpx
import pytest

from jaiweb.devtools.cluster import Cluster
from tests.support.clusters import SETUP, Api
from tests.support.waiting import wait_until

pytestmark = pytest.mark.slow


def share_url(api: Api, session_id: str) -> str:
    r = api.http.post(f"/sessions/{session_id}/share-links", json={})
    assert r.status_code == 201, r.text
    return r.json()["url"]


def started(cluster: Cluster) -> Api:
    """The cluster, started, and an API client of its user on its first web process."""
    cluster.start()
    secrets = json.loads(cluster.manage("shell", "-c", SETUP).strip().splitlines()[-1])
    return Api(cluster.urls[0], secrets["token"])


def test_made_up_forwarded_addresses_are_limited_through_daphne(cluster_env, own_redis, tmp_path):
    """The default: no trusted proxy. With the limit at 5 a minute, 130 views may see a
    minute end once, so at most 10 of them are let through; the review saw all 130."""
    env = {**cluster_env, "REDIS_URL": own_redis.url(), "JAIWEB_SHARE_VIEWS_PER_MINUTE": "5"}
    cluster = Cluster(web=1, runners=0, port=0, logs=tmp_path / "logs", env=env)
    try:
        api = started(cluster)
        session_id = api.session_create("shared")
        api.prompt(session_id, "/say hi")  # the share link needs a node to show
        url = share_url(api, session_id)
        with httpx.Client(timeout=10) as http:
            codes = Counter(
                http.get(url, headers={"X-Forwarded-For": f"198.18.0.{i}"}).status_code
                for i in range(1, 131)
            )
    finally:
        cluster.stop()
    assert set(codes) == {200, 429} and codes[200] <= 10, codes


def test_when_redis_stops_prompts_are_accepted_and_runs_go_on(cluster_env, own_redis, tmp_path):
    env = {**cluster_env, "REDIS_URL": own_redis.url()}
    cluster = Cluster(web=2, runners=1, port=0, logs=tmp_path / "logs", env=env)
    try:
        api = started(cluster)
        apis = [api, Api(cluster.urls[1], api.http.headers["Authorization"].split()[1])]
        sessions = [api.session_create(f"outage {i}") for i in range(4)]
        before = api.prompt(sessions[0], "/say before")
        url = share_url(api, sessions[0])
        assert api.finished(before)["outcome"] == "completed"

        own_redis.stop()
        assert not own_redis.answers()
        codes: Counter = Counter()
        ops = []
        for i in range(40):  # on both web processes, to idle and to busy sessions
            r = apis[i % 2].http.post(
                f"/sessions/{sessions[i % 4]}/prompts", json={"text": f"/say during {i}"}
            )
            codes[r.status_code] += 1
            if r.status_code == 202 and not r.json()["queued"]:
                ops.append(r.json()["operation_id"])
        assert codes == {202: 40}, codes
        with httpx.Client(timeout=10) as http:
            assert http.get(url).status_code == 200
            for base in cluster.urls:
                health = http.get(base + "healthz")
                assert health.status_code == 503
                body = health.json()
                assert (body["database"], body["cache"], body["channel_layer"]) == (
                    "ok",
                    "error",
                    "error",
                )
        for op in ops:  # the journal is in PostgreSQL: the runs go on without Redis
            assert api.finished(op, timeout=60)["outcome"] == "completed"
        wait_until(
            lambda: all(api.http.get(f"/sessions/{s}").json()["state"] == "idle" for s in sessions),
            60,
            "every session to be idle again",
        )
    finally:
        codes_at_stop = cluster.stop()
    assert all(code == 0 for code in codes_at_stop.values()), codes_at_stop
