"""The client's address behind proxies: X-Forwarded-For believed only from the proxies
configured in JAIWEB_TRUSTED_PROXIES, read from the right (issue 27.4)."""

from __future__ import annotations

import ipaddress
from collections import Counter

import pytest
from django.core.cache import cache
from django.test import Client
from django.urls import reverse

from jaiweb.ops.proxies import client_address
from jaiweb.store.services import entry_append, session_create
from jaiweb.store.shares import share_link_create
from tests.support.clocks import pin_the_minute
from tests.support.factories import user

NGINX = "127.0.0.1"  # the peer of every request the test client makes
LAN = (ipaddress.ip_network("10.0.0.0/8"), ipaddress.ip_network("127.0.0.1"))


@pytest.mark.parametrize(
    ("peer", "forwarded", "client"),
    [
        # The peer is no trusted proxy: its header is the client's own words.
        ("198.51.100.9", "203.0.113.5", "198.51.100.9"),
        # nginx appended the address it saw; what is left of it the client wrote.
        ("127.0.0.1", "6.6.6.6, 203.0.113.5", "203.0.113.5"),
        # Two trusted proxies in a row: skipped from the right.
        ("127.0.0.1", "6.6.6.6, 203.0.113.5, 10.1.2.3", "203.0.113.5"),
        # A trusted proxy with no header: the request is its own.
        ("127.0.0.1", "", "127.0.0.1"),
        # Only trusted proxies: the first of the chain.
        ("127.0.0.1", "10.9.9.9, 10.1.1.1", "10.9.9.9"),
        # Not an address where a proxy would have written one: the proxy that passed it on.
        ("127.0.0.1", "203.0.113.5, junk", "127.0.0.1"),
        ("127.0.0.1", "203.0.113.5, 10.1.1.1, unknown", "127.0.0.1"),
        ("127.0.0.1", "junk, 10.1.1.1", "10.1.1.1"),
        # Ports, brackets and IPv4-mapped IPv6 as proxies may write them.
        ("127.0.0.1", "203.0.113.5:4711", "203.0.113.5"),
        ("127.0.0.1", "[2001:db8::1]:443", "2001:db8::1"),
        ("127.0.0.1", "2001:db8::1", "2001:db8::1"),
        ("::ffff:127.0.0.1", "::ffff:203.0.113.5", "203.0.113.5"),
        # Spaces and empty items between commas change nothing.
        ("127.0.0.1", " 6.6.6.6 ,, 203.0.113.5 ", "203.0.113.5"),
    ],
)
def test_the_client_is_the_address_the_last_trusted_proxy_saw(peer, forwarded, client):
    assert client_address(peer, forwarded, LAN) == client


def test_with_no_trusted_proxy_the_peer_is_the_client():
    assert client_address("127.0.0.1", "203.0.113.5", ()) == "127.0.0.1"


# --- the share-view limit, as the review tried it --------------------------------------


@pytest.fixture
def shared(alice, settings, tmp_path, monkeypatch):
    """A share link's page, 120 views a minute per client, on a pinned minute; the counts
    of earlier tests (in the cache, by address) cleared."""
    cache.clear()
    settings.MEDIA_ROOT = tmp_path
    settings.JAIWEB_SHARE_VIEWS_PER_MINUTE = 120
    pin_the_minute(monkeypatch)
    session = session_create(owner=alice, title="shared")
    entry_append(session_id=session.id, entries=[user("u0", None, "画")], expected_leaf_id=None)
    _, token = share_link_create(session_id=session.id)
    yield reverse("shared-branch", args=[token])
    cache.clear()


def views(url: str, forwarded_for: list[str]) -> Counter:
    client = Client()
    return Counter(client.get(url, HTTP_X_FORWARDED_FOR=f).status_code for f in forwarded_for)


def made_up(n: int) -> list[str]:
    return [f"198.18.{i // 250}.{i % 250 + 1}" for i in range(n)]


@pytest.mark.django_db
def test_made_up_forwarded_addresses_do_not_escape_the_limit(shared, settings):
    """No trusted proxy (the default): 130 views, each naming another address, are one
    client's 130 views."""
    assert settings.JAIWEB_TRUSTED_PROXIES == ()
    assert views(shared, made_up(130)) == {200: 120, 429: 10}


@pytest.mark.django_db
def test_behind_a_trusted_proxy_the_address_it_saw_is_the_key(shared, settings):
    settings.JAIWEB_TRUSTED_PROXIES = (ipaddress.ip_network(NGINX),)
    # nginx's $proxy_add_x_forwarded_for: whatever the client sent, then the address it saw.
    spoofed = [f"{fake}, 203.0.113.5" for fake in made_up(130)]
    assert views(shared, spoofed) == {200: 120, 429: 10}
    # Another client behind the same proxy has a minute of its own.
    assert views(shared, ["6.6.6.6, 203.0.113.77"]) == {200: 1}


@pytest.mark.django_db
def test_an_untrusted_peer_cannot_speak_for_others(shared, settings):
    """A proxy is trusted, but this request comes from elsewhere: its header is ignored."""
    settings.JAIWEB_TRUSTED_PROXIES = (ipaddress.ip_network("10.0.0.0/8"),)
    assert views(shared, [f"{fake}, 10.1.1.1" for fake in made_up(121)]) == {200: 120, 429: 1}
