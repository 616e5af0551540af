"""POST /sessions/<id>/permission-mode: ask before paid tools, or not (app state)."""

from __future__ import annotations

import pytest

from jaiweb.commands.sessions import prompt_submit
from jaiweb.store.selectors import app_state_at
from tests.support.forms import HX, form_refused_writing_nothing

pytestmark = pytest.mark.django_db


def test_switching_is_app_state(client, alice, episode):
    client.force_login(alice)
    r = client.post(f"/sessions/{episode.id}/permission-mode", {"mode": "auto"}, **HX)
    assert r.status_code == 200
    assert 'data-mode="auto" aria-pressed="true"' in r.content.decode()
    episode.refresh_from_db()
    assert app_state_at(session=episode)["permission_mode"] == "auto"
    assert app_state_at(session=episode)["characters"]  # the rest of the state is kept


def test_bad_values_and_running_sessions_are_refused(client, alice, episode):
    client.force_login(alice)
    assert (
        client.post(f"/sessions/{episode.id}/permission-mode", {"mode": "yolo"}, **HX).status_code
        == 422
    )
    prompt_submit(session=episode, user=alice, text="hi")
    episode.refresh_from_db()
    r = client.post(
        f"/sessions/{episode.id}/permission-mode",
        {"mode": "auto", "expected_leaf_id": episode.leaf_id},
        **HX,
    )
    assert r.status_code == 409


def test_others_get_404(client, bob, episode):
    client.force_login(bob)
    r = client.post(f"/sessions/{episode.id}/permission-mode", {"mode": "auto"})
    assert r.status_code == 404


def test_a_stale_switch_writes_nothing_and_brings_the_page_up_to_date(client, alice, episode):
    # The page may be a moment behind the session (a run's last update still on its way):
    # the refusal carries the regions at the current leaf, so the next click goes through.
    client.force_login(alice)
    client.post(f"/sessions/{episode.id}/permission-mode", {"mode": "auto"}, **HX)
    episode.refresh_from_db()
    leaf, count = episode.leaf_id, episode.entry_count
    assert leaf
    r = client.post(
        f"/sessions/{episode.id}/permission-mode",
        {"mode": "ask", "expected_leaf_id": "e_behind"},
        **HX,
    )
    body = r.content.decode()
    assert r.status_code == 409 and "another tab" in body
    # the answer brings the page the session's leaf (the tree's), which the mode's form
    # sends when it is next submitted
    assert 'id="character-state"' in body and f'data-leaf-id="{leaf}"' in body
    assert 'data-mode="auto" aria-pressed="true"' in body  # as it still is
    episode.refresh_from_db()
    assert episode.entry_count == count
    again = client.post(
        f"/sessions/{episode.id}/permission-mode",
        {"mode": "ask", "expected_leaf_id": leaf},
        **HX,
    )
    assert again.status_code == 200
    episode.refresh_from_db()
    assert app_state_at(session=episode)["permission_mode"] == "ask"


@pytest.mark.parametrize("leaf", ["", "%ED%A0%80"])  # the form's HTML value; a lone surrogate
def test_a_switch_without_the_pages_leaf_is_refused_and_writes_nothing(
    client, alice, episode, leaf
):
    client.force_login(alice)
    url = f"/sessions/{episode.id}/permission-mode"
    client.post(url, {"mode": "auto"}, **HX)
    episode.refresh_from_db()
    assert episode.leaf_id
    form_refused_writing_nothing(client, episode, url, f"mode=ask&expected_leaf_id={leaf}")
    assert app_state_at(session=episode)["permission_mode"] == "auto"
