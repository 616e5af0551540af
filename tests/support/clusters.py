"""A local cluster (jaiweb.devtools.cluster) for tests: its database, environment and clients.

Always on PostgreSQL, whatever the pass: each test module gets a fresh database on the
server (the one DATABASE_URL names when it is PostgreSQL, else 127.0.0.1:5432 as user
postgres), dropped at the end. The suite's machine always has PostgreSQL and Redis.
Fixtures ``cluster_database`` and ``cluster_env`` come in through tests/conftest.py.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import threading
import time
from datetime import datetime
from urllib.parse import urlsplit, urlunsplit

import httpx
import psycopg
import pytest
from websockets.sync.client import connect as ws_connect

from jaiweb.agent.state import DEFAULT_STATE
from jaiweb.devtools.cluster import Cluster
from tests.support.waiting import wait_until

SETUP = """
import json
from django.contrib.auth import get_user_model
from django.test import Client
from jaiweb.accounts.services import api_token_create
users = get_user_model().objects
user = users.filter(username="alice").first() or users.create_user("alice", password="alice-pass-1")
_, token = api_token_create(user=user, name="cluster test")
client = Client()
client.force_login(user)
print(json.dumps({"token": token, "cookie": client.cookies["sessionid"].value}))
"""


def server_url() -> str:
    """postgres://… of the server to make the cluster's database on (its database part unused)."""
    url = os.environ.get("DATABASE_URL", "")
    if urlsplit(url).scheme in ("postgres", "postgresql"):
        return url
    return "postgres://postgres@127.0.0.1:5432/postgres"


def with_database(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "/" + name, parts.query, ""))


@pytest.fixture(scope="module")
def cluster_database():
    name = f"jaiweb_cluster_test_{os.getpid()}"
    admin = with_database(server_url(), "postgres")
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield with_database(server_url(), name)
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def cluster_env(cluster_database, tmp_path):
    ours = {"DATABASE_URL", "REDIS_URL", "DEBUG", "SECRET_KEY", "ALLOWED_HOSTS"}
    base = {k: v for k, v in os.environ.items() if k not in ours and not k.startswith("JAIWEB_")}
    return {
        **base,
        "DATABASE_URL": cluster_database,
        "REDIS_URL": os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0",
        "JAIWEB_MEDIA_ROOT": str(tmp_path / "media"),
        "JAIWEB_LEASE_SECONDS": "2",
        # The Redis cache (and its per-user prompt counters: user 1 in every cluster
        # database) is shared by both passes of ./dev test-all at once and by the bursts.
        "JAIWEB_PROMPTS_PER_MINUTE": "1000000",
    }


def metrics(url: str) -> dict[str, float]:
    """The unlabelled samples and jaiweb_operations{state=…} as "jaiweb_operations:<state>"."""
    r = httpx.get(url + "metrics", timeout=10)
    assert r.status_code == 200, r.text
    out = {}
    for line in r.text.splitlines():
        if line.startswith("#"):
            continue
        name, value = line.rsplit(" ", 1)
        state = re.fullmatch(r'jaiweb_operations\{state="(\w+)"\}', name)
        out[f"jaiweb_operations:{state[1]}" if state else name] = float(value)
    return out


class Watcher:
    """A browser's live socket on one web process: collects every frame in a thread."""

    def __init__(self, base_url: str, session_id: str, cookie: str):
        ws_url = base_url.replace("http://", "ws://") + f"ws/sessions/{session_id}/"
        self.stack = contextlib.ExitStack()
        self.ws = self.stack.enter_context(
            ws_connect(
                ws_url,
                origin=base_url.rstrip("/"),
                additional_headers={"Cookie": f"sessionid={cookie}"},
                open_timeout=10,
            )
        )
        self.frames: list[str] = []
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        try:
            for frame in self.ws:
                self.frames.append(frame)
        except Exception:
            pass

    def streamed(self) -> str:
        """The narration appended to #stream-text, as the page would show it."""
        spans = re.findall(
            r'<div hx-swap-oob="beforeend:#stream-text"><span>(.*?)</span></div>',
            "".join(self.frames),
        )
        return "".join(spans)

    def close(self) -> None:
        self.stack.close()
        self.thread.join(timeout=5)


class Api:
    def __init__(self, base_url: str, token: str):
        self.http = httpx.Client(
            base_url=base_url + "api/v1",
            headers={"Authorization": f"Bearer {token}"},
            timeout=10,
        )

    def session_create(self, title: str) -> str:
        """A new session whose paid tools run without asking (permission mode "auto")."""
        r = self.http.post(
            "/sessions",
            json={
                "title": title,
                "initial_app_state": {**DEFAULT_STATE, "permission_mode": "auto"},
            },
        )
        assert r.status_code == 201, r.text
        return r.json()["id"]

    def prompt(self, session_id: str, text: str) -> str:
        r = self.http.post(f"/sessions/{session_id}/prompts", json={"text": text})
        assert r.status_code == 202, r.text
        assert r.json()["queued"] is False
        return r.json()["operation_id"]

    def operation(self, op: str) -> dict:
        r = self.http.get(f"/operations/{op}")
        assert r.status_code == 200, r.text
        return r.json()

    def finished(self, op: str, timeout: float = 30) -> dict:
        return wait_until(
            lambda: (o := self.operation(op))["state"] == "finished" and o, timeout, f"{op} to end"
        )


def lease_of(database: str, op: str) -> tuple[str, int, datetime]:
    with psycopg.connect(database) as conn:
        return conn.execute(
            "SELECT lease_owner, fencing, lease_expires_at FROM store_operation WHERE id = %s",
            [op],
        ).fetchone()


def freeze_outside_a_transaction(cluster: Cluster, name: str, database: str, op: str) -> None:
    """SIGSTOP a runner at a moment it holds no lock on the operation's row.

    Stopped in the middle of renewing its lease (UPDATE sent, COMMIT not), it would keep the
    row locked and every claim skips locked rows: try again until the row is free.
    """
    for _ in range(50):
        cluster.kill(name, signal.SIGSTOP)
        with psycopg.connect(database) as conn:
            try:
                conn.execute("SELECT 1 FROM store_operation WHERE id = %s FOR UPDATE NOWAIT", [op])
                return
            except psycopg.errors.LockNotAvailable:
                pass
        cluster.kill(name, signal.SIGCONT, wait=False)
        time.sleep(0.05)
    raise AssertionError(f"{name} kept the row of {op} locked")
