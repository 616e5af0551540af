import os
import queue
import socket
import subprocess
import sys
import threading
from pathlib import Path

import httpx

BASE_DIR = Path(__file__).resolve().parent.parent.parent
READY = "jaiweb studio listening on "


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def spawn_studio(tmp_path: Path, *args: str) -> subprocess.Popen:
    env = dict(os.environ)
    env.update(
        DJANGO_SETTINGS_MODULE="jaiweb.settings",
        DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
        DEBUG="1",
    )
    with (tmp_path / "stderr.log").open("w") as stderr:
        return subprocess.Popen(
            [sys.executable, "manage.py", "studio", *args],
            cwd=BASE_DIR,
            env=env,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
        )


def wait_for_line(proc: subprocess.Popen, prefix: str, timeout: float = 60) -> str | None:
    """The first stdout line starting with `prefix`, or None if the process ends first."""
    lines: queue.Queue = queue.Queue()

    def pump():
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    while True:
        line = lines.get(timeout=timeout)
        if line is None or line.startswith(prefix):
            return line


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    proc.stdout.close()


def test_it_serves_pages_over_http(tmp_path):
    port = free_port()
    proc = spawn_studio(tmp_path, "--port", str(port))
    try:
        line = wait_for_line(proc, READY)
        assert line is not None, (tmp_path / "stderr.log").read_text()
        url = line.removeprefix(READY).strip()
        assert url == f"http://127.0.0.1:{port}/"

        with httpx.Client(base_url=url, timeout=10) as http:
            home = http.get("/")
            assert home.status_code == 200
            assert "Sign up" in home.text

            health = http.get("/healthz")
            assert health.status_code == 200
            assert health.json()["ok"] is True

            css = http.get("/static/admin/css/base.css")
            assert css.status_code == 200

        # It migrated the (temporary) database first.
        assert (tmp_path / "db.sqlite3").exists()
    finally:
        stop(proc)
    assert proc.returncode == 0


def test_it_fails_when_the_port_is_taken(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = spawn_studio(tmp_path, "--no-migrate", "--port", str(port))
        try:
            assert wait_for_line(proc, READY) is None
            assert proc.wait(timeout=30) != 0
        finally:
            stop(proc)
    assert f"could not listen on http://127.0.0.1:{port}/" in (tmp_path / "stderr.log").read_text()
