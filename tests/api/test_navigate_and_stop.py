"""POST /sessions/{id}/navigate and /sessions/{id}/stop."""

from __future__ import annotations

import pytest

from jaiweb.commands.sessions import character_set
from jaiweb.store.models import Entry
from jaiweb.store.selectors import branch_get, operation_records
from tests.api.conftest import park, start_run

pytestmark = pytest.mark.django_db


def navigate(client, session, **body):
    return client.post(f"/sessions/{session.id}/navigate", body)


def test_navigate_appends_a_branch_and_returns_the_state_there(as_alice, idle_session):
    before = idle_session.leaf_id
    first_reply = branch_get(session=idle_session)[1]
    character_set(
        session=idle_session, name="猪猪侠", fields={"mood": "得意"}, expected_leaf_id=before
    )
    idle_session.refresh_from_db()

    response = navigate(
        as_alice, idle_session, entry_id=first_reply.id, expected_leaf_id=idle_session.leaf_id
    )

    assert response.status_code == 200
    body = response.json()
    branch = Entry.objects.get(session=idle_session, entry_id=body["leaf_id"])
    assert branch.type == "branch" and branch.parent_id == first_reply.id
    # The character edit is on the abandoned branch: the state is the initial one again.
    assert body["app_state"] == {"characters": {}, "permission_mode": "ask"}
    session = as_alice.get(f"/sessions/{idle_session.id}").json()
    assert session["leaf_id"] == body["leaf_id"]


def test_navigate_to_the_leaf_does_nothing(as_alice, idle_session):
    count = Entry.objects.filter(session=idle_session).count()
    body = navigate(as_alice, idle_session, entry_id=idle_session.leaf_id).json()
    assert body["leaf_id"] == idle_session.leaf_id
    assert Entry.objects.filter(session=idle_session).count() == count


def test_a_stale_expected_leaf_is_409(as_alice, idle_session):
    root = branch_get(session=idle_session)[0]
    response = navigate(as_alice, idle_session, entry_id=root.id, expected_leaf_id=root.id)
    assert response.status_code == 409
    body = response.json()
    assert body["code"] == "stale_leaf" and body["leaf_id"] == idle_session.leaf_id
    assert Entry.objects.filter(session=idle_session).count() == 4


def test_navigate_unless_idle_is_409(as_alice, idle_session):
    root = branch_get(session=idle_session)[0]
    start_run(idle_session)
    response = navigate(as_alice, idle_session, entry_id=root.id)
    assert response.status_code == 409 and response.json()["code"] == "session_busy"


def test_navigate_while_parked_is_409_waiting_for_an_admin(as_alice, idle_session):
    root = branch_get(session=idle_session)[0]
    park(idle_session)
    response = navigate(as_alice, idle_session, entry_id=root.id)
    assert response.status_code == 409 and "waiting for an admin" in response.json()["detail"]


def test_navigate_to_an_unknown_entry_is_404(as_alice, idle_session):
    response = navigate(as_alice, idle_session, entry_id="nope")
    assert response.status_code == 404 and response.json()["detail"] == "no such entry"


def test_navigate_needs_an_entry_id(as_alice, idle_session):
    response = navigate(as_alice, idle_session, expected_leaf_id=idle_session.leaf_id)
    assert response.status_code == 422 and response.json()["field"] == "entry_id"


def test_stop_a_running_session(as_alice, session):
    op = start_run(session)
    response = as_alice.post(f"/sessions/{session.id}/stop")
    assert response.status_code == 202 and response.json() == {"operation_id": op}
    assert [r.type for r in operation_records(operation_id=op)][-1] == "stop_requested"
    # Asking twice is asking once.
    assert as_alice.post(f"/sessions/{session.id}/stop").status_code == 202
    assert [r.type for r in operation_records(operation_id=op)].count("stop_requested") == 1


def test_stop_on_idle_is_409(as_alice, idle_session):
    response = as_alice.post(f"/sessions/{idle_session.id}/stop")
    assert response.status_code == 409 and response.json()["code"] == "conflict"


def test_stop_on_parked_is_409(as_alice, session):
    park(session)
    response = as_alice.post(f"/sessions/{session.id}/stop")
    assert response.status_code == 409 and response.json()["code"] == "waiting_for_admin"
