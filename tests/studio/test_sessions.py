"""My sessions: the list at /, create, rename, delete with confirmation."""

from __future__ import annotations

from datetime import timedelta

import pytest

from jaiweb.sessions.commands import prompt_submit
from jaiweb.store.demo import article_session_create
from jaiweb.store.models import ComicSession
from jaiweb.store.selectors import app_state_at
from journal.entries import MessageEntry, ToolResultMessage
from tests.support.runs import run_pending
from tests.support.storyboard import T0, line, rewind, store

pytestmark = pytest.mark.django_db


def test_the_list_shows_title_branches_state_and_the_latest_panel(client, alice, bob, episode):
    article_session_create(owner=alice)
    prompt_submit(session=episode, user=alice, text="/draw a pig")
    run_pending()
    article_session_create(owner=bob)
    client.force_login(alice)
    body = client.get("/").content.decode()
    assert body.count("data-session-id=") == 2  # bob's is not there
    assert "Kung fu &lt;b&gt;pig&lt;/b&gt;" in body
    assert "2 branches" in body and 'src="/panels/img_' in body


def test_create_with_starting_characters_opens_the_studio(client, alice):
    client.force_login(alice)
    r = client.post("/sessions/new", {"title": "Ep 1", "characters": "猪猪侠\n菲菲\n猪猪侠"})
    session = ComicSession.objects.get(owner=alice)
    assert r.status_code == 302 and r["Location"] == f"/sessions/{session.id}/"
    assert set(app_state_at(session=session)["characters"]) == {"猪猪侠", "菲菲"}


def test_create_needs_a_title(client, alice):
    client.force_login(alice)
    assert client.post("/sessions/new", {"title": " "}).status_code == 422
    assert not ComicSession.objects.exists()


def test_rename_and_others_cannot(client, alice, bob, episode):
    client.force_login(bob)
    assert client.post(f"/sessions/{episode.id}/rename", {"title": "mine"}).status_code == 404
    client.force_login(alice)
    client.post(f"/sessions/{episode.id}/rename", {"title": "Renamed"})
    assert ComicSession.objects.get(pk=episode.id).title == "Renamed"


def test_delete_asks_first_and_refuses_while_running(client, alice, episode):
    client.force_login(alice)
    assert "cannot be undone" in client.get(f"/sessions/{episode.id}/delete").content.decode()
    prompt_submit(session=episode, user=alice, text="hi")
    assert client.post(f"/sessions/{episode.id}/delete").status_code == 409
    run_pending()
    assert client.post(f"/sessions/{episode.id}/delete").status_code == 302
    assert not ComicSession.objects.filter(pk=episode.id).exists()


def test_anonymous_sees_the_front_page(client):
    body = client.get("/").content.decode()
    assert "Sign up" in body and "data-session-id" not in body


def test_the_list_finds_the_latest_good_panel_however_far_back_and_counts_branches(client, alice):

    failed = ToolResultMessage(
        tool_call_id="c9",
        tool_name="generate_image",
        content="the renderer failed",
        is_error=True,
        details={"image_id": "img_failed"},
    )
    later = T0 + timedelta(hours=2)
    entries = [
        *line(1),  # img_0001, then more failed renders than one read of the latest takes
        *(
            MessageEntry(
                id=f"bad{i}",
                parent_id=f"bad{i - 1}" if i else "t1f",
                timestamp=later,
                message=failed,
            )
            for i in range(10)
        ),
        *line(300, start=2, parent="bad9", state=False, panel=False),  # 600 entries, no panel
        rewind("b1", "t1f", "t301f"),  # a second branch
    ]
    store(alice, entries, "b1", title="far back")
    client.force_login(alice)
    body = client.get("/").content.decode()
    assert 'src="/panels/img_0001' in body and "img_failed" not in body
    assert "2 branches" in body
