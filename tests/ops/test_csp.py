"""The site's Content-Security-Policy (issue 27.6): on every page, and nothing in the
templates that it would refuse.

What a browser makes of the policy, page by page, is tests/e2e/test_csp.py's: it fails on
any violation Chromium reports.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from jaiweb.ops.csp import content_security_policy
from jaiweb.store.services import entry_append, session_create
from jaiweb.store.shares import share_link_create
from tests.support.factories import assistant, user

pytestmark = pytest.mark.django_db

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"
# The exported episode is a file of its own, with its own stricter policy (inline style
# only, no script at all: studio/views/files.py).
OWN_POLICY = {"studio/episode.html"}


def directives(policy: str) -> dict[str, list[str]]:
    out = {}
    for part in policy.split(";"):
        name, *sources = part.split()
        assert name not in out, f"{name} twice in {policy!r}"
        out[name] = sources
    return out


def assert_strict(policy: str, socket: str = "ws://testserver") -> None:
    d = directives(policy)
    assert d["script-src"] == ["'self'"]
    assert d["style-src"] == ["'self'"]
    assert d["object-src"] == ["'none'"]
    assert d["frame-ancestors"] == ["'none'"]
    assert d["base-uri"] == ["'self'"]
    assert d["form-action"] == ["'self'"]
    assert d["default-src"] == ["'self'"]
    assert d["connect-src"] == ["'self'", socket]
    assert "unsafe" not in policy and "*" not in policy and "data:" not in policy


@pytest.fixture
def episode(alice):
    """Alice's session with one turn (a share link needs a node to point at)."""
    session = session_create(owner=alice, title="Kung fu <b>pig</b>")
    turn = [user("u0", None, "a pig"), assistant("a0", "u0", "here he is")]
    entry_append(session_id=session.id, entries=turn, expected_leaf_id=None)
    return session


@pytest.fixture
def staff(django_user_model):
    return django_user_model.objects.create_user("root", password="x", is_staff=True)


@pytest.mark.parametrize(
    ("who", "url", "status"),
    [
        (None, "/accounts/login/", 200),
        (None, "/accounts/signup/", 200),
        (None, "/feed/", 200),
        ("alice", "/", 200),
        ("alice", "/credits/", 200),
        ("alice", "/accounts/tokens/", 200),
        ("alice", "/accounts/password/", 200),
        ("alice", "/sessions/import", 200),
        ("alice", "/sessions/{session}/", 200),
        ("alice", "/sessions/{session}/timeline", 200),
        ("alice", "/sessions/{session}/compare", 200),
        ("alice", "/sessions/{session}/delete", 200),
        ("alice", "/inbox/", 403),  # not staff: the site's 403 page
        ("alice", "/no/such/page/", 404),  # the site's 404 page
        ("staff", "/inbox/", 200),
        ("staff", "/admin/", 200),
        (None, "/s/{token}/", 200),
    ],
)
def test_every_page_is_served_with_the_strict_policy(
    client, alice, staff, episode, settings, who, url, status
):
    settings.DEBUG = False  # the site's own error pages, not Django's technical ones
    token = share_link_create(session_id=episode.id)[1]
    if who is not None:
        client.force_login({"alice": alice, "staff": staff}[who])
    response = client.get(url.format(session=episode.id, token=token))
    assert response.status_code == status, url
    assert response["Content-Type"].startswith("text/html")
    assert_strict(response["Content-Security-Policy"])


def test_a_secure_page_names_its_secure_socket(client, alice, episode):
    client.force_login(alice)
    response = client.get(f"/sessions/{episode.id}/", secure=True)
    assert_strict(response["Content-Security-Policy"], socket="wss://testserver")


def test_the_socket_named_is_the_hosts_own(client, alice, episode):
    client.force_login(alice)
    response = client.get(f"/sessions/{episode.id}/", HTTP_HOST="127.0.0.1:8200")
    assert_strict(response["Content-Security-Policy"], socket="ws://127.0.0.1:8200")


def test_a_host_that_cannot_be_a_source_is_left_to_self(rf):
    """An IPv6 literal has no place in CSP's grammar; a host not allowed is no source."""
    for host in ("[::1]:8000", "evil.example"):
        policy = content_security_policy(rf.get("/", HTTP_HOST=host))
        assert directives(policy)["connect-src"] == ["'self'"]


def test_the_exported_episode_and_the_panels_keep_their_own(client, alice, episode):
    client.force_login(alice)
    response = client.get(f"/sessions/{episode.id}/episode.html")
    assert response["Content-Security-Policy"] == (
        "default-src 'none'; img-src data:; style-src 'unsafe-inline'"
    )


def test_json_answers_carry_it_too(client, alice):
    client.force_login(alice)
    response = client.get("/api/v1/sessions")
    assert response["Content-Type"].startswith("application/json")
    assert_strict(response["Content-Security-Policy"])


# --- what the templates hold -----------------------------------------------------------

INLINE = {
    "an inline <script>": re.compile(r"<script(?![^>]*\bsrc=)(?![^>]*type=\"application/json\")"),
    "a <style> block": re.compile(r"<style\b"),
    "a style= attribute": re.compile(r"\sstyle\s*="),
    "an on…= handler": re.compile(r"\son[a-z]+\s*=", re.IGNORECASE),
    "an hx-on attribute": re.compile(r"\s(?:data-)?hx-on"),
    "an hx-trigger filter (htmx evaluates it)": re.compile(r"hx-trigger=\"[^\"]*\["),
    "evaluated hx-vals/hx-vars": re.compile(r"hx-vars|hx-vals=['\"]\s*(?:js|javascript):"),
    "a javascript: address": re.compile(r"javascript:", re.IGNORECASE),
}


def test_no_template_holds_what_the_policy_refuses():
    found = []
    for path in sorted(TEMPLATES.rglob("*.html")):
        name = path.relative_to(TEMPLATES).as_posix()
        if name in OWN_POLICY:
            continue
        text = path.read_text()
        for what, pattern in INLINE.items():
            for match in pattern.finditer(text):
                line = text.count("\n", 0, match.start()) + 1
                found.append(f"{name}:{line}: {what}")
    assert not found, "\n".join(found)


@pytest.mark.parametrize(
    "snippet",
    [
        "<script>alert(1)</script>",
        '<p style="color:red">',
        "<style>p{}</style>",
        '<select onchange="x()">',
        '<form hx-on::after-request="x()">',
        '<div hx-trigger="every 3s [quiet()]">',
        '<a href="javascript:x()">',
    ],
)
def test_the_template_check_sees_each_kind(snippet):
    assert any(p.search(snippet) for p in INLINE.values()), snippet


def test_htmx_never_settles_a_style_attribute():
    """htmx's settle step copies an element's ``style`` with ``setAttribute`` (its default
    ``attributesToSettle``), which ``style-src 'self'`` refuses: Chromium reported it on
    the studio page after the first prompt. Every page's htmx config leaves it out."""
    templates = Path(__file__).resolve().parents[2] / "templates"
    configs = []
    for path in templates.rglob("*.html"):
        for match in re.finditer(r"<meta name=\"htmx-config\" content='([^']*)'", path.read_text()):
            configs.append((path.name, json.loads(match[1])))
    assert {name for name, _ in configs} >= {"base.html", "page.html"}
    for name, config in configs:
        assert "style" not in config.get("attributesToSettle", ["style"]), name
