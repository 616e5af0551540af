"""POST /sessions/<id>/characters: edit a character by hand (an app_state entry)."""

from __future__ import annotations

import re

import pytest

from jaiweb.commands.sessions import prompt_submit
from jaiweb.store.models import Entry
from jaiweb.store.selectors import app_state_at
from jaiweb.store.services import session_create
from tests.support.forms import HX, form_refused_writing_nothing

pytestmark = pytest.mark.django_db


def test_an_edit_appends_the_whole_state_and_a_rewind_brings_the_old_one_back(
    client, alice, episode
):
    client.force_login(alice)
    r = client.post(
        f"/sessions/{episode.id}/characters",
        {"name": "猪猪侠", "mood": "<angry>", "expected_leaf_id": ""},
        **HX,
    )
    assert r.status_code == 200 and 'value="&lt;angry&gt;"' in r.content.decode()
    episode.refresh_from_db()
    first = episode.leaf_id
    assert app_state_at(session=episode)["characters"]["猪猪侠"]["mood"] == "<angry>"
    r = client.post(
        f"/sessions/{episode.id}/characters",
        {"name": "菲菲", "skill": "sing", "expected_leaf_id": first},
        **HX,
    )
    episode.refresh_from_db()
    state = app_state_at(session=episode)
    assert set(state["characters"]) == {"猪猪侠", "菲菲"}
    assert state["characters"]["猪猪侠"]["mood"] == "<angry>"
    client.post(f"/sessions/{episode.id}/rewind", {"entry_id": first}, **HX)
    episode.refresh_from_db()
    assert set(app_state_at(session=episode)["characters"]) == {"猪猪侠"}


def test_refused_while_running_stale_or_invalid(client, alice, episode):
    client.force_login(alice)
    r = client.post(f"/sessions/{episode.id}/characters", {"name": "x" * 41}, **HX)
    assert r.status_code == 422
    r = client.post(
        f"/sessions/{episode.id}/characters",
        {"name": "a", "mood": "m", "expected_leaf_id": "e_stale"},
        **HX,
    )
    assert r.status_code == 409
    prompt_submit(session=episode, user=alice, text="hi")
    episode.refresh_from_db()
    r = client.post(
        f"/sessions/{episode.id}/characters",
        {"name": "a", "mood": "m", "expected_leaf_id": episode.leaf_id},
        **HX,
    )
    assert r.status_code == 409 and "run is going" in r.content.decode()
    assert not Entry.objects.filter(session=episode, type="app_state").exists()


def test_others_get_404(client, bob, episode):
    client.force_login(bob)
    assert client.post(f"/sessions/{episode.id}/characters", {"name": "a"}).status_code == 404


FOUR = {
    "characters": {name: {} for name in ("Pig-Man", "Super Strong", "Teacher Muddle", "Fifi")},
    "permission_mode": "ask",
}


def test_a_hand_edit_of_one_character_says_only_that_one_changed(client, alice):
    """Issue 29: the entry holds the whole state, and the tree named all four characters."""
    session = session_create(owner=alice, title="four", initial_app_state=FOUR)
    client.force_login(alice)
    client.post(
        f"/sessions/{session.id}/characters",
        {"name": "Fifi", "mood": "cheeky", "expected_leaf_id": ""},
        **HX,
    )
    session.refresh_from_db()
    edit = session.leaf_id
    client.post(
        f"/sessions/{session.id}/characters",
        {"name": "Pig-Man", "buff": "lollipop", "expected_leaf_id": edit},
        **HX,
    )
    body = client.get(f"/sessions/{session.id}/").content.decode()
    # two edits in a row are one turn of the tree, which names the two edited
    assert re.findall(r"characters changed: ([^<]*)<", body) == ["Fifi, Pig-Man"]
    inspector = client.get(f"/sessions/{session.id}/entries/{edit}/").content.decode()
    steps = inspector.split('data-step="state"')[1].split("</li>")[0]
    assert re.findall(r'<p class="state-line">([^ ]+) —', steps) == ["Fifi"]


@pytest.mark.parametrize("leaf", ["", "%ED%A0%80"])  # the form's HTML value; a lone surrogate
def test_a_form_without_the_pages_leaf_is_refused_and_writes_nothing(client, alice, episode, leaf):
    # the character forms name no leaf in their HTML: the page's script fills it in, so a
    # post without it (no script, or a forged one) must not write past the session's leaf
    client.force_login(alice)
    url = f"/sessions/{episode.id}/characters"
    client.post(url, {"name": "猪猪侠", "mood": "calm", "expected_leaf_id": ""}, **HX)
    episode.refresh_from_db()
    assert episode.leaf_id
    body = f"name=%E7%8C%AA%E7%8C%AA%E4%BE%A0&mood=sly&expected_leaf_id={leaf}"
    form_refused_writing_nothing(client, episode, url, body)
    assert app_state_at(session=episode)["characters"]["猪猪侠"]["mood"] == "calm"
