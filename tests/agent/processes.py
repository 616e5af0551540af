"""Child processes of the product for crash tests: `manage.py studio` / `runagents`."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from tests.store.append_worker import database_url

ROOT = Path(__file__).resolve().parents[2]


class Child:
    """A `manage.py` command on the test database; its output is collected as it comes."""

    def __init__(self, settings_dict: dict, *command: str, env: dict | None = None):
        full_env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "jaiweb.settings",
            "DATABASE_URL": database_url(settings_dict),
            "PYTHONUNBUFFERED": "1",
            **(env or {}),
        }
        for name in ("JAIWEB_CRASH_AT", "JAIWEB_PAUSE_AT"):
            if env is None or name not in env:
                full_env.pop(name, None)
        self.process = subprocess.Popen(
            [sys.executable, "manage.py", *command],
            cwd=ROOT,
            env=full_env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.out: list[str] = []
        self.err: list[str] = []
        self._pumps = []
        for stream, sink in ((self.process.stdout, self.out), (self.process.stderr, self.err)):
            pump = threading.Thread(target=self._pump, args=(stream, sink), daemon=True)
            pump.start()
            self._pumps.append(pump)

    @staticmethod
    def _pump(stream, sink: list[str]) -> None:
        for line in stream:
            sink.append(line.rstrip("\n"))

    def wait_for(self, text: str, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(text in line for line in self.out + self.err):
                return
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        raise AssertionError(f"never saw {text!r}; stderr:\n" + "\n".join(self.err[-30:]))

    def wait_exit(self, timeout: float = 60) -> int:
        """The exit code, once the process has exited and all it wrote has been read (its
        last lines may still be in the pipes when it is gone)."""
        code = self.process.wait(timeout=timeout)
        for pump in self._pumps:
            pump.join(timeout=10)
        return code

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)


def studio(settings_dict: dict, env: dict | None = None) -> Child:
    child = Child(settings_dict, "studio", "--port", "0", "--no-migrate", "-v", "0", env=env)
    return child
