"""What bench/web.py drives: realistic sessions, a timed model server, a studio child.

* ``studio_session_entries`` / ``session_from_entries``: a session as the studio makes it
  (bench/store.py's realistic 9-entry cycle, with the ``image_id`` a real
  ``generate_image`` result carries, so the strip shows its panels), bulk inserted;
* ``TokenServer``: a loopback OpenAI-compatible chat completions server whose streams
  are scripted token by token at fixed intervals; it records ``time.time()`` right after
  each token's bytes were written and flushed to the socket;
* ``StudioChild``: ``manage.py studio --port 0`` on the bench's database, its URL read
  from its first line, its CPU time read from ``/proc/<pid>/stat``.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import subprocess
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import psutil

ROOT = Path(__file__).resolve().parents[1]
LISTENING = "jaiweb studio listening on "
MODEL = "bench-model"
# --insecure: the studio serves its static files (htmx) with DEBUG off.
STUDIO_ARGS = ["studio", "--port", "0", "--no-migrate", "-v", "0", "--insecure"]


# --- timing a page ---------------------------------------------------------------------


def process_forget() -> None:
    """Forget what this process kept of any session (every parsed entry, every tree turn
    and its HTML, every strip panel's HTML, the regions kept by what they show, every
    panel's lettering): its next page is a cold one, as in a studio process that never
    read it."""
    from jaiweb.comic.exports import lettering_of
    from jaiweb.comic.selectors import panel_layer
    from jaiweb.store.entry_cache import parsed_entries
    from jaiweb.studio.regions import regions_by_content_forget
    from jaiweb.studio.templatetags.strip_render import strip_panels_forget
    from jaiweb.studio.templatetags.tree_render import tree_items_forget
    from jaiweb.studio.tree import turns_forget

    parsed_entries.clear()
    turns_forget()
    regions_by_content_forget()
    tree_items_forget()
    strip_panels_forget()
    lettering_of.cache_clear()
    panel_layer.cache_clear()


def timed_get(client, url: str, *, cold: bool = False):
    """(seconds, response) of one GET that must answer 200, ``cold`` or not."""
    if cold:
        process_forget()
    start = time.perf_counter()
    response = client.get(url)
    spent = time.perf_counter() - start
    if response.status_code != 200:
        raise RuntimeError(f"GET {url}: {response.status_code}")
    return spent, response


# --- sessions ----------------------------------------------------------------------------


def studio_entry(i: int, eid: str, parent: str | None, ts):
    """bench/store.py's realistic i-th entry; a generate_image result names its image."""
    from bench.store import realistic

    entry = realistic(i, eid, parent, ts)
    message = getattr(entry, "message", None)
    if getattr(message, "tool_name", None) == "generate_image":
        details = {
            "image_id": f"img_{i:08x}",
            "content_type": "image/svg+xml",
            "backend": "local",
            "cost": 4,
            "replayed": False,
        }
        entry = entry.model_copy(
            update={"message": message.model_copy(update={"details": details})}
        )
    return entry


def studio_session_entries(depth: int, forks: int, fork_len: int) -> list:
    """A main line of ``depth`` realistic entries (the leaf at its end) and ``forks`` side
    branches of ``fork_len`` entries, each opened by a branch entry somewhere on the line."""
    from bench.store import T0
    from journal.entries import BranchEntry

    entries, parent = [], None
    for i in range(depth):
        entry = studio_entry(i, f"m{i}", parent, T0 + timedelta(seconds=i))
        entries.append(entry)
        parent = entry.id
    leaf = parent
    for k in range(forks):
        at = f"m{(k * 7919) % max(depth - 1, 1)}"
        ts = T0 + timedelta(days=1, seconds=k)
        entries.append(BranchEntry(id=f"b{k}", parent_id=at, timestamp=ts, from_id=leaf))
        parent = f"b{k}"
        for j in range(fork_len - 1):
            entry = studio_entry(j, f"s{k}_{j}", parent, ts)
            entries.append(entry)
            parent = entry.id
    return entries


def session_from_entries(*, owner, entries: list, leaf_id: str, title: str):
    """A session holding ``entries`` (bulk inserted, as an import would), leaf ``leaf_id``."""
    from django.db import transaction

    from jaiweb.store.chains import entry_rows
    from jaiweb.store.models import ComicSession, Entry
    from jaiweb.store.services import session_create

    session = session_create(owner=owner, title=title)
    with transaction.atomic():
        Entry.objects.bulk_create(entry_rows(session.id, entries), batch_size=2000)
        ComicSession.objects.filter(pk=session.id).update(leaf_id=leaf_id, entry_count=len(entries))
    session.refresh_from_db()
    return session


# --- the timed model server --------------------------------------------------------------


@dataclass
class Stream:
    """One scripted answer: ``tokens`` sent ``interval`` seconds apart, then ``stop``."""

    tokens: list[str]
    interval: float
    sent: list[float] = field(default_factory=list)  # time.time() after each token's flush
    started: float | None = None  # time.time() when the request came in
    done: threading.Event = field(default_factory=threading.Event)


class TokenServer:
    """A loopback OpenAI-compatible ``POST /v1/chat/completions``, streams scripted in order.

    A streamed request with nothing scripted gets a short reply at once (the loop never
    asks for more than one here: text-only replies end the operation); a non-streamed one
    (the summary of a compaction) gets a short summary.
    """

    def __init__(self) -> None:
        self.scripts: deque[Stream] = deque()
        self.requests = 0
        self.summaries = 0  # non-streamed requests: the loop's compaction summaries
        handler = type("Handler", (_Handler,), {"server_": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    def script(self, tokens: list[str], interval: float) -> Stream:
        stream = Stream(list(tokens), interval)
        self.scripts.append(stream)
        return stream

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)


def _framed(body: Any) -> bytes:
    """One SSE event as one piece of a chunked transfer-encoded body."""
    text = body if isinstance(body, str) else json.dumps(body, ensure_ascii=False)
    data = f"data: {text}\n\n".encode()
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


def _chunk(delta: dict | None = None, finish: str | None = None, usage: dict | None = None):
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    body = {
        "id": "chatcmpl-bench",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": MODEL,
        "choices": choices,
    }
    if usage:
        body["usage"] = usage
    return _framed(body)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_: TokenServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.close_connection = True
        owner = self.server_
        owner.requests += 1
        try:
            streamed = bool(json.loads(raw).get("stream"))
        except (ValueError, AttributeError):
            streamed = False
        if not streamed:  # a summary for a compaction: answered at once, scripts kept
            owner.summaries += 1
            self._send_summary()
            return
        try:
            stream = owner.scripts.popleft()
        except IndexError:
            stream = Stream(["好的。"], 0.0)
        stream.started = time.time()
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.flush()
        try:
            self._send_tokens(stream)
            self.wfile.write(_chunk({}, "stop"))
            usage = {"prompt_tokens": 50, "completion_tokens": len(stream.tokens)}
            self.wfile.write(_chunk(usage={**usage, "total_tokens": 50 + len(stream.tokens)}))
            self.wfile.write(_framed("[DONE]") + b"0\r\n\r\n")
            self.wfile.flush()
        except OSError:
            pass
        finally:
            stream.done.set()

    def _send_summary(self) -> None:
        body = {
            "id": "chatcmpl-bench",
            "object": "chat.completion",
            "created": 1,
            "model": MODEL,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": "猪猪侠画了很多格漫画。"},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 500, "completion_tokens": 20, "total_tokens": 520},
        }
        data = json.dumps(body, ensure_ascii=False).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _send_tokens(self, stream: Stream) -> None:
        start = time.perf_counter() + 0.05  # the client is reading by then
        for i, token in enumerate(stream.tokens):
            delay = start + i * stream.interval - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            self.wfile.write(_chunk({"content": token}))
            self.wfile.flush()
            stream.sent.append(time.time())


# --- the studio child --------------------------------------------------------------------


class StudioChild:
    """``manage.py studio --port 0`` on the database in this process's DATABASE_URL."""

    def __init__(self, env: dict[str, str], root: Path = ROOT) -> None:
        full_env = {**os.environ, "PYTHONUNBUFFERED": "1", **env}
        for name in ("JAIWEB_CRASH_AT", "JAIWEB_PAUSE_AT", "DJANGO_ALLOW_ASYNC_UNSAFE"):
            full_env.pop(name, None)
        self.process = subprocess.Popen(
            [sys.executable, "manage.py", *STUDIO_ARGS],
            cwd=root,  # another checkout's (bench/load.py --compare): its code, this venv
            env=full_env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.pid = self.process.pid
        self.out: list[str] = []
        self.err: list[str] = []
        for stream, sink in ((self.process.stdout, self.out), (self.process.stderr, self.err)):
            threading.Thread(target=self._pump, args=(stream, sink), daemon=True).start()
        self.url = self._wait_url(60)
        self.port = int(self.url.rsplit(":", 1)[1])

    @staticmethod
    def _pump(stream, sink: list[str]) -> None:
        for line in stream:
            sink.append(line.rstrip("\n"))

    def _wait_url(self, timeout: float) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in self.out:
                if LISTENING in line:
                    return line.split(LISTENING, 1)[1].strip().rstrip("/")
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        self.stop()
        raise RuntimeError("the studio did not start:\n" + "\n".join(self.err[-30:]))

    def cpu_seconds(self) -> float:
        """User + system CPU time of the studio process so far (all its threads)."""
        times = psutil.Process(self.pid).cpu_times()
        return times.user + times.system

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        for pipe in (self.process.stdout, self.process.stderr):
            with contextlib.suppress(Exception):
                pipe.close()


def percentile(values: list[float], q: float) -> float:
    """The q-quantile (0..1) by linear interpolation between order statistics."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


# --- growth: sessions of one shape at several sizes ---------------------------------------

GROWTH_DEPTH = 800  # a bushy session's active path, whatever its size
REWIND_EVERY = 99  # bushy: a rewind on the active path every 11 turns of the 9-entry cycle
GROWTH_SIDE = 40  # bushy: the filler's side branches (a branch entry and 39 entries)
_PERIOD = 9 * 50  # distinct payloads of the cycle; entry i is made from template i % _PERIOD


@dataclass
class Shape:
    """A growth session as rows to insert, and what bench/web.py's ``growth`` part asks of it."""

    specs: list  # (entry id, parent id, cycle index i or None for a branch entry, from id)
    leaf_id: str
    path_ids: list[str]  # root → leaf
    fork_at: str  # a fork point with the same three side branches in every size
    fork_line_child: str  # its child on the active path


def growth_shape(shape: str, size: int) -> Shape:
    """A ``size``-entry session, ``deep`` or ``bushy``, whose drawn parts are alike in
    every size: only the folded part of the tree grows.

    * both: bench/store.py's realistic 9-entry cycle on the active path; three side branches
      of 20 at one fork point in the middle of it (what ``tree?forks`` reads) and one of 10
      off each of two turns near the leaf (drawn open on the page);
    * ``deep``: the active path is one chain of ``size - 80`` entries;
    * ``bushy``: the active path is GROWTH_DEPTH entries deep and passes a rewind every
      REWIND_EVERY entries (an abandoned stretch of 5, then a ``branch`` entry back to where
      it started), so it is read as 9 chains; the rest of the entries hang off the folded
      stretch of the path before its middle (m30 … m379, none drawn by the page, the fork
      point or the page of the path that bench/web.py reads) as side branches of
      GROWTH_SIDE (for 100,000 entries, ~2,500 of them, ~7 on each node there).
    """
    bushy = shape == "bushy"
    depth = GROWTH_DEPTH if bushy else size - (3 * 20 + 2 * 10)
    specs: list = []
    path_ids: list[str] = []

    def side(at: str, name: str, length: int, start: int = 0) -> None:
        specs.append((f"{name}b", at, None, at))
        parent = f"{name}b"
        for j in range(length - 1):
            specs.append((f"{name}{j}", parent, start + j, None))
            parent = f"{name}{j}"

    parent = None
    for i in range(depth):
        specs.append((f"m{i}", parent, i, None))
        path_ids.append(f"m{i}")
        parent = f"m{i}"
        if bushy and i % REWIND_EVERY == REWIND_EVERY - 1 and i < depth - 1:
            dead = parent  # a stretch the person left, then a rewind back to after m{i}
            for k in range(5):
                specs.append((f"d{i}_{k}", dead, i + 1 + k, None))
                dead = f"d{i}_{k}"
            specs.append((f"r{i}", parent, None, dead))
            path_ids.append(f"r{i}")
            parent = f"r{i}"
    middle = 9 * (depth // 18) + 3  # a final reply: where "continue from here" goes
    fork_at = f"m{middle}"
    for k in range(3):
        side(fork_at, f"f{k}_", 20)
    for back in (45, 120):
        side(f"m{9 * ((depth - back) // 9) - 1}", f"n{back}_", 10)  # off a final reply
    if bushy:
        low, high = 30, middle - 23  # folded: before the fork point and the path page
        k = 0
        while len(specs) < size:
            at = low + (k * 7919) % (high - low)
            if at != middle:
                side(f"m{at}", f"g{k}_", min(GROWTH_SIDE, size - len(specs)), start=at + 1)
            k += 1
    return Shape(specs, f"m{depth - 1}", path_ids, fork_at, f"m{middle + 1}")


@functools.cache
def _templates() -> list[dict]:
    from bench.store import T0
    from journal.entries import entry_to_dict

    return [entry_to_dict(studio_entry(i, "x", None, T0)) for i in range(_PERIOD)]


def _payload(i: int | None, eid: str, parent: str | None, stamp: str, from_id: str | None):
    """What ``entry_to_dict(studio_entry(i, ...))`` gives, from a template: its id, parent,
    time, tool call ids and image id are the entry's own (texts repeat every _PERIOD)."""
    if i is None:
        return {"id": eid, "parent_id": parent, "timestamp": stamp, "type": "branch",
                "from_id": from_id}  # fmt: skip
    made = {**_templates()[i % _PERIOD], "id": eid, "parent_id": parent, "timestamp": stamp}
    message = made.get("message")
    if message and message.get("tool_calls"):
        calls = [{**c, "id": f"call_{i}"} for c in message["tool_calls"]]
        made["message"] = {**message, "tool_calls": calls}
    elif message and "tool_call_id" in message:
        message = {**message, "tool_call_id": f"call_{i - 1}"}
        if "image_id" in message["details"]:
            message["details"] = {**message["details"], "image_id": f"img_{i:08x}"}
        made["message"] = message
    return made


def growth_session(*, owner, shape: Shape, title: str):
    """The session of ``shape``, bulk inserted as the store lays rows out (chains included)."""
    from django.db import transaction

    from bench.store import T0
    from jaiweb.store.chains import chain_positions
    from jaiweb.store.models import ComicSession, Entry
    from jaiweb.store.services import session_create

    session = session_create(owner=owner, title=title)
    positions = chain_positions((eid, parent) for eid, parent, _i, _f in shape.specs)

    def rows():
        for seq, ((eid, parent, i, from_id), (chain, pos)) in enumerate(
            zip(shape.specs, positions, strict=True), 1
        ):
            at = T0 + timedelta(seconds=seq)
            yield Entry(
                session_id=session.id,
                seq=seq,
                entry_id=eid,
                parent_id=parent,
                type="branch" if i is None else _templates()[i % _PERIOD]["type"],
                payload=_payload(i, eid, parent, at.strftime("%Y-%m-%dT%H:%M:%SZ"), from_id),
                timestamp=at,
                chain=chain,
                chain_pos=pos,
            )

    with transaction.atomic():
        Entry.objects.bulk_create(rows(), batch_size=2000)
        ComicSession.objects.filter(pk=session.id).update(
            leaf_id=shape.leaf_id, entry_count=len(shape.specs)
        )
    session.refresh_from_db()
    return session
