"""A child process that writes to the journals, for the concurrency and kill tests.

Run as ``python -m tests.support.append_worker MODE ...`` from the repository root, with
``DJANGO_SETTINGS_MODULE`` and ``DATABASE_URL`` naming the test database. Output is one
JSON object per line on stdout, flushed at once; nothing else is written there.

``serve``
    Prints ``{"ready": true}`` once its database connection is open, then reads one JSON
    command per line from stdin and answers each with one line:
    ``{"op": "append", "session_id", "expected_leaf_id", "entry_id", "start_at"}`` appends
    one message entry after ``expected_leaf_id`` with ``services.entry_append``;
    ``{"op": "accept", "session_id", "text", "start_at"}`` calls ``operation_accept``.
    Both wait until the wall clock reaches ``start_at`` first, so several workers given
    the same time start their transactions together. Answers: ``{"result": "ok", ...}``,
    ``{"result": "stale", "actual": ...}`` or ``{"result": "error", "type", "message"}``.

``loop SESSION_ID [COUNT]``
    Reads the session's stored leaf, prints ``{"ready": true, "leaf": ...}``, then appends
    one entry per transaction, each naming the previous one as the expected leaf, and
    after each commit prints ``{"ack": ENTRY_ID}``. Forever (until killed), or COUNT times
    and then exits 0.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import quote, urlencode

REPO_ROOT = Path(__file__).resolve().parents[2]
# Set on the workers' PostgreSQL connections, so a test can wait for their backends to end.
APPLICATION_NAME = "jaiweb_append_worker"


def _emit(obj: dict) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def _wait_until(start_at: float) -> None:
    while True:
        left = start_at - time.time()
        if left <= 0:
            return
        if left > 0.002:
            time.sleep(left - 0.001)


def _serve() -> int:
    from django.db import connection
    from django.utils import timezone

    from jaiweb.store.errors import StaleLeaf
    from jaiweb.store.ids import new_id
    from jaiweb.store.services import entry_append, operation_accept
    from journal.entries import MessageEntry, UserMessage

    connection.ensure_connection()
    _emit({"ready": True})
    for line in sys.stdin:
        if not line.strip():
            continue
        cmd = json.loads(line)
        connection.ensure_connection()  # connected before the start, so only the race is timed
        _wait_until(cmd["start_at"])
        try:
            if cmd["op"] == "append":
                entry = MessageEntry(
                    id=cmd["entry_id"] or new_id("e"),
                    parent_id=cmd["expected_leaf_id"],
                    timestamp=timezone.now(),
                    message=UserMessage(content=f"from process {cmd['entry_id']}"),
                )
                seq = entry_append(
                    session_id=cmd["session_id"],
                    entries=[entry],
                    expected_leaf_id=cmd["expected_leaf_id"],
                )
                _emit({"result": "ok", "seq": seq, "entry_id": entry.id})
            elif cmd["op"] == "accept":
                got = operation_accept(session_id=cmd["session_id"], text=cmd["text"])
                _emit(
                    {
                        "result": "ok",
                        "operation_id": got.operation_id,
                        "queued": got.queued,
                        "input_entry_id": got.input_entry_id,
                    }
                )
            else:
                raise ValueError(f"unknown op {cmd['op']!r}")
        except StaleLeaf as exc:
            _emit({"result": "stale", "actual": exc.actual})
        except Exception as exc:
            _emit({"result": "error", "type": type(exc).__qualname__, "message": str(exc)})
    connection.close()
    return 0


def _loop(session_id: str, count: int | None) -> int:
    from django.utils import timezone

    from jaiweb.store.ids import new_id
    from jaiweb.store.models import ComicSession
    from jaiweb.store.services import entry_append
    from journal.entries import MessageEntry, UserMessage

    leaf = ComicSession.objects.values_list("leaf_id", flat=True).get(pk=session_id)
    _emit({"ready": True, "leaf": leaf})
    done = 0
    while count is None or done < count:
        entry = MessageEntry(
            id=new_id("e"),
            parent_id=leaf,
            timestamp=timezone.now(),
            message=UserMessage(content=f"loop entry {done}"),
        )
        entry_append(session_id=session_id, entries=[entry], expected_leaf_id=leaf)
        # Committed: only now is the entry acknowledged.
        _emit({"ack": entry.id})
        leaf = entry.id
        done += 1
    return 0


# --- the parent's side ------------------------------------------------------------


def database_url(settings_dict: dict) -> str:
    """A DATABASE_URL naming the database of ``settings_dict`` (the test database)."""
    engine = settings_dict["ENGINE"]
    if engine.endswith(("sqlite3", "store.sqlite")):
        path = Path(settings_dict["NAME"]).resolve()
        return "sqlite:///" + quote(str(path))  # an absolute path: sqlite:////abs/path
    if engine.endswith("postgresql"):
        auth = quote(settings_dict["USER"] or "", safe="")
        if settings_dict.get("PASSWORD"):
            auth += ":" + quote(settings_dict["PASSWORD"], safe="")
        host = settings_dict["HOST"] or "localhost"
        port = f":{settings_dict['PORT']}" if settings_dict.get("PORT") else ""
        options = {**settings_dict.get("OPTIONS", {}), "application_name": APPLICATION_NAME}
        name = quote(settings_dict["NAME"], safe="")
        return f"postgres://{auth}@{host}{port}/{name}?{urlencode(options)}"
    raise ValueError(f"no worker support for {engine}")


class Worker:
    """A running ``append_worker``: JSON lines in on stdin, JSON lines out from stdout."""

    def __init__(self, settings_dict: dict, *args: str):
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "jaiweb.settings",
            "DATABASE_URL": database_url(settings_dict),
            "PYTHONUNBUFFERED": "1",
        }
        self.stderr = tempfile.TemporaryFile()  # noqa: SIM115 - closed by close()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.support.append_worker", *args],
            cwd=REPO_ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            text=True,
        )
        self.lines: list[dict] = []  # every complete line read so far
        self._queue: queue.Queue[dict | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            if not line.endswith("\n"):
                break  # cut by a kill: never acknowledged
            obj = json.loads(line)
            self.lines.append(obj)
            self._queue.put(obj)
        self._queue.put(None)

    def errors(self) -> str:
        self.stderr.seek(0)
        return self.stderr.read().decode(errors="replace")[-4000:]

    def receive(self, timeout: float = 30) -> dict:
        try:
            obj = self._queue.get(timeout=timeout)
        except queue.Empty:
            message = f"worker silent for {timeout}s; stderr:\n{self.errors()}"
            raise AssertionError(message) from None
        if obj is None:
            self._queue.put(None)
            raise AssertionError(f"worker ended (rc={self.proc.poll()}); stderr:\n{self.errors()}")
        return obj

    def send(self, command: dict) -> None:
        self.proc.stdin.write(json.dumps(command) + "\n")
        self.proc.stdin.flush()

    def kill(self) -> None:
        """SIGKILL, then wait for it and for everything it printed to be read."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)
        self._reader.join(timeout=10)

    def close(self) -> None:
        """End it however it is (always call in ``finally``)."""
        try:
            if self.proc.poll() is None and self.proc.stdin and not self.proc.stdin.closed:
                with contextlib.suppress(OSError, subprocess.TimeoutExpired):
                    self.proc.stdin.close()
                    self.proc.wait(timeout=5)
            self.kill()
        finally:
            for stream in (self.proc.stdin, self.proc.stdout):
                if stream is not None and not stream.closed:
                    with contextlib.suppress(OSError):
                        stream.close()
            self.stderr.close()


def main(argv: list[str]) -> int:
    import django

    django.setup()
    mode = argv[0]
    if mode == "serve":
        return _serve()
    if mode == "loop":
        return _loop(argv[1], int(argv[2]) if len(argv) > 2 else None)
    raise SystemExit(f"unknown mode {mode!r}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
