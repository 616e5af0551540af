"""The websocket fuzz test (issue 14): a real studio, a real socket, frames no page sends.

A real `manage.py studio` child (daphne, the channel layer, the consumer as deployed) and
the `websockets` client over loopback, so daphne's own limits (frame size, UTF-8 of text
frames) and the ASGI routing are under test too, not only the consumer: WebsocketCommunicator
would skip both. Each socket is either kept (it still answers a valid frame afterwards)
or closed cleanly: a close frame with a code, or, for an address no one may watch, the
handshake refused with 403. Afterwards the child is up, /healthz is ok and its stderr
holds no traceback.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from django.conf import settings
from django.db import connection
from django.test import Client
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import ClientConnection, connect

from jaiweb.store.services import session_create
from tests.support.live import LiveStudio, live_studio

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

TIMEOUT = 60  # generous: a busy 2-core machine; nothing here waits for a timeout to pass
ALERT = 'role="alert"'  # the consumer's answer to a frame it does not understand
REGIONS = 'id="tree"'  # a catch-up: every region of the studio page

# Text frames the consumer must refuse with an alert and stay open after.
BAD_TEXT = [
    "",
    "{",
    "not json",
    "\x00",
    "null",
    "true",
    "1e999",
    "123",
    '"catch_up"',
    "[]",
    '["catch_up"]',
    "{}",
    '{"kind": "catch_up"}',
    '{"type": null}',
    '{"type": 7}',
    '{"type": ["catch_up"]}',
    '{"type": {"catch_up": true}}',
    '{"type": "catch-up"}',
    '{"type": "CATCH_UP"}',
    '{"type": "session.event", "event": {"type": "text_delta", "text": "<b>x</b>"}}',
    '{"type": "websocket.disconnect"}',
    '{"type": "catch_up"' + " " * 5000 + "}",  # valid, but longer than any page sends
    "[" * 2000 + "]" * 2000,  # short enough to be parsed, nested deeper than Python recurses
    '{"a":' * 1500 + "1" + "}" * 1500,
    "\U0001f437" * 1000,
]
BAD_BINARY = [b"", b"\x00\xff\xfe", b'{"type": "catch_up"}', bytes(range(256)) * 8]


@pytest.fixture
def live(tmp_path):
    with live_studio(connection.settings_dict, {"JAIWEB_MEDIA_ROOT": str(tmp_path)}) as studio:
        yield studio
        assert not studio.tracebacks(), "\n\n".join(studio.tracebacks())
        assert studio.healthy()


def cookie_of(user) -> str:
    client = Client()
    client.force_login(user)
    return f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"


def open_socket(
    live: LiveStudio, path: str, cookie: str | None, origin: str | None = None
) -> ClientConnection:
    """A socket from a page of the studio's own origin, or of ``origin``."""
    return connect(
        live.ws_url + path.lstrip("/"),
        origin=origin or live.url.rstrip("/"),
        additional_headers={"Cookie": cookie} if cookie else {},
        open_timeout=TIMEOUT,
        close_timeout=TIMEOUT,
        max_size=None,
    )


def until(ws: ClientConnection, marker: str) -> str:
    """The next message holding ``marker`` (catch-ups may come in between)."""
    while True:
        message = ws.recv(timeout=TIMEOUT)
        if isinstance(message, str) and marker in message:
            return message


def still_open(ws: ClientConnection) -> None:
    ws.send('{"type": "catch_up"}')
    until(ws, REGIONS)


def closed_cleanly(ws: ClientConnection) -> int:
    """The server's close code, once its close frame has come."""
    with pytest.raises(ConnectionClosed) as closed:
        while True:
            ws.recv(timeout=TIMEOUT)
    assert closed.value.rcvd is not None, "the connection dropped without a close frame"
    return closed.value.rcvd.code


def test_frames_no_page_sends_are_refused_and_the_socket_is_kept(live, alice):
    session = session_create(owner=alice, title="fuzzed")
    with open_socket(live, f"/ws/sessions/{session.id}/", cookie_of(alice)) as ws:
        until(ws, REGIONS)
        for frame in [*BAD_TEXT, *BAD_BINARY]:
            ws.send(frame)
            try:
                until(ws, ALERT)
                still_open(ws)
            except ConnectionClosed as exc:
                raise AssertionError(f"{frame[:40]!r}… closed the socket: {exc}") from None
        # Many at once: one alert each, in order, and the socket is kept.
        for i in range(100):
            ws.send(f'{{"type": "unknown-{i}"}}')
        for _ in range(100):
            until(ws, ALERT)
        still_open(ws)


