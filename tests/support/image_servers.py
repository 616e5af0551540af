"""Real loopback HTTP servers that speak the image backends' protocols, for the backends'
tests: OpenAI's Images API (``FakeOpenAIImages``) and AUTOMATIC1111's web API
(``FakeA1111``). Nothing in ``openai`` or ``httpx`` is mocked: the backends talk HTTP to
these servers, which answer as the real ones do, errors included.

Each server records every request (method, path, headers, decoded JSON body) in
``server.requests`` and sends a fresh PNG per picture (``server.sent`` holds the bytes of
each, in order), so a test can compare what was stored with what the server sent.
A failure (or any odd answer) is scripted with ``server.answer_next(status, body)``: the
next render request gets it.
``free_port_url()`` is an address where nothing listens.
"""

from __future__ import annotations

import base64
import json
import secrets
import socket
import struct
import threading
import time
import zlib
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.support.multipart import Part, form_parts

STEP_LIMIT = 5.0  # a simulated render never holds a test longer than this


@dataclass(frozen=True)
class Recorded:
    method: str
    path: str
    headers: dict[str, str]  # lower-cased names
    body: Any


def png(width: int = 2, height: int = 2) -> bytes:
    """A valid PNG of its own: random pixels, so two pictures never share their bytes."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data))
            + kind
            + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
        )

    rows = b"".join(b"\x00" + secrets.token_bytes(3 * width) for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def free_port_url() -> str:
    """An http:// address on loopback where nothing listens (connections are refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


