"""Only pages of the site's own origin open the studio's websocket (issue 27.5).

A page on http://localhost:9999 opened Alice's socket on 127.0.0.1:8200 and received her
events: Channels' AllowedHostsOriginValidator looked at the Origin's host only. The rule
(jaiweb/ops/origins.py) is checked on handshake scopes first, then through the whole ASGI
application with Alice's cookie. tests/studio/test_websocket_fuzz.py knocks with foreign
origins on a real daphne too.
"""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from django.test import override_settings

from jaiweb.ops.origins import origin_allowed
from jaiweb.store.services import session_create
from tests.support.sockets import connect, in_loop


def scope(*headers: tuple[str, str], scheme: str = "ws") -> dict:
    return {
        "type": "websocket",
        "scheme": scheme,
        "headers": [(k.encode(), v.encode()) for k, v in headers],
    }


def handshake(host: str | None, origin: str | None, *extra, scheme: str = "ws") -> dict:
    headers = [*extra]
    if host is not None:
        headers.append(("host", host))
    if origin is not None:
        headers.append(("origin", origin))
    return scope(*headers, scheme=scheme)


@pytest.mark.parametrize(
    ("host", "origin"),
    [
        ("127.0.0.1:8200", "http://127.0.0.1:8200"),
        ("localhost:8000", "http://localhost:8000"),
        ("127.0.0.1", "http://127.0.0.1"),
        ("[::1]:8200", "http://[::1]:8200"),
        ("LocalHost:8000", "http://localhost:8000"),  # a host's case is not its name
    ],
)
def test_the_sites_own_origin_is_accepted(host, origin):
    assert origin_allowed(handshake(host, origin))


@pytest.mark.parametrize(
    ("host", "origin"),
    [
        ("127.0.0.1:8200", "http://localhost:9999"),  # the finding: another port, another name
        ("127.0.0.1:8200", "http://127.0.0.1:9999"),  # another port only
        ("127.0.0.1:8200", "http://127.0.0.1"),  # no port is port 80
        ("127.0.0.1", "http://127.0.0.1:80"),  # Origin and Host must name it alike
        ("127.0.0.1:8200", "https://127.0.0.1:8200"),  # https page, plain socket
        ("127.0.0.1:8200", "http://localhost:8200"),  # another name of the same machine
        ("127.0.0.1:8200", "http://evil.example"),
        ("127.0.0.1:8200", "http://127.0.0.1:8200.evil.example"),
        ("127.0.0.1:8200", "null"),  # a sandboxed frame or a file: page
        ("127.0.0.1:8200", ""),
        ("127.0.0.1:8200", None),  # no Origin at all
        (None, "http://127.0.0.1:8200"),  # no Host: nothing to be the same as
        ("evil.example:8200", "http://evil.example:8200"),  # a Host not in ALLOWED_HOSTS
    ],
)
def test_any_other_origin_is_refused(host, origin):
    assert not origin_allowed(handshake(host, origin))


def test_two_origins_are_refused_even_when_one_is_the_sites():
    both = scope(
        ("host", "127.0.0.1:8200"),
        ("origin", "http://127.0.0.1:8200"),
        ("origin", "http://evil.example"),
    )
    assert not origin_allowed(both)


def test_a_secure_socket_is_of_the_https_origin():
    assert origin_allowed(handshake("127.0.0.1:8200", "https://127.0.0.1:8200", scheme="wss"))
    assert not origin_allowed(handshake("127.0.0.1:8200", "http://127.0.0.1:8200", scheme="wss"))


@override_settings(SECURE_PROXY_SSL_HEADER=("HTTP_X_FORWARDED_PROTO", "https"))
def test_behind_the_tls_proxy_its_forwarded_scheme_decides():
    """daphne puts no ``wss`` in the scope behind a proxy: the proxy's header says it, as
    it does for Django's own CSRF check (JAIWEB_HTTPS sets SECURE_PROXY_SSL_HEADER)."""
    proxied = ("x-forwarded-proto", "https")
    assert origin_allowed(handshake("127.0.0.1:8200", "https://127.0.0.1:8200", proxied))
    assert not origin_allowed(handshake("127.0.0.1:8200", "http://127.0.0.1:8200", proxied))
    plain = ("x-forwarded-proto", "http")
    assert origin_allowed(handshake("127.0.0.1:8200", "http://127.0.0.1:8200", plain))
    assert not origin_allowed(handshake("127.0.0.1:8200", "https://127.0.0.1:8200", plain))


def test_without_the_proxy_setting_a_forwarded_scheme_is_not_believed():
    forged = ("x-forwarded-proto", "https")
    assert not origin_allowed(handshake("127.0.0.1:8200", "https://127.0.0.1:8200", forged))


@override_settings(
    ALLOWED_HOSTS=["comics.example.com", "127.0.0.1"],
    CSRF_TRUSTED_ORIGINS=["https://comics.example.com", "https://*.comics.example.org"],
)
def test_the_trusted_origins_are_accepted_whatever_the_host():
    """A page of a trusted origin, reaching a process by another name (a proxy's Host)."""
    assert origin_allowed(handshake("127.0.0.1:8100", "https://comics.example.com"))
    assert origin_allowed(handshake("127.0.0.1:8100", "https://eu.comics.example.org"))
    assert not origin_allowed(handshake("127.0.0.1:8100", "http://comics.example.com"))
    assert not origin_allowed(handshake("127.0.0.1:8100", "https://comics.example.com:8443"))
    assert not origin_allowed(handshake("127.0.0.1:8100", "http://eu.comics.example.org"))
    assert not origin_allowed(handshake("127.0.0.1:8100", "https://comics.example.org.evil"))


def test_the_public_url_is_read_at_each_handshake(settings):
    """`manage.py studio` fills JAIWEB_PUBLIC_URL in after the settings were loaded."""
    settings.JAIWEB_PUBLIC_URL = None
    page = handshake("127.0.0.1:8100", "https://comics.example.com")
    assert not origin_allowed(page)
    settings.JAIWEB_PUBLIC_URL = "https://Comics.example.com/studio/"
    assert origin_allowed(page)
    assert not origin_allowed(handshake("127.0.0.1:8100", "https://comics.example.com:444"))


# --- through the whole application, as the finding was made ---------------------------


@pytest.mark.django_db(transaction=True)
@in_loop
async def test_a_page_on_another_port_gets_no_socket_and_no_event(alice):
    episode = await sync_to_async(session_create)(owner=alice, title="hers")
    ws, ok = await connect(
        episode.id, alice, host=b"127.0.0.1:8200", origin=b"http://localhost:9999"
    )
    assert not ok
    await ws.disconnect()
    ws, ok = await connect(
        episode.id, alice, host=b"127.0.0.1:8200", origin=b"https://127.0.0.1:8200"
    )
    assert not ok
    await ws.disconnect()
    ws, ok = await connect(
        episode.id, alice, host=b"127.0.0.1:8200", origin=b"http://127.0.0.1:8200"
    )
    assert ok
    assert 'id="tree"' in await ws.receive_from(timeout=5)  # her regions, to her own page
    await ws.disconnect()
