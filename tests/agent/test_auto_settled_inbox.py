"""Real crashes of an at-most-once render: the inbox settles itself where evidence decides.

`manage.py studio` renders through the openai backend (at most once) against a loopback
server that speaks the Images API and counts what it draws. The studio is killed at a
fault point; a new one recovers. When the render's result was stored under the call's key
before the crash, recovery confirms the call from it (a ``tool_resolved`` by the
reconciler, with the evidence): one request, one charge, the panel the server drew shown,
the session completed, and nothing for a person. When nothing was stored, the call waits
in the inbox for one.
"""

from __future__ import annotations

import base64
import io
import json
import struct
import threading
import zlib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.core.management import call_command
from django.db import connection

from jaiweb.agent.state import DEFAULT_STATE
from jaiweb.commands.inbox import inbox_items, inbox_resolve
from jaiweb.render.models import Image, LedgerEntry
from jaiweb.store.models import Entry, Operation
from jaiweb.store.selectors import operation_records
from jaiweb.store.services import operation_accept, session_create
from tests.support.children import studio
from tests.support.stories import STORY, STORY_SHAPE, entry_kinds
from tests.support.waiting import wait_until

pytestmark = pytest.mark.django_db(transaction=True)


def png(width: int = 3, height: int = 2) -> bytes:
    """A small, valid PNG: what the server draws."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = b"".join(b"\x00" + b"\xff\x80\x00" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


class ImagesServer(ThreadingHTTPServer):
    """`POST /v1/images/generations` answers one base64 PNG; every request is counted."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.picture = png()
        self.generations = 0
        self.lock = threading.Lock()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class _Handler(BaseHTTPRequestHandler):
    server: ImagesServer

    def log_message(self, format, *args) -> None:  # quiet
        pass

    def _answer(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._answer(200, {"object": "list", "data": []} if self.path == "/v1/models" else {})

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path != "/v1/images/generations":
            self._answer(404, {"error": {"message": f"no route {self.path}"}})
            return
        with self.server.lock:
            self.server.generations += 1
        picture = base64.b64encode(self.server.picture).decode()
        self._answer(200, {"created": 1, "data": [{"b64_json": picture}]})


@pytest.fixture
def images() -> Iterator[ImagesServer]:
    server = ImagesServer()
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


@pytest.fixture
def env(tmp_path, images):
    """The studio on the openai backend, pointed at the loopback server (under the names
    of both the image settings and the LLM's, which older builds read for images); the
    director stays the offline one."""
    return {
        "JAIWEB_MEDIA_ROOT": str(tmp_path / "media"),
        "JAIWEB_LEASE_SECONDS": "5",
        "JAIWEB_IMAGE_BACKEND": "openai",
        "JAIWEB_IMAGE_MODEL": "gpt-image-1",
        "JAIWEB_IMAGE_BASE_URL": images.base_url,
        "JAIWEB_IMAGE_API_KEY": "sk-test",
        "JAIWEB_LLM_BASE_URL": images.base_url,
        "JAIWEB_LLM_API_KEY": "sk-test",
    }


@pytest.fixture
def auto_session(alice):
    state = {**DEFAULT_STATE, "permission_mode": "auto"}
    return session_create(owner=alice, title="openai crash", initial_app_state=state)


def crash_at(point: str, op: str, env: dict) -> None:
    first = studio(connection.settings_dict, env={**env, "JAIWEB_CRASH_AT": point})
    try:
        assert first.wait_exit(60) == 137, "\n".join(first.err[-20:])
        assert any(f"JAIWEB_CRASHED {point.split(':')[0]}" in line for line in first.err)
    finally:
        first.stop()
    assert Operation.objects.get(pk=op).outcome is None


def image_results(session):
    return [
        e.message
        for e in (row.to_journal() for row in Entry.objects.filter(session=session))
        if e.type == "message"
        and e.message.role == "tool_result"
        and e.message.tool_name == "generate_image"
    ]


def journal_clean() -> None:
    out = io.StringIO()
    call_command("journal_check", stdout=out)
    assert out.getvalue().rstrip().endswith("OK"), out.getvalue()


@pytest.mark.parametrize("point", ["during_tool", "after_tool_effect"])
def test_a_render_stored_before_the_crash_settles_itself(
    point, auto_session, env, images, client, alice
):
    op = operation_accept(session_id=auto_session.id, text=STORY).operation_id
    crash_at(f"{point}:generate_image", op, env)
    assert images.generations == 1
    assert LedgerEntry.objects.filter(kind="charge").count() == 1  # rendered and charged
    dispatch = next(
        r
        for r in operation_records(operation_id=op)
        if r.type == "tool_dispatched" and r.tool_name == "generate_image"
    )
    assert dispatch.policy == "at_most_once"

    second = studio(connection.settings_dict, env=env)
    try:
        wait_until(lambda: Operation.objects.get(pk=op).outcome is not None, 60, "the run")
    finally:
        second.stop()

    assert Operation.objects.get(pk=op).outcome == "completed"
    assert entry_kinds(auto_session) == STORY_SHAPE
    assert images.generations == 1  # never asked to draw again
    assert LedgerEntry.objects.filter(kind="charge").count() == 1
    [resolved] = [r for r in operation_records(operation_id=op) if r.type == "tool_resolved"]
    assert (resolved.by, resolved.resolved_by, resolved.resolution) == (
        "reconciler",
        "reconciler",
        "confirmed",
    )
    image = Image.objects.get()
    assert resolved.evidence["kind"] == "render_job"
    assert resolved.evidence["idempotency_key"] == dispatch.idempotency_key
    assert resolved.evidence["image_id"] == image.id
    [result] = image_results(auto_session)
    assert result.details["image_id"] == image.id and result.details["backend"] == "openai"
    assert result.details["cost"] == 10 and not result.is_error
    assert not Operation.objects.get(pk=op).is_parked and inbox_items() == []

    # the panel shown is the one the server drew
    client.force_login(alice)
    page = client.get(f"/sessions/{auto_session.id}/").content.decode()
    assert f'data-panel="{image.id}"' in page
    served = client.get(f"/panels/{image.id}")
    assert served.status_code == 200
    assert b"".join(served.streaming_content if served.streaming else [served.content]) == (
        images.picture
    )
    journal_clean()


def test_a_crash_before_anything_was_stored_waits_for_a_person(
    auto_session, env, images, django_user_model
):
    op = operation_accept(session_id=auto_session.id, text=STORY).operation_id
    crash_at("after_t1:generate_image", op, env)
    assert images.generations == 0 and LedgerEntry.objects.filter(kind="charge").count() == 0

    second = studio(connection.settings_dict, env=env)
    try:
        wait_until(lambda: Operation.objects.get(pk=op).is_parked, 60, "parking")
        [item] = inbox_items()
        assert item.tool_name == "generate_image" and item.policy == "at_most_once"
        assert item.evidence["render_job"] is None
        assert "no job under the call's key" in item.attention
        assert [r.type for r in operation_records(operation_id=op)].count("tool_resolved") == 0
        journal_clean()

        # a person sees nothing was drawn and sends it again under the same key
        admin = django_user_model.objects.create_user("root", password="x", is_staff=True)
        inbox_resolve(
            user=admin,
            operation_id=op,
            tool_call_id=item.tool_call_id,
            resolution="retry",
            reason="the render service never received it",
        )
        wait_until(lambda: Operation.objects.get(pk=op).outcome is not None, 60, "the run")
    finally:
        second.stop()
    assert Operation.objects.get(pk=op).outcome == "completed"
    assert entry_kinds(auto_session) == STORY_SHAPE
    assert images.generations == 1 and LedgerEntry.objects.filter(kind="charge").count() == 1
    [resolved] = [r for r in operation_records(operation_id=op) if r.type == "tool_resolved"]
    assert resolved.resolved_by == "admin" and resolved.by == "root"
    journal_clean()
