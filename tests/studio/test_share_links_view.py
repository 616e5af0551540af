"""The studio's share panel: make a link to a branch (shown once), list them, revoke one."""

from __future__ import annotations

import re

import pytest
from django.db import transaction
from django.test import Client
from django.utils import timezone

from jaiweb.render.imports import image_import
from jaiweb.store.models import ShareLink
from jaiweb.store.services import entry_append, session_create
from jaiweb.store.shares import share_panel_ref
from tests.support.factories import assistant, panel, user

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def story(alice, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    with transaction.atomic():
        image_import(
            user=alice,
            image_id="img_p0",
            content_type="image/svg+xml",
            extension="svg",
            data=b'<svg xmlns="http://www.w3.org/2000/svg"/>',
            now=timezone.now(),
        )
    session = session_create(owner=alice, title="share <b>me</b>")
    entry_append(
        session_id=session.id,
        entries=[
            user("u0", None, 'draw <img src=x onerror="alert(1)">'),
            assistant("a0", "u0", "here", calls=[("c_p0", "generate_image")]),
            panel("p0", "a0"),
            user("u1", "p0", "again"),
        ],
        expected_leaf_id=None,
    )
    return session


@pytest.fixture
def staff(django_user_model):
    return django_user_model.objects.create_user("staff", password="s-pass-1", is_staff=True)


def made_url(html: str) -> str:
    match = re.search(r'value="(http://testserver/s/[^"]+/)" data-share-url', html)
    assert match, "no link shown"
    return match.group(1)


def test_a_link_to_the_leaf_is_shown_once_listed_and_revoked(client, alice, story):
    client.force_login(alice)
    got = client.post(f"/sessions/{story.id}/share-links/new", **HTMX)
    assert got.status_code == 201
    html = got.content.decode()
    assert html.startswith('<div class="share-body"')  # the panel's body, for htmx
    url = made_url(html)
    link = ShareLink.objects.get(session=story)
    assert link.leaf_id == "u1" and f'data-share-link="{link.id}"' in html
    assert got["Cache-Control"] == "private, no-store"
    # listed again later without the address (only its hash is kept)
    listed = client.get(f"/sessions/{story.id}/share-links", **HTMX).content.decode()
    assert f'data-share-link="{link.id}"' in listed and url not in listed
    assert 'data-action="revoke-share"' in listed
    assert Client().get(url).status_code == 200
    got = client.post(f"/sessions/{story.id}/share-links/{link.id}/revoke", **HTMX)
    assert got.status_code == 200 and 'data-revoked="true"' in got.content.decode()
    assert Client().get(url).status_code == 404
    assert 'data-action="revoke-share"' not in got.content.decode()


def test_a_link_pinned_to_a_node_shows_that_branch(client, alice, story):
    client.force_login(alice)
    html = client.post(
        f"/sessions/{story.id}/share-links/new", {"leaf_id": "p0"}, **HTMX
    ).content.decode()
    assert ShareLink.objects.get(session=story).leaf_id == "p0"
    url = made_url(html)
    shared = Client().get(url).content.decode()
    token = url.rstrip("/").rsplit("/", 1)[1]
    ref = share_panel_ref(token=token, image_id="img_p0")
    assert f'src="/s/{token}/panels/{ref}"' in shared
    assert "img_p0" not in shared  # the page names no image id


def test_a_plain_form_post_gets_the_panel_as_a_page(client, alice, story):
    client.force_login(alice)
    got = client.post(f"/sessions/{story.id}/share-links/new")
    html = got.content.decode()
    assert got.status_code == 201 and "<!doctype html>" in html and "data-share-url" in html


def test_a_node_not_in_the_session_is_refused_and_nothing_is_made(client, alice, story):
    client.force_login(alice)
    for bad in ("nope", "x\x00", "y" * 300):
        got = client.post(f"/sessions/{story.id}/share-links/new", {"leaf_id": bad}, **HTMX)
        assert got.status_code == 422 and "data-share-error" in got.content.decode()
    assert not ShareLink.objects.exists()


def test_an_empty_session_has_nothing_to_share(client, alice):
    empty = session_create(owner=alice, title="empty")
    client.force_login(alice)
    got = client.post(f"/sessions/{empty.id}/share-links/new", **HTMX)
    assert got.status_code == 422 and not ShareLink.objects.exists()


def test_staff_see_the_list_but_cannot_create_or_revoke(client, alice, staff, story):
    client.force_login(alice)
    client.post(f"/sessions/{story.id}/share-links/new", **HTMX)
    link = ShareLink.objects.get()
    client.force_login(staff)
    listed = client.get(f"/sessions/{story.id}/share-links", **HTMX)
    assert listed.status_code == 200
    html = listed.content.decode()
    assert f'data-share-link="{link.id}"' in html
    assert 'data-action="create-share"' not in html and 'data-action="revoke-share"' not in html
    assert client.post(f"/sessions/{story.id}/share-links/new", **HTMX).status_code == 404
    revoke = client.post(f"/sessions/{story.id}/share-links/{link.id}/revoke", **HTMX)
    assert revoke.status_code == 404
    assert ShareLink.objects.count() == 1 and ShareLink.objects.get().revoked_at is None


def test_another_users_session_and_link_are_404(client, alice, bob, story):
    client.force_login(alice)
    client.post(f"/sessions/{story.id}/share-links/new", **HTMX)
    link = ShareLink.objects.get()
    client.force_login(bob)
    assert client.get(f"/sessions/{story.id}/share-links").status_code == 404
    assert client.post(f"/sessions/{story.id}/share-links/new").status_code == 404
    assert client.post(f"/sessions/{story.id}/share-links/{link.id}/revoke").status_code == 404
    mine = session_create(owner=bob, title="bob's")
    # a link id of another session, under one's own session: no such link
    assert client.post(f"/sessions/{mine.id}/share-links/{link.id}/revoke").status_code == 404
    assert client.post(f"/sessions/{mine.id}/share-links/{2**63}/revoke").status_code == 404
    assert ShareLink.objects.get().revoked_at is None


def test_the_list_escapes_the_prompts_it_names(client, alice, story):
    client.force_login(alice)
    client.post(f"/sessions/{story.id}/share-links/new", {"leaf_id": "p0"}, **HTMX)
    html = client.get(f"/sessions/{story.id}/share-links").content.decode()
    assert '<img src=x onerror="alert(1)">' not in html
    assert "draw &lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in html
    assert "share &lt;b&gt;me&lt;/b&gt;" in html


def test_the_session_page_has_the_share_panel_and_the_compare_link(client, alice, story):
    client.force_login(alice)
    html = client.get(f"/sessions/{story.id}/").content.decode()
    assert 'id="share"' in html and f'hx-get="/sessions/{story.id}/share-links"' in html
    assert f'href="/sessions/{story.id}/compare?left=u1"' in html


def test_the_inspector_offers_a_link_up_to_its_node_to_the_owner_only(client, alice, staff, story):
    client.force_login(alice)
    html = client.get(f"/sessions/{story.id}/entries/p0/").content.decode()
    assert 'data-action="share-up-to-here"' in html and 'name="leaf_id" value="p0"' in html
    client.force_login(staff)
    html = client.get(f"/sessions/{story.id}/entries/p0/").content.decode()
    assert 'id="inspector"' in html and 'data-action="share-up-to-here"' not in html
