"""Child processes for the tests: the one launcher of the product's commands.

``Child`` runs ``manage.py <command>`` (``studio``, ``runagents``, ``cluster``, …) on a
database of the test's choosing and collects its output as it comes, so a test can wait
for a line, kill it from outside like a crash, stop it with SIGTERM like an operator, and
start another. Used by the crash, chaos and shutdown tests, the live studio of the fuzz
gates (tests/support/live.py), the browser tests (tests/support/browser.py), the studio
command's own tests and the bursts. ``settings_child``/``settings_of`` start Django alone
in a clean environment to read the settings it derives from that environment.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping
from pathlib import Path

from tests.support.append_worker import database_url as _settings_url
from tests.support.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
LISTENING = "jaiweb studio listening on "  # `manage.py studio` prints it, then the URL
FAULTS = ("JAIWEB_CRASH_AT", "JAIWEB_PAUSE_AT")  # never inherited: only when asked for
# The variables the settings read that a test's own environment may have set.
OURS = ("DEBUG", "SECRET_KEY", "DATABASE_URL", "REDIS_URL", "ALLOWED_HOSTS")


class ChildExited(AssertionError):
    """The child ended before printing what a test waited for."""


def database_url(database: Mapping | str) -> str:
    """DATABASE_URL for a child: a URL as given, or one for Django's settings dict of a
    connection (the test database, so the child and the test see the same rows)."""
    return database if isinstance(database, str) else _settings_url(dict(database))


class Child:
    """``manage.py <command>`` as a child process; its stdout and stderr lines collected
    (``out``, ``err``) by threads as they come.

    ``database``: a connection's settings dict, a DATABASE_URL, or None when ``env`` (or
    ``base_env``) names it. The environment is this process's (or ``base_env``, in full)
    plus ``env``; fault points are only set when ``env`` sets them.
    """

    def __init__(
        self,
        database: Mapping | str | None,
        *command: str,
        env: Mapping[str, str] | None = None,
        base_env: Mapping[str, str] | None = None,
    ):
        full_env = {
            **(os.environ if base_env is None else base_env),
            "DJANGO_SETTINGS_MODULE": "jaiweb.settings",
            "PYTHONUNBUFFERED": "1",
        }
        if database is not None:
            full_env["DATABASE_URL"] = database_url(database)
        full_env.update(env or {})
        for name in FAULTS:
            if env is None or name not in env:
                full_env.pop(name, None)
        self.command = command
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

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def returncode(self) -> int | None:
        return self.process.poll()

    def line_with(self, text: str) -> str | None:
        """The first line (stdout, then stderr) that contains ``text``, if any yet."""
        return next((line for line in self.out + self.err if text in line), None)

    def wait_for(self, text: str, timeout: float = 30) -> str:
        """The first line containing ``text``, once printed; an ``AssertionError`` with the
        end of stderr if the process exits first or ``timeout`` seconds pass."""

        def seen() -> str | None:
            line = self.line_with(text)
            if line is None and self.process.poll() is not None:
                self._drain()
                line = self.line_with(text)
                if line is None:
                    raise ChildExited(
                        f"manage.py {' '.join(self.command)} exited "
                        f"({self.process.returncode}) before printing {text!r}; "
                        f"stderr:\n{self.stderr_tail()}"
                    )
            return line

        try:
            return wait_until(seen, timeout, f"{text!r} from manage.py {self.command[0]}")
        except ChildExited:
            raise
        except AssertionError as exc:
            raise AssertionError(f"{exc}; stderr:\n{self.stderr_tail()}") from None

    def listening_url(self, timeout: float = 60) -> str:
        """The studio's "http://127.0.0.1:PORT/", once it listens."""
        line = self.wait_for(LISTENING, timeout)
        return line.split(LISTENING, 1)[1].strip()

    def stderr_tail(self, lines: int = 30) -> str:
        return "\n".join(self.err[-lines:])

    def _drain(self) -> None:
        """Wait for the pumps: once the process is gone, what it wrote is read to the end."""
        for pump in self._pumps:
            pump.join(timeout=10)

    def wait_exit(self, timeout: float = 60) -> int:
        """The exit code, once the process has exited and all it wrote has been read (its
        last lines may still be in the pipes when it is gone)."""
        code = self.process.wait(timeout=timeout)
        self._drain()
        return code

    def terminate(self, timeout: float = 30) -> int:
        """SIGTERM (as an operator stops it) and its exit code; SIGKILL if it is still
        running after ``timeout`` seconds (then the code is -9)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.wait_exit(timeout)
        except subprocess.TimeoutExpired:
            self.stop()
            return self.wait_exit(10)

    def stop(self) -> None:
        """SIGKILL (from outside, like a crash), and wait for it to be gone."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)


def manage(
    database: Mapping | str | None,
    *command: str,
    env: Mapping[str, str] | None = None,
    base_env: Mapping[str, str] | None = None,
    timeout: float = 300,
) -> Child:
    """``manage.py <command>`` run to its end (killed after ``timeout`` seconds): the
    finished ``Child``, with its ``returncode`` and everything it printed."""
    child = Child(database, *command, env=env, base_env=base_env)
    try:
        child.wait_exit(timeout)
    finally:
        child.stop()
    return child


def studio(
    database: Mapping | str | None,
    env: Mapping[str, str] | None = None,
    *,
    base_env: Mapping[str, str] | None = None,
) -> Child:
    """``manage.py studio`` on a free port, on an already migrated database, quietly."""
    return Child(
        database, "studio", "--port", "0", "--no-migrate", "-v", "0", env=env, base_env=base_env
    )


def clean_env(**env: str) -> dict[str, str]:
    """This process's environment without the variables the settings read, plus ``env``."""
    base = {k: v for k, v in os.environ.items() if k not in OURS and not k.startswith("JAIWEB_")}
    return {**base, "DJANGO_SETTINGS_MODULE": "jaiweb.settings", **env}


_SETTINGS_DUMP = """
import json
import django
django.setup()
from django.conf import settings as s
print(json.dumps({
    "DEBUG": s.DEBUG,
    "SECRET_KEY": s.SECRET_KEY,
    "DATABASE": {k: str(v) for k, v in s.DATABASES["default"].items() if k != "TEST"},
    "DATABASE_OPTIONS": {
        k: ({n: (x.__name__ if callable(x) else x) for n, x in v.items()} if k == "pool" else v)
        for k, v in s.DATABASES["default"]["OPTIONS"].items()
    },
    "CHANNEL_LAYERS": s.CHANNEL_LAYERS,
    "ALLOWED_HOSTS": s.ALLOWED_HOSTS,
    "CSRF_TRUSTED_ORIGINS": s.CSRF_TRUSTED_ORIGINS,
    "SESSION_COOKIE_SECURE": s.SESSION_COOKIE_SECURE,
    "CSRF_COOKIE_SECURE": s.CSRF_COOKIE_SECURE,
    **{k: getattr(s, k) for k in dir(s) if k.startswith("JAIWEB_")},
}, default=str))  # JAIWEB_TRUSTED_PROXIES: ipaddress networks, as text
"""


def settings_child(**env: str) -> subprocess.CompletedProcess:
    """Start Django in a child process with a clean jaiweb environment plus ``env``; its
    stdout is the settings it derived, as JSON (when it started at all)."""
    return subprocess.run(
        [sys.executable, "-c", _SETTINGS_DUMP],
        env=clean_env(**env),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


def settings_of(**env: str) -> dict:
    """The settings Django derives from a clean environment plus ``env``."""
    r = settings_child(**env)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)
