"""The web processes' HTTP handler (jaiweb/ops/http.py): a request's signals, middleware
and view on one thread, kept for the requests after it."""

from __future__ import annotations

import asyncio
import sys
import threading

import pytest
from asgiref.sync import AsyncToSync
from asgiref.testing import ApplicationCommunicator
from django.core.signals import request_finished, request_started
from django.db import connection
from django.test import override_settings

from jaiweb.ops.http import GIL_SWITCH_SECONDS, KeptThreadHandler
from jaiweb.requests_first import answering_now
from tests.ops import http_urls
from tests.support.sockets import in_loop

TEST_CHAIN = override_settings(
    ROOT_URLCONF="tests.ops.http_urls",
    MIDDLEWARE=["tests.ops.http_urls.RecordingMiddleware"],
)


def scope(path: str) -> dict:
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": [(b"host", b"testserver")],
        "client": ("127.0.0.1", 40000),
        "server": ("testserver", 80),
    }


async def get(handler: KeptThreadHandler, path: str) -> tuple[int, bytes]:
    """The status and body of a GET through the handler, as daphne would call it."""
    talk = ApplicationCommunicator(handler, scope(path))
    await talk.send_input({"type": "http.request", "body": b""})
    start = await talk.receive_output(10)
    body = await talk.receive_output(10)
    await talk.wait(10)
    return start["status"], body["body"]


@pytest.fixture
def recorded(monkeypatch):
    """What ran on which thread, the request signals' receivers included."""
    monkeypatch.setattr(http_urls, "seen", [])

    def started(**kwargs):
        http_urls.seen.append(("request_started", threading.get_ident()))

    def finished(**kwargs):
        http_urls.seen.append(("request_finished", threading.get_ident()))

    request_started.connect(started)
    request_finished.connect(finished)
    yield http_urls.seen
    request_started.disconnect(started)
    request_finished.disconnect(finished)


@pytest.fixture
def loop_calls(monkeypatch) -> list[object]:
    """Every call a thread made back onto the event loop (asgiref's AsyncToSync)."""
    calls = []
    call = AsyncToSync.__call__

    def counted(self, *args, **kwargs):
        calls.append(self.awaitable)
        return call(self, *args, **kwargs)

    monkeypatch.setattr(AsyncToSync, "__call__", counted)
    return calls


@TEST_CHAIN
@in_loop
async def test_a_requests_signals_middleware_and_view_run_on_one_thread_off_the_loop(
    recorded, loop_calls
):
    handler = KeptThreadHandler()
    loop_calls.clear()  # the test's own way onto its loop (in_loop)
    assert await get(handler, "/plain") == (200, b"plain")
    assert loop_calls == []  # the chain never handed the request back to the loop
    assert [what for what, _ in recorded] == [
        "request_started",
        "middleware",
        "view",
        "request_finished",
    ]
    threads = {thread for _, thread in recorded}
    assert len(threads) == 1
    assert threading.get_ident() not in threads  # not the event loop's thread


@TEST_CHAIN
@in_loop
async def test_the_next_request_runs_on_the_thread_the_last_one_had(recorded):
    handler = KeptThreadHandler()
    for _ in range(5):
        assert await get(handler, "/plain") == (200, b"plain")
    assert len({thread for _, thread in recorded}) == 1
    assert handler.threads.made == 1
    assert handler.threads.idle == 1


@TEST_CHAIN
@in_loop
async def test_requests_at_the_same_time_each_have_a_thread(recorded, monkeypatch):
    # Each view waits until the other has started: on one thread they never would.
    monkeypatch.setattr(http_urls, "both_in", threading.Barrier(2, timeout=5))
    handler = KeptThreadHandler()
    answers = await asyncio.gather(get(handler, "/meeting"), get(handler, "/meeting"))
    assert answers == [(200, b"met"), (200, b"met")]
    views = [thread for what, thread in recorded if what == "view"]
    assert len(set(views)) == 2
    assert handler.threads.made == 2
    assert handler.threads.idle == 2


@TEST_CHAIN
@in_loop
async def test_threads_past_the_idle_ones_kept_are_let_go(recorded, monkeypatch):
    monkeypatch.setattr(http_urls, "both_in", threading.Barrier(2, timeout=5))
    handler = KeptThreadHandler()
    handler.threads.max_idle = 1
    answers = await asyncio.gather(get(handler, "/meeting"), get(handler, "/meeting"))
    assert answers == [(200, b"met"), (200, b"met")]
    assert handler.threads.made == 2
    assert handler.threads.idle == 1
    assert await get(handler, "/plain") == (200, b"plain")  # on the one kept
    assert handler.threads.made == 2


@TEST_CHAIN
@in_loop
async def test_an_async_view_answers(recorded):
    handler = KeptThreadHandler()
    assert await get(handler, "/awaited") == (200, b"awaited")
    assert [what for what, _ in recorded] == [
        "request_started",
        "middleware",
        "request_finished",
    ]


def test_the_application_serves_http_with_this_handler_and_the_shorter_switch_interval():
    from jaiweb.asgi import application

    assert isinstance(application.application_mapping["http"], KeptThreadHandler)
    assert sys.getswitchinterval() == pytest.approx(GIL_SWITCH_SECONDS)


@TEST_CHAIN
@in_loop
async def test_a_request_is_counted_as_answered_while_its_chain_runs():
    handler = KeptThreadHandler()
    assert answering_now() == 0
    assert await get(handler, "/answering") == (200, b"answering 1")
    assert answering_now() == 0


@pytest.mark.django_db(transaction=True)
@TEST_CHAIN
@in_loop
async def test_a_kept_thread_keeps_its_sqlite_connection_for_its_next_request_until_one_fails(
    recorded,
):
    handler = KeptThreadHandler()
    for path in ("/queried", "/queried", "/failing", "/queried"):
        assert (await get(handler, path))[0] == 200
    assert handler.threads.made == 1
    opened = [open_ for what, open_ in recorded if what == "connection open"]
    # SQLite: opening a connection costs more than a prompt's own queries, so the thread
    # keeps it between requests; a failed query closes it at that request's end.
    # PostgreSQL: each request takes one from the pool and gives it back.
    if connection.vendor == "sqlite":
        assert opened == [False, True, True, False]
    else:
        assert opened == [False, False, False, False]
