"""My sessions: the list at /, create, rename, delete with confirmation."""

from __future__ import annotations

from datetime import timedelta

import pytest

from jaiweb.commands.sessions import prompt_submit
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


def test_a_new_cast_is_the_users_names_in_the_pages_language(client, alice):
    """Names separated by commas; the built-ins they stand for become their aliases; the
    starter cast, when ticked, adds only the built-ins nobody claimed, in that language."""
    client.force_login(alice)
    typed = "Pig-Man, Super-Strong-Man, Teacher Muddle"
    client.post("/sessions/new", {"title": "Ep", "characters": typed, "starter": "1"})
    state = app_state_at(session=ComicSession.objects.get(owner=alice))
    assert state["language"] == "en"
    # as a set: PostgreSQL's jsonb keeps an object's keys in an order of its own
    assert sorted(state["characters"]) == sorted([
        "Pig-Man", "Super-Strong-Man", "Teacher Muddle", "Feifei", "Daidai", "Bobby",
    ])  # fmt: skip
    pig = state["characters"]["Pig-Man"]
    assert (pig["buff"], pig["skill"], pig["mood"]) == ("none", "none", "calm")
    assert "猪猪侠" in pig["aliases"] and "GG Bond" in pig["aliases"]
    assert "超人强" in state["characters"]["Super-Strong-Man"]["aliases"]

    client.post(
        "/sessions/new",
        {"title": "第二集", "characters": "猪猪侠，菲菲", "starter": "1"},
        HTTP_ACCEPT_LANGUAGE="zh-CN",
    )
    state = app_state_at(session=ComicSession.objects.get(owner=alice, title="第二集"))
    assert state["language"] == "zh"
    cast = ["猪猪侠", "菲菲", "超人强", "迷糊老师", "小呆呆", "波比"]
    assert sorted(state["characters"]) == sorted(cast)
    assert state["characters"]["超人强"]["mood"] == "平静"


def test_the_form_offers_the_starter_cast_in_the_pages_language(client, alice):
    client.force_login(alice)
    english = client.get("/").content.decode()
    assert "Pig-Man, Super Strong, Teacher Muddle" in english
    chinese = client.get("/", HTTP_ACCEPT_LANGUAGE="zh-CN").content.decode()
    assert "猪猪侠，超人强，迷糊老师" in chinese and "Pig-Man" not in chinese


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


def test_a_hand_edit_by_an_alias_edits_the_one_character(client, alice):
    from jaiweb.commands.sessions import character_set

    client.force_login(alice)
    client.post("/sessions/new", {"title": "Ep", "characters": "Pig-Man"})
    session = ComicSession.objects.get(owner=alice)
    character_set(session=session, name="猪猪侠", fields={"mood": "happy"}, expected_leaf_id=None)
    characters = app_state_at(session=ComicSession.objects.get(pk=session.pk))["characters"]
    assert list(characters) == ["Pig-Man"] and characters["Pig-Man"]["mood"] == "happy"