@dataclass
class _Server:
    requests: list[Recorded] = field(default_factory=list)
    sent: list[bytes] = field(default_factory=list)
    failures: deque[tuple[int, Any]] = field(default_factory=deque)
    url: str = ""

    def answer_next(self, status: int, body: Any) -> None:
        """The next render request gets this answer (a dict or list as JSON, else text)."""
        self.failures.append((status, body))

    def renders(self) -> list[Recorded]:
        raise NotImplementedError

    def start(self) -> None:
        handler = type("Handler", (_Handler,), {"fake": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def answer(self, method: str, path: str, body: Any) -> tuple[int, Any]:
        raise NotImplementedError

    def picture(self) -> bytes:
        data = png()
        self.sent.append(data)
        return data


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    fake: _Server

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        pass

    def do_GET(self) -> None:
        self._handle("GET", None)

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        parts = form_parts(self.headers.get("Content-Type", ""), raw)
        if parts:  # a form: its text fields as str, its files as Part (name, bytes, type)
            body: Any = {p.name: p if p.filename is not None else p.text for p in parts}
        else:
            try:
                body = json.loads(raw)
            except ValueError:
                body = raw.decode("utf-8", "replace")
        self._handle("POST", body)

    def _handle(self, method: str, body: Any) -> None:
        headers = {name.lower(): value for name, value in self.headers.items()}
        self.fake.requests.append(Recorded(method, self.path, headers, body))
        self.close_connection = True
        status, answer = self.fake.answer(method, self.path, body)
        if isinstance(answer, (dict, list)):
            data, kind = json.dumps(answer).encode(), "application/json"
        else:
            data, kind = str(answer).encode(), "text/plain; charset=utf-8"
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()


# --- OpenAI Images --------------------------------------------------------------------


def openai_error(message: str, *, type: str, param: str | None, code: str | None) -> dict:
    return {"error": {"message": message, "type": type, "param": param, "code": code}}


@dataclass
class FakeOpenAIImages(_Server):
    """``POST /v1/images/generations``, ``POST /v1/images/edits`` and ``GET /v1/models`` as
    OpenAI answers them.

    As the real API: a GPT image model refuses ``response_format`` (400 ``unknown_parameter``)
    and always answers ``b64_json``; a DALL·E model answers a ``url`` unless asked for
    ``b64_json``. An edit is multipart form data (``model``, ``prompt``, ``image`` and the
    generation's other fields): a GPT image model takes a PNG, JPEG or WebP ``image``;
    ``dall-e-2`` (the default model) a square PNG with transparency; ``dall-e-3`` no edit
    at all. A recorded edit's body has its text fields as str and its files as ``Part``.
    ``api_key`` set: any other bearer token gets 401."""

    api_key: str | None = None

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    def renders(self) -> list[Recorded]:
        return [r for r in self.requests if r.path in (GENERATIONS, EDITS)]

    def edits(self) -> list[Recorded]:
        return [r for r in self.requests if r.path == EDITS]

    def answer(self, method: str, path: str, body: Any) -> tuple[int, Any]:
        if self.api_key is not None and self._token() != self.api_key:
            return 401, openai_error(
                "Incorrect API key provided.",
                type="invalid_request_error",
                param=None,
                code="invalid_api_key",
            )
        if (method, path) == ("GET", "/v1/models"):
            return 200, {"object": "list", "data": [{"id": "gpt-image-1", "object": "model"}]}
        if method != "POST" or path not in (GENERATIONS, EDITS):
            return 404, openai_error(
                f"Invalid URL ({method} {path})",
                type="invalid_request_error",
                param=None,
                code=None,
            )
        if self.failures:
            return self.failures.popleft()
        if not isinstance(body, dict) or not body.get("prompt"):
            return 400, openai_error(
                "Missing required parameter: 'prompt'.",
                type="invalid_request_error",
                param="prompt",
                code="missing_required_parameter",
            )
        model = str(body.get("model") or "dall-e-2")
        if path == EDITS:
            refused = _edit_refusal(model, body)
            if refused is not None:
                return 400, refused
        b64 = body.get("response_format") == "b64_json"
        if model.startswith("gpt-image"):
            if "response_format" in body:
                return 400, openai_error(
                    "Unknown parameter: 'response_format'.",
                    type="invalid_request_error",
                    param="response_format",
                    code="unknown_parameter",
                )
            b64 = True
        data = self.picture()
        image = (
            {"b64_json": base64.b64encode(data).decode()}
            if b64
            else {"url": f"{self.url}/images/{len(self.sent)}.png"}
        )
        return 200, {"created": int(time.time()), "data": [image]}

    def _token(self) -> str:
        return self.requests[-1].headers.get("authorization", "").removeprefix("Bearer ")


GENERATIONS = "/v1/images/generations"
EDITS = "/v1/images/edits"
EDIT_TYPES = ("image/png", "image/jpeg", "image/webp")


def _edit_refusal(model: str, body: dict[str, Any]) -> dict | None:
    """The 400 body OpenAI answers an edit it cannot make, or None when it can."""
    image = body.get("image")
    if not isinstance(image, Part):
        return openai_error(
            "Missing required parameter: 'image'.",
            type="invalid_request_error",
            param="image",
            code="missing_required_parameter",
        )
    if model == "dall-e-3":
        return openai_error(
            "Invalid value: 'dall-e-3'. Supported values are: 'dall-e-2' and the GPT image models.",
            type="invalid_request_error",
            param="model",
            code="invalid_value",
        )
    kind = image.content_type or ""
    if model.startswith("gpt-image") and kind not in EDIT_TYPES:
        return openai_error(
            f"Invalid file 'image': unsupported mimetype ('{kind}'). Supported file formats "
            "are 'image/jpeg', 'image/png', and 'image/webp'.",
            type="invalid_request_error",
            param="image",
            code="unsupported_file_mimetype",
        )
    if not model.startswith("gpt-image"):  # dall-e-2: a square RGBA PNG under 4 MB
        head = image.data[:33]
        if kind != "image/png" or not head.startswith(b"\x89PNG\r\n\x1a\n"):
            return openai_error(
                "Invalid input image - format must be a PNG.",
                type="invalid_request_error",
                param="image",
                code=None,
            )
        width, height, _depth, colour = struct.unpack(">IIBB", head[16:26])
        if width != height:
            return openai_error(
                "Invalid input image - image must be square.",
                type="invalid_request_error",
                param="image",
                code=None,
            )
        if colour not in (0, 4, 6):  # L, LA, RGBA (PNG colour types)
            mode = {2: "RGB", 3: "P"}.get(colour, str(colour))
            return openai_error(
                f"Invalid input image - format must be in ['RGBA', 'LA', 'L'], got {mode}.",
                type="invalid_request_error",
                param="image",
                code=None,
            )
    return None


# --- AUTOMATIC1111 ----------------------------------------------------------------------


@dataclass
class FakeA1111(_Server):
    """``POST /sdapi/v1/txt2img`` and ``GET /sdapi/v1/progress`` as the web UI answers them.

    A render takes ``step_seconds`` per sampling step (``steps`` of the request), during
    which ``/sdapi/v1/progress`` reports the step; then ``{"images": [<base64 PNG>],
    "parameters": <the request>, "info": "<json>"}``. An error is the web UI's JSON
    (``error``, ``detail``, ``body``, ``errors``). ``api`` False: started without ``--api``
    (every ``/sdapi`` route is a 404)."""

    step_seconds: float = 0.0
    api: bool = True
    state: dict[str, int] = field(
        default_factory=lambda: {"sampling_step": 0, "sampling_steps": 0, "job_count": 0}
    )

    def renders(self) -> list[Recorded]:
        return [r for r in self.requests if r.path == "/sdapi/v1/txt2img"]

    def answer(self, method: str, path: str, body: Any) -> tuple[int, Any]:
        route = urlsplit(path).path
        if not self.api or route not in ("/sdapi/v1/txt2img", "/sdapi/v1/progress"):
            return 404, {"detail": "Not Found"}
        if route == "/sdapi/v1/progress":
            return 200, {
                "progress": 0.0,
                "eta_relative": 0.0,
                "state": {"skipped": False, "interrupted": False, "job": "", **self.state},
                "current_image": None,
                "textinfo": None,
            }
        if method != "POST":
            return 405, {"detail": "Method Not Allowed"}
        if self.failures:
            return self.failures.popleft()
        steps = int(body.get("steps") or 20)
        self.state.update(job_count=1, sampling_step=0, sampling_steps=steps)
        deadline = time.monotonic() + STEP_LIMIT
        for step in range(1, steps + 1):
            if self.step_seconds and time.monotonic() < deadline:
                time.sleep(self.step_seconds)  # the GPU at work: one sampling step
            self.state["sampling_step"] = step
        self.state.update(job_count=0, sampling_step=0, sampling_steps=0)
        info = {"prompt": body.get("prompt"), "seed": body.get("seed"), "steps": steps}
        return 200, {
            "images": [base64.b64encode(self.picture()).decode()],
            "parameters": body,
            "info": json.dumps(info),
        }


def a1111_error(exc: str, errors: str, *, detail: str = "") -> dict:
    """The body the web UI's exception handler sends (modules/api/api.py)."""
    return {"error": exc, "detail": detail, "body": "", "errors": errors}


@pytest.fixture
def openai_images() -> Iterator[FakeOpenAIImages]:
    server = FakeOpenAIImages()
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def a1111() -> Iterator[FakeA1111]:
    server = FakeA1111()
    server.start()
    try:
        yield server
    finally:
        server.stop()
