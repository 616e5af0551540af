"""`manage.py recover`: one pass, one line per unfinished operation, found and done."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from jaiweb.store.models import Operation
from tests.support.builders import left_by_a_crash

pytestmark = pytest.mark.django_db(transaction=True)


def run_recover() -> str:
    out = io.StringIO()
    call_command("recover", stdout=out)
    return out.getvalue()


def test_each_verdict_gets_its_line(alice):
    from jaiweb.store.services import session_create

    sessions = [session_create(owner=alice, title=f"s{i}") for i in range(3)]
    parked = left_by_a_crash(sessions[0], call="publish_panel")
    redone = left_by_a_crash(sessions[1], call="list_panels")
    ended = left_by_a_crash(sessions[2], call=None, final=True)
    report = run_recover()
    assert f"{parked}: found indeterminate_tool (publish_panel call_1 (at_most_once" in report
    assert "parked in the recovery inbox" in report
    assert f"{redone}: found indeterminate_tool (list_panels call_1 (read_only" in report
    assert "dispatched again with the same key" in report
    assert f"{ended}: found terminal (completed, inferred): wrote operation_finished" in report
    assert "3 unfinished operation(s) looked at" in report
    assert Operation.objects.get(pk=parked).parked_at is not None
    assert Operation.objects.get(pk=ended).outcome == "completed"
    # a second pass finds only what a runner still has to continue
    again = run_recover()
    assert parked not in again and ended not in again
    assert f"{redone}: found ready" in again


def test_a_bad_operation_is_reported_and_the_pass_goes_on(alice):
    """A session whose stored state cannot be read (written before it was validated)."""
    from django.utils import timezone

    from jaiweb.store.ids import new_id
    from jaiweb.store.models import ComicSession
    from jaiweb.store.services import operation_accept, session_create

    now = timezone.now()
    bad = ComicSession.objects.create(
        id=new_id("s"),
        owner=alice,
        title="bad",
        initial_app_state={"characters": "notadict"},
        created_at=now,
        updated_at=now,
    )
    broken = operation_accept(session_id=bad.id, text="/draw x").operation_id
    good = left_by_a_crash(session_create(owner=alice, title="good"), call=None, final=True)
    report = run_recover()
    assert f"{broken}: finished (bad app state)" in report
    assert f"{good}: found terminal (completed, inferred): wrote operation_finished" in report
    assert "2 unfinished operation(s) looked at" in report


def test_a_recovery_pass_does_not_count_as_a_claim(alice):
    """Passes made at every start-up must not push an operation toward "given up"."""
    from jaiweb.store.services import operation_accept, session_create

    op = operation_accept(session_id=session_create(owner=alice, title="s").id, text="go")
    for _ in range(3):
        run_recover()
    assert Operation.objects.get(pk=op.operation_id).attempts == 0
