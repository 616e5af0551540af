"""POST /sessions/<id>/stop: ask the running operation to stop."""

from __future__ import annotations

import pytest

from jaiweb.commands.sessions import prompt_submit
from jaiweb.store.selectors import operation_records
from tests.support.builders import park_operation
from tests.support.runs import run_pending

pytestmark = pytest.mark.django_db

HX = {"HTTP_HX_REQUEST": "true"}


def test_running_is_202_and_the_run_ends_aborted(client, alice, episode):
    op = prompt_submit(session=episode, user=alice, text="/draw a pig").operation_id
    client.force_login(alice)
    r = client.post(f"/sessions/{episode.id}/stop", **HX)
    assert r.status_code == 202 and "stopping" in r.content.decode()
    assert "stop_requested" in [rec.type for rec in operation_records(operation_id=op)]
    run_pending()
    assert operation_records(operation_id=op)[-1].outcome == "aborted"


def test_idle_and_parked_are_409(client, alice, episode):
    client.force_login(alice)
    assert client.post(f"/sessions/{episode.id}/stop", **HX).status_code == 409
    park_operation(prompt_submit(session=episode, user=alice, text="x").operation_id)
    r = client.post(f"/sessions/{episode.id}/stop", **HX)
    assert r.status_code == 409 and "waiting for an admin" in r.content.decode()


def test_others_get_404(client, bob, alice, episode):
    prompt_submit(session=episode, user=alice, text="x")
    client.force_login(bob)
    assert client.post(f"/sessions/{episode.id}/stop", **HX).status_code == 404
