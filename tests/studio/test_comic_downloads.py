"""The studio's comic downloads: the session page's links for the leaf it shows, and the share
page's for its pinned node, through the link only."""

from __future__ import annotations

import io
import re

import pypdf
import pytest
from django.test import Client

from jaiweb.store.shares import share_link_create, share_link_revoke
from tests.support.comics import cbz_contents, draw_panels

pytestmark = pytest.mark.django_db


def test_the_session_page_offers_the_leafs_comic_beside_the_episode(client, alice, episode):
    leaf = draw_panels(episode, ["猪猪侠吃下超级棒棒糖"])
    client.force_login(alice)
    html = client.get(f"/sessions/{episode.id}/").content.decode()
    assert 'data-action="export"' in html  # episode.html, and beside it:
    for fmt in ("pdf", "cbz", "png"):
        assert f'href="/sessions/{episode.id}/comic.{fmt}?leaf_id={leaf}"' in html
        assert f'data-action="export-comic-{fmt}"' in html
    r = client.get(f"/sessions/{episode.id}/comic.pdf?leaf_id={leaf}")
    assert r.status_code == 200 and r["Content-Type"] == "application/pdf"
    assert r["Content-Disposition"] == f'attachment; filename="{episode.id}-{leaf}.pdf"'
    assert len(pypdf.PdfReader(io.BytesIO(r.content)).pages) == 1


def test_the_owner_only_and_known_formats_layouts_and_nodes(client, alice, bob, episode):
    draw_panels(episode, ["a pig"])
    assert client.get(f"/sessions/{episode.id}/comic.pdf").status_code == 302  # to log in
    client.force_login(bob)
    assert client.get(f"/sessions/{episode.id}/comic.pdf").status_code == 404
    client.force_login(alice)
    assert client.get(f"/sessions/{episode.id}/comic.cbz?layout=splash").status_code == 200
    for bad in ("comic.gif", "comic.pdf?layout=3x3", "comic.pdf?leaf_id=e_no", "comic.png?page=2"):
        assert client.get(f"/sessions/{episode.id}/{bad}").status_code == 404, bad


def test_the_share_page_offers_the_pinned_nodes_comic_and_names_no_image(alice, episode):
    pinned = draw_panels(episode, ["the first panel"])
    _share, token = share_link_create(session_id=episode.id, leaf_id=pinned)
    draw_panels(episode, ["a later panel"])  # after the pinned node: not in the shared comic
    viewer = Client()  # anyone holding the link, logged in or not
    html = viewer.get(f"/s/{token}/").content.decode()
    for fmt in ("pdf", "cbz", "png"):
        assert f'href="/s/{token}/comic.{fmt}"' in html
    assert not re.search(r"img_[0-9a-f]{6}", html)  # the page names no image
    r = viewer.get(f"/s/{token}/comic.cbz")
    assert r.status_code == 200 and r["Cache-Control"] == "private, no-store"
    names, info = cbz_contents(r.content)
    assert names == ["page-001.png", "ComicInfo.xml"] and f"node={pinned}" in info.findtext("Notes")
    owners = Client()
    owners.force_login(alice)
    mine = owners.get(f"/sessions/{episode.id}/comic.cbz?leaf_id={pinned}").content
    assert r.content == mine  # the same node, the same bytes, whoever asks


def test_a_revoked_or_made_up_link_opens_no_comic(episode):
    draw_panels(episode, ["a pig"])
    share, token = share_link_create(session_id=episode.id)
    share_link_revoke(session_id=episode.id, link_id=share.id)
    assert Client().get(f"/s/{token}/comic.pdf").status_code == 404
    assert Client().get("/s/not-a-token/comic.pdf").status_code == 404


def _drawn(client, start_url: str) -> dict:
    """The background export started at ``start_url``, followed until it is finished."""
    from jaiweb.comic.jobs import comic_job_wait

    r = client.post(start_url)
    assert r.status_code in (200, 202), r.content
    comic_job_wait(r.json()["key"], timeout=60)
    status = client.get(r.json()["status_url"])
    assert status.status_code == 200
    return status.json()


def test_the_studio_draws_a_long_export_in_the_background(client, alice, bob, episode):
    leaf = draw_panels(episode, ["猪猪侠吃下超级棒棒糖", "a bow"])
    client.force_login(alice)
    html = client.get(f"/sessions/{episode.id}/").content.decode()
    start = f"/sessions/{episode.id}/comic.cbz/job?leaf_id={leaf}"
    assert f'data-job-url="{start}"' in html and "studio/comic-export.js" in html
    job = _drawn(client, start)
    assert job["state"] == "done" and job["pages_done"] == job["pages"] == 1
    r = client.get(job["file_url"])
    same = client.get(f"/sessions/{episode.id}/comic.cbz?leaf_id={leaf}")
    assert r.status_code == 200 and b"".join(r.streaming_content) == same.content
    assert r["Content-Disposition"] == same["Content-Disposition"]
    client.force_login(bob)  # not his session: not its exports either
    assert client.post(start).status_code == 404
    assert client.get(job["status_url"]).status_code == 404
    assert client.get(job["file_url"]).status_code == 404
    client.force_login(alice)
    for bad in ("comic.png/job", "comic.pdf/job?layout=3x3", "comic.pdf/job?leaf_id=e_no"):
        assert client.post(f"/sessions/{episode.id}/{bad}").status_code == 404, bad
    assert client.get(f"/sessions/{episode.id}/comic.pdf/job").status_code == 405


def test_the_share_page_draws_its_pinned_node_in_the_background(alice, episode):
    pinned = draw_panels(episode, ["the first panel"])
    _share, token = share_link_create(session_id=episode.id, leaf_id=pinned)
    draw_panels(episode, ["a later panel"])
    viewer = Client(enforce_csrf_checks=True)  # anyone holding the link: no form, no token
    html = viewer.get(f"/s/{token}/").content.decode()
    assert f'data-job-url="/s/{token}/comic.pdf/job"' in html
    job = _drawn(viewer, f"/s/{token}/comic.pdf/job")
    r = viewer.get(job["file_url"])
    assert r.status_code == 200 and r["Cache-Control"] == "private, no-store"
    assert b"".join(r.streaming_content) == viewer.get(f"/s/{token}/comic.pdf").content
    owners = Client()
    owners.force_login(alice)  # the owner's export of the leaf is not the link's to fetch
    leaf_job = _drawn(owners, f"/sessions/{episode.id}/comic.pdf/job")
    assert viewer.get(f"/s/{token}/comic-jobs/{leaf_job['key']}").status_code == 404
    assert viewer.get(f"/s/{token}/comic-jobs/{leaf_job['key']}/file").status_code == 404
