"""A local scale-out cluster: N daphne web processes and M runner processes, supervised.

``manage.py cluster`` is the command line of this module; tests use it as an API::

    cluster = Cluster(web=2, runners=1, port=0, logs=tmp, env={...})
    cluster.start()                 # migrate once, spawn all, wait until each is ready
    cluster.urls                    # ["http://127.0.0.1:41234/", ...]
    cluster.kill("runner-1")        # SIGKILL by default; any signal
    cluster.add_runner(env={...})   # another runner ("runner-2")
    cluster.restart("web-1")
    cluster.stop()                  # SIGTERM all, SIGKILL what is left after the timeout

Every child runs ``manage.py``/daphne from the repository root with the cluster's
environment (``env``, by default this process's) plus its own extra variables, and writes
its stdout and stderr to ``<logs>/<name>.log``. A cluster needs PostgreSQL and Redis:
its processes share one database and one channel layer, which neither an SQLite file
nor the in-memory layer can be for them.

Children get their own process group (a Ctrl-C in the terminal reaches the launcher
only, which then stops them in order) and, on Linux, SIGTERM when the thread that
started them ends, so a launcher killed with SIGKILL leaves no orphans.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import httpx

ROOT = Path(__file__).resolve().parents[2]  # the repository: manage.py lives here
# runagents prints "jaiweb runner <identity> running N worker(s)" once it claims work
READY_LINE = re.compile(rb"jaiweb runner \S+ running \d+ worker")


class ClusterError(Exception):
    pass


def scale_out_problems(env: Mapping[str, str]) -> list[str]:
    """Why this environment cannot run a cluster (empty when it can)."""
    problems = []
    database = (env.get("DATABASE_URL") or "").strip()
    if urlsplit(database).scheme not in ("postgres", "postgresql"):
        shown = database or "unset, so the SQLite file db.sqlite3"
        problems.append(
            f"DATABASE_URL must be a postgres:// URL (it is {shown}): the processes of a "
            "cluster share one database server; SQLite is a file that only processes on "
            "this one machine can open, and they all queue behind its single write lock."
        )
    if not (env.get("REDIS_URL") or "").strip():
        problems.append(
            "REDIS_URL must be set (e.g. redis://127.0.0.1:6379/0): without it each process "
            "has its own in-memory channel layer, so a browser watching through one web "
            "process would never see the live events of a runner in another process."
        )
    return problems


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def port_is_free(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as daphne (Twisted) binds
        try:
            s.bind((host, port))
        except OSError:
            return False
        return True


def _die_with_parent() -> None:
    """In the child before exec: SIGTERM when the parent (thread) goes away (Linux only)."""
    if sys.platform.startswith("linux"):
        import ctypes

        with contextlib.suppress(Exception):
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def _url(host: str, port: int) -> str:
    return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"


@dataclass
class Member:
    """One child process of the cluster."""

    name: str
    role: str  # "web" or "runner"
    log: Path
    port: int | None = None
    host: str = "127.0.0.1"
    env: dict[str, str] = field(default_factory=dict)  # its own, on top of the cluster's
    wrap: tuple[str, ...] = ()  # a command it runs under, e.g. ("unshare", "--pid", …)
    process: subprocess.Popen | None = None
    log_offset: int = 0  # where this start's output begins in the log

    @property
    def url(self) -> str | None:
        return _url(self.host, self.port) if self.port is not None else None

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def describe(self) -> str:
        where = self.url if self.role == "web" else "runner (runagents)"
        return f"{self.name:<10} pid {self.pid!s:<7} {where:<26} log {self.log}"

    def log_tail(self, lines: int = 30) -> str:
        try:
            text = self.log.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])


class Cluster:
    def __init__(
        self,
        *,
        web: int = 2,
        runners: int = 1,
        port: int = 8100,
        host: str = "127.0.0.1",
        logs: Path | str,
        env: Mapping[str, str] | None = None,
        web_env: Mapping[str, str] | None = None,
        runner_env: Mapping[str, str] | None = None,
        workers: int = 4,
        serve_static: bool = True,
        migrate: bool = True,
        ready_timeout: float = 60,
        stop_timeout: float = 10,
        python: str = sys.executable,
    ) -> None:
        if web < 1 or runners < 0:
            raise ClusterError("a cluster needs at least 1 web process and 0 or more runners")
        self.env = dict(os.environ if env is None else env)
        self.host = host
        self.logs = Path(logs)
        self.workers = workers
        self.serve_static = serve_static
        self.migrate = migrate
        self.ready_timeout = ready_timeout
        self.stop_timeout = stop_timeout
        self.python = python
        ports = (
            [free_port(host) for _ in range(web)] if port == 0 else [port + i for i in range(web)]
        )
        self.members: dict[str, Member] = {}
        for i, p in enumerate(ports, 1):
            self._add(
                Member(f"web-{i}", "web", self.logs / f"web-{i}.log", p, host, dict(web_env or {}))
            )
        for _ in range(runners):
            self._add(self._runner_member(runner_env))

    # -- what it is ---------------------------------------------------------------------

    @property
    def urls(self) -> list[str]:
        return [m.url for m in self.members.values() if m.role == "web"]

    @property
    def processes(self) -> dict[str, subprocess.Popen]:
        return {n: m.process for n, m in self.members.items() if m.process is not None}

    def member(self, name: str) -> Member:
        try:
            return self.members[name]
        except KeyError:
            raise ClusterError(
                f"no process named {name!r} (have {', '.join(self.members)})"
            ) from None

    # -- starting -----------------------------------------------------------------------

    def check(self) -> None:
        problems = scale_out_problems(self.env)
        if problems:
            raise ClusterError(
                "the cluster needs PostgreSQL and Redis:\n  " + "\n  ".join(problems)
            )

    def start(self) -> None:
        """Check, migrate once, start every process, wait until each is ready."""
        self.check()
        for m in self.members.values():
            if m.role == "web" and not m.running and not port_is_free(m.host, m.port):
                raise ClusterError(f"{m.name}: {m.url} is already in use by another process")
        self.logs.mkdir(parents=True, exist_ok=True)
        if self.migrate:
            self.manage("migrate", "--noinput", log=self.logs / "migrate.log")
        try:
            for m in self.members.values():
                self._spawn(m)
            for m in self.members.values():
                self._wait_ready(m)
        except BaseException:
            self.stop()
            raise

    def add_runner(
        self, env: Mapping[str, str] | None = None, wait: bool = True, wrap: tuple[str, ...] = ()
    ) -> str:
        """Start one more runner (``runner-N``) with these extra variables, under the
        ``wrap`` command if given (another pid namespace stands for another host); its name."""
        m = self._add(self._runner_member(env))
        m.wrap = tuple(wrap)
        self._spawn(m)
        if wait:
            self._wait_ready(m)
        return m.name

    def restart(self, name: str, env: Mapping[str, str] | None = None, wait: bool = True) -> None:
        """Stop one process (SIGTERM, then SIGKILL) and start it again; ``env`` replaces its own."""
        m = self.member(name)
        self._stop_members([m])
        if env is not None:
            m.env = dict(env)
        self._spawn(m)
        if wait:
            self._wait_ready(m)

    def manage(self, *args: str, log: Path | None = None, timeout: float = 120) -> str:
        """Run a ``manage.py`` command with the cluster's environment; its output."""
        done = subprocess.run(
            [self.python, str(ROOT / "manage.py"), *args],
            cwd=ROOT,
            env=self._child_env({}),
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        output = done.stdout + done.stderr
        if log is not None:
            log.write_text(output)
        if done.returncode != 0:
            raise ClusterError(
                f"manage.py {' '.join(args)} failed with exit code {done.returncode}:\n"
                + output[-3000:]
            )
        return done.stdout

    # -- signals and stopping -----------------------------------------------------------

    def kill(self, name: str, sig: int = signal.SIGKILL, wait: bool = True) -> int | None:
        """Send ``sig`` to one process. For SIGKILL/SIGTERM/SIGINT, wait for it to end and
        return its exit code; other signals (SIGSTOP, SIGCONT, …) are only sent."""
        m = self.member(name)
        if not m.running:
            return m.process.returncode if m.process is not None else None
        m.process.send_signal(sig)
        if wait and sig in (signal.SIGKILL, signal.SIGTERM, signal.SIGINT):
            if sig != signal.SIGKILL:
                os.kill(m.pid, signal.SIGCONT)  # a stopped process cannot act on SIGTERM
            return m.process.wait(timeout=self.stop_timeout + 30)
        return None

    def stop(self) -> dict[str, int | None]:
        """SIGTERM every running process, SIGKILL whatever still runs after the timeout."""
        self._stop_members(list(self.members.values()))
        return {n: m.process.returncode for n, m in self.members.items() if m.process is not None}

    def __enter__(self) -> Cluster:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- inside -------------------------------------------------------------------------

    def _add(self, m: Member) -> Member:
        self.members[m.name] = m
        return m

    def _runner_member(self, env: Mapping[str, str] | None) -> Member:
        n = 1 + sum(1 for m in self.members.values() if m.role == "runner")
        return Member(f"runner-{n}", "runner", self.logs / f"runner-{n}.log", env=dict(env or {}))

    def _child_env(self, extra: Mapping[str, str]) -> dict[str, str]:
        env = {**self.env, "DJANGO_SETTINGS_MODULE": "jaiweb.settings", "PYTHONUNBUFFERED": "1"}
        if not (env.get("JAIWEB_PUBLIC_URL") or "").strip():
            # Where the studio is: publish_panel's default feed webhook is <public URL>/feed/.
            env["JAIWEB_PUBLIC_URL"] = self.urls[0]
        env.update(extra)
        return env

    def _argv(self, m: Member) -> list[str]:
        if m.role == "web":
            app = "jaiweb.ops.asgi:application" if self.serve_static else "jaiweb.asgi:application"
            # No --proxy-headers: daphne would believe the leftmost X-Forwarded-For entry,
            # which the client writes; jaiweb.ops.proxies reads it (JAIWEB_TRUSTED_PROXIES).
            return [
                self.python,
                "-m",
                "daphne",
                "-b",
                m.host,
                "-p",
                str(m.port),
                app,
            ]
        return [self.python, str(ROOT / "manage.py"), "runagents", "--workers", str(self.workers)]

    def _spawn(self, m: Member) -> None:
        m.log.parent.mkdir(parents=True, exist_ok=True)
        argv = [*m.wrap, *self._argv(m)]
        with m.log.open("ab") as log:
            m.log_offset = log.tell()
            stamp = time.strftime("%Y-%m-%d %H:%M:%S")
            log.write(f"--- {stamp} {m.name}: {' '.join(argv)}\n".encode())
            log.flush()
            m.process = subprocess.Popen(
                argv,
                cwd=ROOT,
                env=self._child_env(m.env),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                process_group=0,
                preexec_fn=_die_with_parent,
            )

    def _wait_ready(self, m: Member) -> None:
        deadline = time.monotonic() + self.ready_timeout
        while time.monotonic() < deadline:
            if not m.running:
                raise ClusterError(
                    f"{m.name} exited with code {m.process.returncode} before it was ready; "
                    f"the end of {m.log}:\n{m.log_tail()}"
                )
            if self._is_ready(m):
                return
            time.sleep(0.1)
        raise ClusterError(
            f"{m.name} was not ready after {self.ready_timeout:.0f} s; the end of {m.log}:\n"
            + m.log_tail()
        )

    def _is_ready(self, m: Member) -> bool:
        if m.role == "web":
            try:
                return httpx.get(m.url + "healthz", timeout=3).status_code == 200
            except httpx.HTTPError:
                return False
        # A runner is ready once it says so (in this start's part of its log).
        with m.log.open("rb") as log:
            log.seek(m.log_offset)
            return READY_LINE.search(log.read()) is not None

    def _stop_members(self, members: list[Member]) -> None:
        running = [m for m in members if m.running]
        for m in running:
            try:
                m.process.send_signal(signal.SIGTERM)
                m.process.send_signal(signal.SIGCONT)  # in case it was stopped (SIGSTOP)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + self.stop_timeout
        for m in running:
            try:
                m.process.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                m.process.kill()
                m.process.wait(timeout=30)
