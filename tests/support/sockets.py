"""Driving the studio's websocket (/ws/sessions/<id>/) in-process, through the whole ASGI
application, with the consumer's timers on a fake clock (tests/studio/test_consumer.py,
tests/studio/test_catch_up_versions.py).

"Nothing was sent" is only asserted once a later event shows the consumer is past the
point where it would have sent it: its next wait on the clock has begun (``due``) or a
later frame has arrived; then what it sent is in the communicator's queue already.
"""

from __future__ import annotations

import functools

from asgiref.sync import async_to_sync, sync_to_async
from channels.testing import WebsocketCommunicator
from django.test import Client

from jaiweb.asgi import application
from tests.support.clocks import FakeClock
from tests.support.waiting import wait_until_async


def in_loop(test):
    """Run an async test body on an event loop of its own (the ORM goes to threads)."""

    @functools.wraps(test)
    def run(*args, **kwargs):
        return async_to_sync(test)(*args, **kwargs)

    return run


def session_cookie(user) -> bytes:
    client = Client()
    client.force_login(user)
    return f"sessionid={client.cookies['sessionid'].value}".encode()


def nothing_sent(ws) -> bool:
    """No frame is waiting in the communicator: only meaningful after a sentinel."""
    return ws.output_queue.empty()


async def waiting_until(clock: FakeClock, at: float, what: str) -> None:
    """The consumer is waiting on the fake clock for ``at`` (a pass held to its interval,
    or a quiet pass): everything it did before that wait is done."""
    await wait_until_async(lambda: due(clock, at), 10, what)


def due(clock: FakeClock, at: float) -> bool:
    """Something waits on the fake clock for ``at`` (give or take float rounding)."""
    return any(abs(when - at) < 1e-6 for when in clock.pending())


async def connect(
    session_id: str,
    user=None,
    origin: bytes = b"http://127.0.0.1",
    extra=(),
    host: bytes = b"127.0.0.1",
):
    """A websocket to the session's socket: (communicator, whether it was accepted).
    As a browser's handshake, it names the server (``Host``) and the page (``Origin``)."""
    headers = [(b"host", host), (b"origin", origin), *extra]
    if user is not None:
        headers.append((b"cookie", await sync_to_async(session_cookie)(user)))
    communicator = WebsocketCommunicator(application, f"/ws/sessions/{session_id}/", headers)
    connected, _ = await communicator.connect(timeout=5)
    return communicator, connected


def consumer_clock(monkeypatch, *, quiet_seconds: float | None = None) -> FakeClock:
    """The consumers' clock for one test: time moves only with ``clock.advance``.
    ``quiet_seconds``: when the quiet pass after a burst comes (600: none within a test)."""
    from jaiweb.live import catch_up
    from jaiweb.studio import consumers

    fake = FakeClock()
    monkeypatch.setattr(consumers.SessionConsumer, "clock", staticmethod(fake.monotonic))
    monkeypatch.setattr(consumers.SessionConsumer, "sleep", staticmethod(fake.sleep))
    if quiet_seconds is not None:
        monkeypatch.setattr(catch_up, "QUIET_SECONDS", quiet_seconds)
    return fake
