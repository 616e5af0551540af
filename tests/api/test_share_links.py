"""Share links: a read-only view of one branch for whoever holds the link, until revoked."""

from __future__ import annotations

import pytest
from django.test import Client

from jaiweb.render.services import render_request, wallet_get_or_create
from jaiweb.store.models import ShareLink
from jaiweb.store.services import entry_append, rewind_append, session_create
from jaiweb.store.shares import share_panel_ref
from tests.support.clocks import pin_the_minute
from tests.support.factories import assistant, panel, user

pytestmark = pytest.mark.django_db


@pytest.fixture
def media(tmp_path, settings):
    settings.MEDIA_ROOT = tmp_path
    return tmp_path


@pytest.fixture
def story(alice, media):
    """Two panels: p_one on the shared branch (up to p_one), p_two after it."""
    wallet_get_or_create(user=alice)
    images = {
        name: render_request(user=alice, key=f"k_{name}", params={"prompt": name}).image_id
        for name in ("p_one", "p_two")
    }
    session = session_create(owner=alice, title="分享 <b>me</b>")
    entry_append(
        session_id=session.id,
        entries=[
            user("u0", None, "画"),
            assistant("c0", "u0", "第一格的旁白", calls=[("c_p_one", "generate_image")]),
            panel("p_one", "c0", image=images["p_one"]),
            assistant("c1", "p_one", calls=[("c_p_two", "generate_image")]),
            panel("p_two", "c1", image=images["p_two"]),
        ],
        expected_leaf_id=None,
    )
    session.images = images
    return session


def share(as_alice, session, **body):
    got = as_alice.post(f"/sessions/{session.id}/share-links", body)
    assert got.status_code == 201, got.content
    return got.json()


def test_a_share_link_shows_its_branch_to_anyone_logged_out(as_alice, story):
    made = share(as_alice, story, leaf_id="p_one")
    assert made["url"].startswith("http://testserver/s/") and made["leaf_id"] == "p_one"
    rewind_append(session_id=story.id, target_id="u0")  # the session moves on: the link doesn't
    stranger = Client()
    page = stranger.get(made["url"])
    assert page.status_code == 200
    html = page.content.decode()
    assert "分享 &lt;b&gt;me&lt;/b&gt;" in html  # the title, escaped
    one, two = story.images["p_one"], story.images["p_two"]
    token = made["url"].rstrip("/").rsplit("/", 1)[1]
    ref_one, ref_two = (share_panel_ref(token=token, image_id=i) for i in (one, two))
    assert ref_one in html and ref_two not in html
    assert one not in html and two not in html  # the page names no image id
    assert stranger.get(f"{made['url']}panels/{ref_two}").status_code == 404  # not shared
    assert stranger.get(f"{made['url']}panels/{one}").status_code == 404  # an id is no address
    assert stranger.get(f"/panels/{one}").status_code == 404  # not published: not otherwise
    assert page["Referrer-Policy"] == "no-referrer"
    # Last: closing a file response ends the request, and with it the test's connection.
    picture = stranger.get(f"{made['url']}panels/{ref_one}")
    assert picture.status_code == 200 and b"<svg" in b"".join(picture.streaming_content)
    assert picture["Cache-Control"] == "private, no-store"
    picture.close()


def test_a_revoked_or_made_up_link_is_a_404(as_alice, story):
    made = share(as_alice, story)
    assert (
        as_alice.call("DELETE", f"/sessions/{story.id}/share-links/{made['id']}").status_code == 204
    )
    assert Client().get(made["url"]).status_code == 404
    assert Client().get(made["url"].replace("/s/", "/s/x")).status_code == 404
    [listed] = as_alice.get(f"/sessions/{story.id}/share-links").json()
    assert listed["revoked_at"] is not None and "url" not in listed


def test_only_the_tokens_hash_is_kept(as_alice, story):
    made = share(as_alice, story)
    token = made["url"].rstrip("/").rsplit("/", 1)[-1]
    assert len(token) >= 43  # 32 random bytes
    stored = ShareLink.objects.get(pk=made["id"])
    assert token not in stored.token_sha256 and len(stored.token_sha256) == 64


def test_views_of_share_links_are_rate_limited(as_alice, story, settings, monkeypatch):
    from django.core.cache import cache

    cache.clear()
    pin_the_minute(monkeypatch)  # the four views fall in one minute
    settings.JAIWEB_SHARE_VIEWS_PER_MINUTE = 3
    made = share(as_alice, story)
    stranger = Client()
    assert [stranger.get(made["url"]).status_code for _ in range(4)] == [200, 200, 200, 429]
    cache.clear()


def test_a_share_link_of_a_node_that_is_not_there_is_refused(as_alice, story):
    got = as_alice.post(f"/sessions/{story.id}/share-links", {"leaf_id": "zz"})
    assert got.status_code == 404 and not ShareLink.objects.exists()
