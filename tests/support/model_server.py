"""A real loopback HTTP server playing an OpenAI-compatible chat completions endpoint.

Tests script its answers in order (``server.stream(...)``, ``server.json(...)``,
``server.cut(...)``, ``server.stall(...)``); each ``POST /v1/chat/completions`` pops the
next one. Every request is recorded (headers and decoded JSON body) in ``server.requests``.
Nothing in ``openai`` or ``httpx`` is mocked: the provider talks HTTP to this server.
``chunk``, ``text``, ``usage_chunk`` and ``call_piece`` build the chunks it streams, and
``provider`` an ``OpenAICompatProvider`` pointed at it.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from jaiweb.agent.providers.openai_compat import OpenAICompatProvider

STALL_LIMIT = 5.0  # a stalled answer never holds a test longer than this


@dataclass(frozen=True)
class Recorded:
    path: str
    headers: dict[str, str]  # lower-cased names
    body: Any


@dataclass(frozen=True)
class Scripted:
    kind: str  # "stream" | "json" | "cut" | "stall"
    chunks: tuple[Any, ...] = ()  # stream chunks: dicts (sent as JSON) or raw str data
    done: bool = True  # end a stream with "data: [DONE]"
    chunked: bool = True  # a cut inside chunked framing (else: a close-delimited body)
    status: int = 200
    body: Any = None


@dataclass
class FakeLLMServer:
    responses: deque[Scripted] = field(default_factory=deque)
    requests: list[Recorded] = field(default_factory=list)
    base_url: str = ""
    release: threading.Event = field(default_factory=threading.Event)

    # -- scripting --------------------------------------------------------------------

    def stream(self, *chunks: Any, done: bool = True) -> None:
        """An SSE answer: each chunk as ``data: …``, then ``data: [DONE]`` unless ``done=False``."""
        self.responses.append(Scripted("stream", chunks, done=done))

    def json(self, status: int, body: Any) -> None:
        """A plain JSON answer with this status."""
        self.responses.append(Scripted("json", status=status, body=body))

    def cut(self, *chunks: Any, chunked: bool = True) -> None:
        """Send these SSE chunks, then close the socket abruptly (no [DONE], no terminator)."""
        self.responses.append(Scripted("cut", chunks, chunked=chunked))

    def stall(self, *chunks: Any) -> None:
        """Send these SSE chunks, then go silent until the test ends."""
        self.responses.append(Scripted("stall", chunks))

    # -- lifecycle --------------------------------------------------------------------

    def start(self) -> None:
        handler = type("Handler", (_Handler,), {"fake": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        port = self._httpd.server_address[1]
        self.base_url = f"http://127.0.0.1:{port}/v1"
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        self.release.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)


def _event(chunk: Any) -> bytes:
    data = chunk if isinstance(chunk, str) else json.dumps(chunk, ensure_ascii=False)
    return f"data: {data}\n\n".encode()


def _framed(data: bytes) -> bytes:
    """One piece of a chunked transfer-encoded body."""
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    fake: FakeLLMServer

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        try:
            body: Any = json.loads(raw)
        except ValueError:
            body = raw.decode("utf-8", "replace")
        headers = {name.lower(): value for name, value in self.headers.items()}
        self.fake.requests.append(Recorded(self.path, headers, body))
        self.close_connection = True
        if self.path != "/v1/chat/completions":
            self._send_json(404, {"error": {"message": f"no route {self.path}"}})
            return
        try:
            script = self.fake.responses.popleft()
        except IndexError:
            self._send_json(500, {"error": {"message": "the fake server has no scripted answer"}})
            return
        if script.kind == "json":
            self._send_json(script.status, script.body)
        elif script.kind == "stream":
            self._send_stream(script.chunks, done=script.done)
        elif script.kind == "cut":
            self._send_cut(script.chunks, chunked=script.chunked)
        else:
            self._send_stall(script.chunks)

    def _send_json(self, status: int, body: Any) -> None:
        data = json.dumps(body, ensure_ascii=False).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _start_sse(self, *, chunked: bool = True) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.flush()

    def _send_stream(self, chunks: tuple[Any, ...], *, done: bool) -> None:
        self._start_sse()
        for chunk in chunks:
            self.wfile.write(_framed(_event(chunk)))
            self.wfile.flush()
        if done:
            self.wfile.write(_framed(_event("[DONE]")))
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _send_cut(self, chunks: tuple[Any, ...], *, chunked: bool) -> None:
        self._start_sse(chunked=chunked)
        for chunk in chunks:
            data = _event(chunk)
            self.wfile.write(_framed(data) if chunked else data)
            self.wfile.flush()
        self._abort()

    def _send_stall(self, chunks: tuple[Any, ...]) -> None:
        self._start_sse()
        for chunk in chunks:
            self.wfile.write(_framed(_event(chunk)))
            self.wfile.flush()
        self.fake.release.wait(STALL_LIMIT)
        self._abort()

    def _abort(self) -> None:
        """Close the socket at once, mid-body."""
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)
        self.connection.close()


@pytest.fixture
def fake_llm() -> Iterator[FakeLLMServer]:
    """A running fake server (``fake_llm.base_url`` is ``http://127.0.0.1:PORT/v1``)."""
    server = FakeLLMServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()


# --- what the server streams, and a provider pointed at it ----------------------------

MODEL = "comic-model-1"


def provider(server: FakeLLMServer, **kwargs) -> OpenAICompatProvider:
    kwargs.setdefault("api_key", "sk-test")
    return OpenAICompatProvider(model=MODEL, base_url=server.base_url, timeout=2.0, **kwargs)


def chunk(delta: dict | None = None, finish: str | None = None, **extra) -> dict:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": MODEL,
        "choices": [{"index": 0, "delta": delta or {}, "finish_reason": finish}],
        **extra,
    }


def text(piece: str) -> dict:
    return chunk({"content": piece})


def usage_chunk(prompt: int, completion: int) -> dict:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": MODEL,
        "choices": [],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        },
    }


def call_piece(index: int | None, *, id=None, name=None, arguments: str = "") -> dict:
    piece: dict = {"function": {"arguments": arguments}}
    if index is not None:
        piece["index"] = index
    if id is not None:
        piece["id"] = id
        piece["type"] = "function"
    if name is not None:
        piece["function"]["name"] = name
    return chunk({"tool_calls": [piece]})
