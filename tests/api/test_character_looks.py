"""A character's look through the API: POST /sessions/{id}/characters takes a seed and a
reference picture, which must be one of the session owner's images (else 404 naming the
field, as for any id that is not the caller's, and nothing written); so must a new
session's initial state."""

from __future__ import annotations

import pytest

from jaiweb.render.backends.local import LocalRenderer
from jaiweb.render.services import render_request
from jaiweb.store.models import ComicSession, Entry
from jaiweb.store.selectors import app_state_at

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def media(tmp_path, settings):
    settings.MEDIA_ROOT = tmp_path / "media"


def panel_of(user, key: str) -> str:
    params = {"prompt": "猪猪侠站在擂台上", "seed": 1}
    return render_request(user=user, key=key, params=params, renderer=LocalRenderer()).image_id


def test_a_look_of_ones_own_picture_and_seed_is_kept(as_alice, alice, session):
    mine = panel_of(alice, "k_mine")
    answer = as_alice.post(
        f"/sessions/{session.id}/characters",
        {"name": "猪猪侠", "seed": 4294967295, "reference_image_id": mine},
    )
    assert answer.status_code == 200, answer.content
    look = answer.json()["app_state"]["characters"]["猪猪侠"]
    assert (look["seed"], look["reference_image_id"]) == (4294967295, mine)
    session.refresh_from_db()
    assert app_state_at(session=session)["characters"]["猪猪侠"] == look
    # a later edit of the mood keeps the look
    answer = as_alice.post(f"/sessions/{session.id}/characters", {"name": "猪猪侠", "mood": "开心"})
    assert answer.json()["app_state"]["characters"]["猪猪侠"] == {**look, "mood": "开心"}


def test_another_users_picture_is_refused_naming_the_field_and_nothing_is_written(
    as_alice, bob, session
):
    for image_id in (panel_of(bob, "k_bob"), "img_nosuchpicture"):
        entries = Entry.objects.filter(session=session).count()
        answer = as_alice.post(
            f"/sessions/{session.id}/characters",
            {"name": "猪猪侠", "reference_image_id": image_id},
        )
        assert answer.status_code == 404  # like any id that is not the caller's
        assert answer.json()["code"] == "image_not_yours"
        assert answer.json()["field"] == "reference_image_id"
        assert image_id in answer.json()["detail"]
        assert Entry.objects.filter(session=session).count() == entries


@pytest.mark.parametrize(
    "look", [{"seed": -1}, {"seed": 2**32}, {"seed": "7"}, {"reference_image_id": "../x"}]
)
def test_a_look_the_schema_refuses_is_a_422(as_alice, session, look):
    answer = as_alice.post(f"/sessions/{session.id}/characters", {"name": "猪猪侠", **look})
    assert answer.status_code == 422
    assert answer.json()["field"] == next(iter(look))


def test_a_new_sessions_initial_look_must_be_the_owners_picture(as_alice, alice, bob):
    state = {"characters": {"猪猪侠": {"reference_image_id": panel_of(bob, "k_bob")}}}
    before = ComicSession.objects.count()
    answer = as_alice.post("/sessions", {"title": "looks", "initial_app_state": state})
    assert answer.status_code == 404
    assert answer.json()["field"] == "initial_app_state.characters.猪猪侠.reference_image_id"
    assert ComicSession.objects.count() == before
    state["characters"]["猪猪侠"]["reference_image_id"] = panel_of(alice, "k_alice")
    answer = as_alice.post("/sessions", {"title": "looks", "initial_app_state": state})
    assert answer.status_code == 201


def test_a_seed_written_as_a_whole_json_number_is_that_seed(as_alice, session):
    """JSON Schema reads 46.0 as an integer, so the server does too (the fuzzing gate sent
    it and got a 422); "7" and 46.5 stay refused."""
    answer = as_alice.post(f"/sessions/{session.id}/characters", {"name": "猪猪侠", "seed": 46.0})
    assert answer.status_code == 200, answer.content
    assert answer.json()["app_state"]["characters"]["猪猪侠"]["seed"] == 46
    for bad in ("7", 46.5, True):
        answer = as_alice.post(
            f"/sessions/{session.id}/characters", {"name": "猪猪侠", "seed": bad}
        )
        assert answer.status_code == 422 and answer.json()["field"] == "seed"
