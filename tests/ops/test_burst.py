"""A burst of steering prompts, as a user's script would send them: none lost, none doubled.

Six sessions each get a ``/draw`` prompt and then steering ``/say`` prompts 0–30 ms apart
while their runs go on, 1,008 steering prompts in all, over real HTTP: against a
``manage.py studio`` on a SQLite file, and against a cluster of 2 web processes and 2
runners on PostgreSQL + Redis. Every prompt must get a 2xx, and once every run has ended
each prompt's text must be exactly one user entry of its session.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections import Counter

import httpx
import pytest

from jaiweb.devtools.cluster import Cluster
from tests.support import children
from tests.support.clusters import SETUP
from tests.support.waiting import wait_until

pytestmark = pytest.mark.slow

SESSIONS = 6
STEERING_PER_SESSION = 168  # 1,008 in all


def burst(urls: list[str], token: str) -> dict[str, list[str]]:
    """Fire the prompts; returns each session's accepted texts. Fails on any non-2xx."""
    headers = {"Authorization": f"Bearer {token}"}
    clients = [httpx.Client(base_url=u + "api/v1", headers=headers, timeout=60) for u in urls]
    sessions = []
    for n in range(SESSIONS):
        r = clients[0].post(
            "/sessions",
            json={
                "title": f"burst {n}",
                "initial_app_state": {"characters": {}, "permission_mode": "auto"},
            },
        )
        assert r.status_code == 201, r.text
        sessions.append(r.json()["id"])
    accepted: dict[str, list[str]] = {s: [] for s in sessions}
    failures: list[str] = []

    def fire(index: int, session_id: str) -> None:
        rng = random.Random(index)
        texts = [f"/draw 第{index}集 擂台"] + [
            f"/say burst {index}-{k}" for k in range(STEERING_PER_SESSION)
        ]
        for k, text in enumerate(texts):
            client = clients[(index + k) % len(clients)]  # the web processes take turns
            r = client.post(f"/sessions/{session_id}/prompts", json={"text": text})
            if r.status_code != 202:
                failures.append(f"{text}: {r.status_code} {r.text[-3000:]}")
                continue
            accepted[session_id].append(text)
            time.sleep(rng.uniform(0, 0.03))

    threads = [
        threading.Thread(target=fire, args=(i, s), daemon=True) for i, s in enumerate(sessions)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    assert not failures, f"{len(failures)} failed; the first: {failures[0]}" if failures else ""
    return accepted


def settle_and_count(url: str, token: str, accepted: dict[str, list[str]]) -> None:
    """Wait for every run to end, then: each accepted text is exactly one user entry."""
    http = httpx.Client(
        base_url=url + "api/v1", headers={"Authorization": f"Bearer {token}"}, timeout=60
    )

    def idle() -> bool:
        return all(http.get(f"/sessions/{s}").json()["state"] == "idle" for s in accepted)

    wait_until(idle, 600, "every run to end")
    lost, doubled = [], []
    for session_id, texts in accepted.items():
        users: Counter[str] = Counter()
        after = 0
        while True:
            page = http.get(f"/sessions/{session_id}/entries", params={"after_seq": after})
            assert page.status_code == 200, page.text
            rows = page.json()
            rows = rows["entries"] if isinstance(rows, dict) else rows
            if not rows:
                break
            for row in rows:
                message = row.get("message") or {}
                if row["type"] == "message" and message.get("role") == "user":
                    users[message["content"]] += 1
            after = rows[-1]["seq"]
        lost += [t for t in texts if users[t] == 0]
        doubled += [t for t in texts if users[t] > 1]
    total = sum(len(t) for t in accepted.values())
    assert (lost, doubled) == ([], []), f"{len(lost)} lost, {len(doubled)} doubled of {total}"
    assert total == SESSIONS * (STEERING_PER_SESSION + 1)


def manage(env: dict, *args: str) -> str:
    done = children.manage(None, *args, base_env=env, timeout=300)
    assert done.returncode == 0, done.stderr_tail()
    return "\n".join(done.out)


# A SQLite file of its own and the in-memory channel layer, whatever the pass.
@pytest.mark.one_pass("sqlite")
def test_a_burst_on_the_embedded_studio(tmp_path):
    import os

    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("JAIWEB_")},
        "DATABASE_URL": f"sqlite:///{tmp_path}/db.sqlite3",
        "JAIWEB_MEDIA_ROOT": str(tmp_path / "media"),
        "JAIWEB_PROMPTS_PER_MINUTE": "100000",
        "PYTHONUNBUFFERED": "1",
    }
    env.pop("REDIS_URL", None)
    manage(env, "migrate", "-v", "0")
    secrets = json.loads(manage(env, "shell", "-c", SETUP).strip().splitlines()[-1])
    studio = children.studio(None, base_env=env)
    try:
        url = studio.listening_url(timeout=120)
        started = time.monotonic()
        accepted = burst([url], secrets["token"])
        settle_and_count(url, secrets["token"], accepted)
        print(f"embedded studio burst: {time.monotonic() - started:.1f} s")
    finally:
        studio.stop()


def test_a_burst_on_a_cluster(cluster_env, tmp_path):
    cluster = Cluster(
        web=2,
        runners=2,
        port=0,
        logs=tmp_path / "logs",
        env=cluster_env,
        stop_timeout=5,
    )
    cluster.start()
    try:
        secrets = json.loads(cluster.manage("shell", "-c", SETUP).strip().splitlines()[-1])
        started = time.monotonic()
        accepted = burst(cluster.urls, secrets["token"])
        settle_and_count(cluster.urls[0], secrets["token"], accepted)
        print(f"cluster burst: {time.monotonic() - started:.1f} s")
    finally:
        cluster.stop()
