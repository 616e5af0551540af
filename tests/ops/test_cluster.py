"""`manage.py cluster` over real processes on PostgreSQL + Redis.

Two web processes and a runner: a prompt posted through web B is run by the runner while
a browser-like websocket on web A streams it; a runner killed in the middle of a tool is
replaced and the new one finishes the run; a runner frozen (SIGSTOP) while holding its
lease is taken over only once the lease has expired, and its late wake-up changes nothing.

Always on PostgreSQL and Redis, whatever the pass (tests/support/clusters.py).
"""

from __future__ import annotations

import json
import os
import signal
import socket
from datetime import datetime

import httpx
import pytest

from jaiweb.devtools.cluster import Cluster, ClusterError
from tests.support import children
from tests.support.clusters import (
    SETUP,
    Api,
    Watcher,
    freeze_outside_a_transaction,
    lease_of,
    metrics,
)
from tests.support.waiting import wait_until

pytestmark = pytest.mark.slow


@pytest.fixture
def database(cluster_database):
    return cluster_database


@pytest.fixture
def env(cluster_env):
    return cluster_env


def test_the_command_refuses_sqlite_and_the_in_memory_layer(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env["DATABASE_URL"] = f"sqlite:///{tmp_path}/db.sqlite3"
    done = children.manage(None, "cluster", "--logs", str(tmp_path / "logs"), base_env=env)
    assert done.returncode == 1
    stderr = "\n".join(done.err)
    assert "DATABASE_URL must be a postgres:// URL" in stderr
    assert "REDIS_URL must be set" in stderr
    assert "in-memory channel layer" in stderr
    assert not (tmp_path / "db.sqlite3").exists()  # refused before migrating anything


def test_the_command_starts_everything_and_stops_cleanly_on_sigterm(env, tmp_path):
    logs = tmp_path / "logs"
    proc = children.Child(None, "cluster", "--port", "0", "--logs", str(logs), base_env=env)
    try:
        ready = proc.wait_for("jaiweb cluster ready", timeout=120)
        lines = proc.out[: proc.out.index(ready) + 1]
        assert ready.startswith("jaiweb cluster ready: 2 web, 1 runner"), lines
        rows = {line.split()[0]: line.split() for line in lines if " pid " in line}
        assert set(rows) == {"web-1", "web-2", "runner-1"}
        pids = {name: int(row[2]) for name, row in rows.items()}
        for name in ("web-1", "web-2"):
            url = rows[name][3]
            health = httpx.get(url + "healthz", timeout=10)
            assert health.json()["ok"] is True
            assert httpx.get(url + "static/admin/css/base.css", timeout=10).status_code == 200
            assert rows[name][-1] == str(logs / f"{name}.log")
        assert "runner" in rows["runner-1"][3]
        code = proc.terminate(timeout=30)
    finally:
        proc.stop()
    rest = "\n".join(proc.out[len(lines) :] + proc.err)
    assert code == 0, rest
    assert "jaiweb cluster stopped: web-1 0, web-2 0, runner-1 0" in rest
    for pid in pids.values():
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    assert "jaiweb runner stopped" in (logs / "runner-1.log").read_text()
    assert (logs / "migrate.log").exists()


def test_the_api_refuses_to_start_without_postgres(tmp_path):
    cluster = Cluster(logs=tmp_path, env={"DATABASE_URL": "sqlite:///x.sqlite3"}, port=0)
    with pytest.raises(ClusterError, match="PostgreSQL and Redis"):
        cluster.start()
    assert cluster.processes == {}


def test_a_port_in_use_is_refused_before_anything_starts(env, tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        cluster = Cluster(web=1, runners=0, port=port, logs=tmp_path, env=env)
        with pytest.raises(ClusterError, match=f"http://127.0.0.1:{port}/ is already in use"):
            cluster.start()
    assert cluster.processes == {}
    assert not (tmp_path / "migrate.log").exists()


def test_two_web_processes_one_runner_and_takeovers(env, database, tmp_path):
    paused = tmp_path / "paused-render"
    cluster = Cluster(
        web=2,
        runners=1,
        port=0,
        logs=tmp_path / "logs",
        env=env,
        runner_env={
            "JAIWEB_PAUSE_AT": "during_tool:generate_image",
            "JAIWEB_PAUSE_FILE": str(paused),
        },
        stop_timeout=5,
    )
    cluster.start()
    watcher = None
    try:
        web_a, web_b = cluster.urls
        for url in cluster.urls:
            health = httpx.get(url + "healthz", timeout=10)
            assert health.status_code == 200
            assert health.json() == {
                "ok": True,
                "database": "ok",
                "channel_layer": "ok",
                "layer": "channels_redis.pubsub.RedisPubSubChannelLayer",
                "database_vendor": "postgresql",
                "director": "offline",
                "cache": "ok",
                "disk": "ok",
                "disk_full": [],
                "image_backend": "local",
                "image": "ok",
            }
        secrets = json.loads(cluster.manage("shell", "-c", SETUP).strip().splitlines()[-1])
        api_b = Api(web_b, secrets["token"])
        api_a = Api(web_a, secrets["token"])
        session_id = api_b.session_create("cluster")

        # A watcher on web A, a prompt through web B, the run in the runner process.
        watcher = Watcher(web_a, session_id, secrets["cookie"])
        wait_until(lambda: watcher.frames, 10, "the first regions on the socket")
        assert metrics(web_a)["jaiweb_websocket_watchers"] == 1
        assert metrics(web_b)["jaiweb_websocket_watchers"] == 0
        op1 = api_b.prompt(session_id, "/say hello from web B")
        assert api_a.finished(op1)["outcome"] == "completed"
        wait_until(lambda: "hello from web B" in watcher.streamed(), 10, "the streamed narration")
        wait_until(lambda: "Finished: completed" in "".join(watcher.frames), 10, "the end line")

        # SIGKILL the runner inside a paid render; a new runner finishes the run.
        op2 = api_b.prompt(session_id, "/draw 擂台对决")
        wait_until(paused.exists, 30, "the runner to pause inside the render")
        assert cluster.kill("runner-1", signal.SIGKILL) == -signal.SIGKILL
        assert api_a.operation(op2)["state"] == "running"
        before = metrics(web_b)
        assert before["jaiweb_operations:running"] == 1
        assert before["jaiweb_render_charges"] == 1  # rendered and charged before the kill
        cluster.add_runner()  # runner-2: no pause; JAIWEB_LEASE_SECONDS=2 like the others
        done = api_a.finished(op2)
        assert done["outcome"] == "completed"
        t1s = [
            r
            for r in done["records"]
            if r["type"] == "tool_dispatched" and r["tool_name"] == "generate_image"
        ]
        assert [t["dispatch_attempt"] for t in t1s] == [1, 2]  # same key: the stored panel
        after = metrics(web_a)
        assert after["jaiweb_render_charges"] == 1  # never charged twice
        assert after["jaiweb_render_charged_credits"] == 10
        assert after["jaiweb_operation_reclaims"] == 1  # the takeover
        assert after["jaiweb_operations:completed"] == 2
        assert after["jaiweb_operations:running"] == 0

        # A runner frozen while it holds the lease: taken over only after the lease expires.
        assert cluster.kill("runner-2", signal.SIGTERM) == 0  # a clean stop
        frozen_at = tmp_path / "paused-state"
        frozen = cluster.add_runner(
            env={
                "JAIWEB_PAUSE_AT": "after_t1:set_character_state",
                "JAIWEB_PAUSE_FILE": str(frozen_at),
            }
        )
        op3 = api_b.prompt(session_id, "/state 猪猪侠 mood=开心")
        wait_until(frozen_at.exists, 30, "the runner to pause after T1")
        freeze_outside_a_transaction(cluster, frozen, database, op3)
        owner, fencing, expires = lease_of(database, op3)
        assert fencing == 1 and f":{cluster.members[frozen].pid}:" in owner
        replacement = cluster.add_runner()  # the frozen one is alive: it waits for the expiry
        done = api_a.finished(op3)
        assert done["outcome"] == "completed"
        assert datetime.fromisoformat(done["finished_at"]) > expires
        assert lease_of(database, op3)[1] == 2  # one takeover: runner-4's claim
        assert cluster.kill(replacement, signal.SIGTERM) == 0  # the frozen one alone is left
        settled = (lease_of(database, op3), len(api_a.operation(op3)["records"]))
        cluster.kill(frozen, signal.SIGCONT, wait=False)  # wakes up: its lease is gone
        # The sentinel: a prompt only the woken runner can run. Its heartbeat's timer ran
        # out while it was frozen, so it tried its lost lease at once on waking; by the time
        # it has run a whole new prompt, that try is long over, and it changed nothing.
        op4 = api_b.prompt(session_id, "/say 醒来之后")
        assert api_a.finished(op4)["outcome"] == "completed"
        assert (lease_of(database, op3), len(api_a.operation(op3)["records"])) == settled
        assert api_a.operation(op3)["outcome"] == "completed"
        cluster.kill(frozen, signal.SIGKILL)
        entries = api_a.http.get(f"/sessions/{session_id}/entries").json()
        results = [
            e for e in entries if e["type"] == "message" and e["message"]["role"] == "tool_result"
        ]
        assert [e["message"]["tool_name"] for e in results] == [
            "generate_image",
            "set_character_state",
        ]
        cluster.manage("journal_check")  # exit 0: every tree and operation log is sound
    finally:
        if watcher is not None:
            watcher.close()
        codes = cluster.stop()
    assert codes["web-1"] == 0 and codes["web-2"] == 0, codes
    for m in cluster.members.values():
        assert not m.running
