"""The sessions list a page at a time: a bounded number of queries, a pager, the owner's own."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import translation

from jaiweb.store.models import ComicSession
from jaiweb.studio.selectors import sessions_list
from tests.support.storyboard import T0, line, store

pytestmark = pytest.mark.django_db

QUERIES_MAX = 10


@pytest.fixture(autouse=True)
def no_language_left():
    """The last request's language stays active on the thread: leave the default behind."""
    yield
    translation.deactivate()


def sessions_of(owner, count: int, *, first: int = 0) -> list[ComicSession]:
    """``count`` sessions of two drawn turns each, the later ones with the later activity;
    session ``k``'s latest panel is ``img_<2k + 2>``."""
    made = []
    for k in range(first, first + count):
        n = 2 * k + 1
        session = store(owner, line(2, start=n), f"t{n + 1}f", title=f"ep {k}")
        ComicSession.objects.filter(pk=session.pk).update(updated_at=T0 + timedelta(minutes=k))
        made.append(session)
    return made


def cards(body: str) -> list[tuple[str, str | None]]:
    """(session id, thumbnail image id or None) of each card on a page, in order."""
    found = re.findall(
        r'data-session-id="([^"]+)"[^>]*>\n(?:<img class="thumb" src="/panels/([^"/]+)/?"|<span)',
        body,
    )
    return [(sid, image or None) for sid, image in found]


def queries_of(client, url: str) -> int:
    client.get(url)  # the first request of a client reads what later ones keep
    with CaptureQueriesContext(connection) as seen:
        response = client.get(url)
    assert response.status_code == 200
    return len(seen.captured_queries)


def test_the_list_of_100_sessions_costs_the_queries_of_the_list_of_one(client, alice):
    client.force_login(alice)
    sessions_of(alice, 1)
    one = queries_of(client, "/")
    sessions_of(alice, 99, first=1)
    hundred = queries_of(client, "/")
    assert one == hundred <= QUERIES_MAX
    shown = cards(client.get("/").content.decode())
    assert len(shown) == sessions_list.SESSIONS_PAGE
    newest = ComicSession.objects.filter(owner=alice).order_by("-updated_at")
    assert [sid for sid, _ in shown] == [s.id for s in newest[: len(shown)]]
    # each card's thumbnail is its own session's latest panel, read in the same one query
    assert [image for _, image in shown] == [f"img_{2 * k + 2:04d}" for k in range(99, 75, -1)]


def test_the_pager_walks_from_the_newest_to_the_oldest(client, alice, monkeypatch):
    monkeypatch.setattr(sessions_list, "SESSIONS_PAGE", 3)
    made = sessions_of(alice, 7)
    client.force_login(alice)
    first = client.get("/").content.decode()
    assert [sid for sid, _ in cards(first)] == [s.id for s in made[6:3:-1]]
    assert 'href="?page=2" rel="next"' in first and 'rel="prev"' not in first
    assert "Page 1 of 3" in first
    middle = client.get("/?page=2").content.decode()
    assert [sid for sid, _ in cards(middle)] == [s.id for s in made[3:0:-1]]
    assert 'href="?page=1" rel="prev"' in middle and 'href="?page=3" rel="next"' in middle
    last = client.get("/?page=3").content.decode()
    assert cards(last) == [(made[0].id, "img_0002")]
    assert 'rel="next"' not in last and "Older sessions" not in last


@pytest.mark.parametrize("asked", ["abc", "0", "-2", "1.5", "", "%00", "%E4%B8%80"])
def test_a_page_that_is_not_a_number_is_the_first(client, alice, monkeypatch, asked):
    monkeypatch.setattr(sessions_list, "SESSIONS_PAGE", 3)
    made = sessions_of(alice, 4)
    client.force_login(alice)
    response = client.get(f"/?page={asked}")
    assert response.status_code == 200
    assert [sid for sid, _ in cards(response.content.decode())] == [s.id for s in made[:0:-1]]


@pytest.mark.parametrize("asked", ["3", "99999999999999999999999"])
def test_a_page_past_the_last_is_the_last(client, alice, monkeypatch, asked):
    monkeypatch.setattr(sessions_list, "SESSIONS_PAGE", 3)
    made = sessions_of(alice, 4)
    client.force_login(alice)
    response = client.get(f"/?page={asked}")
    assert response.status_code == 200
    assert [sid for sid, _ in cards(response.content.decode())] == [made[0].id]


def test_one_page_has_no_pager(client, alice):
    sessions_of(alice, 2)
    client.force_login(alice)
    assert 'class="pager"' not in client.get("/").content.decode()


def test_the_pager_speaks_the_pages_language(client, alice, monkeypatch):
    monkeypatch.setattr(sessions_list, "SESSIONS_PAGE", 3)
    sessions_of(alice, 7)
    client.force_login(alice)
    body = client.get("/?page=2", HTTP_ACCEPT_LANGUAGE="zh-CN").content.decode()
    assert "第 2 页，共 3 页" in body and "较新的会话" in body and "较早的会话" in body
    assert 'aria-label="会话分页"' in body


def test_no_page_shows_another_owners_sessions(client, alice, bob, monkeypatch):
    monkeypatch.setattr(sessions_list, "SESSIONS_PAGE", 3)
    hers = {s.id for s in sessions_of(alice, 5)}
    his = {s.id for s in sessions_of(bob, 4, first=5)}  # his are the newest of all
    client.force_login(alice)
    seen = set()
    for page in (1, 2, 3):
        seen |= {sid for sid, _ in cards(client.get(f"/?page={page}").content.decode())}
    assert seen == hers
    client.force_login(bob)
    assert {sid for sid, _ in cards(client.get("/?page=2").content.decode())} <= his


def test_each_card_links_where_reverse_says_and_tells_its_last_activity(client, alice):
    [session] = sessions_of(alice, 1)
    client.force_login(alice)
    body = client.get("/").content.decode()
    assert "last activity 2026-01-01 00:00" in body  # T0, on the studio's clock (UTC)
    assert f'<img class="thumb" src="{reverse("panel-image", args=["img_0002"])}"' in body
    assert f'<a href="{reverse("studio-session", args=[session.id])}">ep 0</a>' in body
    assert f'action="{reverse("studio-session-rename", args=[session.id])}"' in body
    assert f'<a href="{reverse("studio-session-delete", args=[session.id])}"' in body


def test_a_card_counts_its_branches_in_the_pages_language(client, alice):
    sessions_of(alice, 1)
    client.force_login(alice)
    assert "1 branch ·" in client.get("/").content.decode()
    assert "1 个分支 ·" in client.get("/", HTTP_ACCEPT_LANGUAGE="zh-CN").content.decode()
