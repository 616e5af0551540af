"""A session whose app state the agent cannot read (a row from before states were checked):
its operation fails once, saying why, instead of crash-looping its runners (issue 14.3)."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from jaiweb.agent.runner import Runner, RunnerConfig
from jaiweb.store.models import ComicSession, Operation
from jaiweb.store.selectors import operation_records
from jaiweb.store.services import operation_accept, session_create

pytestmark = pytest.mark.django_db(transaction=True)

WHY = "the session's app state cannot be read: permission_mode: Input should be 'ask' or 'auto'"


@pytest.fixture
def bad_session(alice):
    session = session_create(owner=alice, title="old row")
    # as written before session_create checked it
    ComicSession.objects.filter(pk=session.pk).update(
        initial_app_state={"characters": {}, "permission_mode": "yolo"}
    )
    return session


def test_the_operation_fails_once_with_a_clear_message(bad_session):
    op = operation_accept(session_id=bad_session.id, text="/say 你好").operation_id
    runner = Runner(config=RunnerConfig(workers=1, max_claims=8))
    lease = runner.claim()
    assert runner.run_claimed(lease) == "finished"
    finished = operation_records(operation_id=op)[-1]
    assert finished.type == "operation_finished" and finished.outcome == "failed"
    assert (finished.error.code, finished.error.message) == ("unreadable_app_state", WHY)
    row = Operation.objects.get(pk=op)
    assert row.outcome == "failed" and row.attempts == 1  # one claim, no crash loop
    assert runner.claim() is None


def test_recover_reports_it_instead_of_a_traceback(bad_session):
    op = operation_accept(session_id=bad_session.id, text="/say 你好").operation_id
    out = io.StringIO()
    call_command("recover", stdout=out)
    assert f"{op}: finished (bad app state)" in out.getvalue()
    assert Operation.objects.get(pk=op).outcome == "failed"


def test_the_studio_page_still_opens(bad_session, client, alice):
    client.force_login(alice)
    response = client.get(f"/sessions/{bad_session.id}/")
    assert response.status_code == 200
