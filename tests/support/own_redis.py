"""A Redis server of the test's own, on a free port of 127.0.0.1, that the test may stop.

Never the machine's Redis on 6379: a test that stops Redis stops this one. The fixture
``own_redis`` (registered in tests/conftest.py) starts one per test and stops it at the
end if the test has not.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
from pathlib import Path

import pytest
import redis

from tests.support.waiting import wait_until

START_TIMEOUT = 10.0
STOP_TIMEOUT = 10.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class OwnRedis:
    """``redis-server`` as a child process, with no persistence, listening on loopback."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.log = folder / "redis.log"
        self.port = 0
        self.process: subprocess.Popen | None = None

    def url(self, db: int = 0) -> str:
        return f"redis://127.0.0.1:{self.port}/{db}"

    def answers(self) -> bool:
        client = redis.Redis(port=self.port, socket_connect_timeout=0.5, socket_timeout=0.5)
        try:
            return bool(client.ping())
        except redis.RedisError:
            return False
        finally:
            client.close()

    def start(self) -> OwnRedis:
        server = shutil.which("redis-server")
        assert server, "redis-server is not installed (apt-get install redis-server)"
        self.folder.mkdir(parents=True, exist_ok=True)
        for _ in range(3):  # another process may take the free port before the server does
            self.port = _free_port()
            argv = [server, "--port", str(self.port), "--bind", "127.0.0.1"]
            argv += ["--save", "", "--appendonly", "no", "--dir", str(self.folder)]
            with self.log.open("ab") as log:
                self.process = subprocess.Popen(
                    argv,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                )
            try:
                wait_until(
                    lambda: self.process.poll() is not None or self.answers(),
                    START_TIMEOUT,
                    f"redis-server on port {self.port}",
                )
            except AssertionError:
                self.stop()
                raise
            if self.process.poll() is None:
                return self
        raise AssertionError(f"redis-server did not start; {self.log}:\n{self.log.read_text()}")

    def stop(self) -> None:
        """SIGTERM the server and wait until it has exited: its port then refuses."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=STOP_TIMEOUT)


@pytest.fixture
def own_redis(tmp_path):
    server = OwnRedis(tmp_path / "redis").start()
    try:
        yield server
    finally:
        server.stop()