def test_frames_daphne_refuses_close_the_socket_with_a_code(live, alice):
    session = session_create(owner=alice, title="fuzzed")
    path, cookie = f"/ws/sessions/{session.id}/", cookie_of(alice)
    with open_socket(live, path, cookie) as ws:
        until(ws, REGIONS)
        ws.send("x" * (2 * 1024 * 1024))  # past daphne's 1 MiB message limit
        assert closed_cleanly(ws) == 1009  # message too big
    with open_socket(live, path, cookie) as ws:
        until(ws, REGIONS)
        ws.send(b"\xff\xfe not UTF-8", text=True)  # a text frame that is not UTF-8
        assert closed_cleanly(ws) == 1007  # invalid frame payload data
    with open_socket(live, path, cookie) as ws:  # and the next watcher is served as ever
        until(ws, REGIONS)
        still_open(ws)


def test_fifty_reconnects_in_a_row(live, alice):
    session = session_create(owner=alice, title="fuzzed")
    path, cookie = f"/ws/sessions/{session.id}/", cookie_of(alice)
    for _ in range(50):  # closed at once: the catch-up of each meets a closed socket
        with open_socket(live, path, cookie):
            pass
    for _ in range(5):  # closed by the client while the server may be sending
        with open_socket(live, path, cookie) as ws:
            ws.send('{"type": "catch_up"}')
    with open_socket(live, path, cookie) as ws:
        until(ws, REGIONS)
        still_open(ws)


def test_addresses_no_one_may_watch_are_refused_at_the_handshake(live, alice, bob):
    mine = session_create(owner=alice, title="mine")
    theirs = session_create(owner=bob, title="theirs")
    alice_cookie = cookie_of(alice)
    refused = [
        ("/ws/other/", alice_cookie),
        ("/ws/", alice_cookie),
        ("/ws/sessions/", alice_cookie),
        ("/ws/sessions//", alice_cookie),
        (f"/ws/sessions/{mine.id}", alice_cookie),  # no trailing slash: not routed
        (f"/ws/sessions/{mine.id}/extra/", alice_cookie),
        ("/ws/sessions/s_doesnotexist/", alice_cookie),
        ("/ws/sessions/%00/", alice_cookie),
        (f"/ws/sessions/{theirs.id}/", alice_cookie),  # someone else's session
        (f"/ws/sessions/{mine.id}/", None),  # anonymous
        (f"/ws/sessions/{mine.id}/", "sessionid=forged"),
        ("/not-ws-at-all/", alice_cookie),
    ]
    for path, cookie in refused:
        with pytest.raises(InvalidStatus) as refusal:
            open_socket(live, path, cookie)
        assert refusal.value.response.status_code == 403, path
    with open_socket(live, f"/ws/sessions/{mine.id}/", alice_cookie) as ws:
        until(ws, REGIONS)


def test_pages_of_other_origins_are_refused_at_the_handshake(live, alice):
    """Issue 27.5: a page on another port of the same machine, or the same address over
    https, opened the owner's socket (the Origin's host was all that was checked)."""
    mine = session_create(owner=alice, title="mine")
    path, cookie = f"/ws/sessions/{mine.id}/", cookie_of(alice)
    parts = urlsplit(live.url)
    scheme, host, port = parts.scheme, parts.hostname, parts.port
    other_port = port + 1 if port < 65535 else port - 1
    foreign = [
        f"{scheme}://localhost:{other_port}",
        f"{scheme}://{host}:{other_port}",
        f"https://{host}:{port}",
        f"{scheme}://localhost:{port}",
    ]
    for origin in foreign:
        with pytest.raises(InvalidStatus) as refusal:
            open_socket(live, path, cookie, origin=origin)
        assert refusal.value.response.status_code == 403, origin
    with open_socket(live, path, cookie) as ws:  # the studio's own page
        until(ws, REGIONS)
