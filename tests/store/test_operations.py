"""Operations: accepting prompts, steering, stop, approvals, fenced runner writes, folds."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection, transaction
from django.test import override_settings
from django.test.utils import CaptureQueriesContext

from jaiweb.store.errors import (
    InvalidEntry,
    LeaseLost,
    OperationStateConflict,
    PromptTooLong,
    SessionParked,
)
from jaiweb.store.leases import lease_release, lease_renew, operation_claim
from jaiweb.store.models import ComicSession, Entry, Operation, OperationRecord
from jaiweb.store.selectors import (
    operation_records,
    operation_session_get,
    operation_verdict,
    session_position,
)
from jaiweb.store.services import (
    operation_accept,
    operation_approval_decide,
    operation_stop_request,
    run_append,
    session_create,
)
from journal.entries import AssistantMessage, MessageEntry
from journal.records import (
    ApprovalRequested,
    ModelAttempted,
    OperationFinished,
    UsageSettled,
)
from journal.recovery import fold_operation

pytestmark = pytest.mark.django_db
NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)


@pytest.fixture
def session(alice):
    return session_create(owner=alice, title="episode 1")


def types(op_id):
    return [r.type for r in operation_records(operation_id=op_id)]


def test_accept_writes_entry_and_record_together(session):
    got = operation_accept(session_id=session.id, text="吃下超级棒棒糖！", now=NOW)
    assert not got.queued
    session.refresh_from_db()
    assert session.leaf_id == got.input_entry_id and session.entry_count == 1
    entry = Entry.objects.get(session=session).to_journal()
    assert entry.message.content == "吃下超级棒棒糖！" and entry.parent_id is None
    [accepted] = operation_records(operation_id=got.operation_id)
    assert accepted.input_entry_id == entry.id and accepted.start_leaf_id is None
    assert operation_verdict(operation=Operation.objects.get(pk=got.operation_id)).status == "ready"


def test_a_prompt_during_a_run_is_queued_as_steering(session):
    first = operation_accept(session_id=session.id, text="one")
    second = operation_accept(session_id=session.id, text="two")
    assert second.queued and second.operation_id == first.operation_id
    assert types(first.operation_id) == ["operation_accepted", "input_queued"]
    queued = operation_records(operation_id=first.operation_id)[1]
    assert queued.text == "two" and queued.input_entry_id == second.input_entry_id
    assert Operation.objects.filter(session=session).count() == 1
    assert Entry.objects.filter(session=session).count() == 1  # the loop writes it later


def test_parked_session_refuses_prompts(session):
    got = operation_accept(session_id=session.id, text="one")
    Operation.objects.filter(pk=got.operation_id).update(parked_at=NOW)
    with pytest.raises(SessionParked, match="waiting for an admin"):
        operation_accept(session_id=session.id, text="two")
    assert types(got.operation_id) == ["operation_accepted"]


@override_settings(JAIWEB_MAX_PROMPT_CHARS=10)
def test_prompt_limits(session):
    with pytest.raises(PromptTooLong, match="11 characters; at most 10"):
        operation_accept(session_id=session.id, text="x" * 11)
    with pytest.raises(InvalidEntry, match="empty"):
        operation_accept(session_id=session.id, text="   ")
    with pytest.raises(ValueError, match="NUL"):
        operation_accept(session_id=session.id, text="a\x00")
    assert not Operation.objects.exists() and not Entry.objects.exists()


def test_stop_once_and_only_while_running(session):
    got = operation_accept(session_id=session.id, text="one")
    operation_stop_request(operation_id=got.operation_id, by="alice")
    operation_stop_request(operation_id=got.operation_id, by="alice")
    assert types(got.operation_id).count("stop_requested") == 1
    lease = operation_claim(owner="r1", now=NOW, lease_seconds=15)
    finish = OperationFinished(operation_id=got.operation_id, timestamp=NOW, outcome="aborted")
    run_append(operation_id=got.operation_id, fencing=lease.fencing, records=[finish])
    with pytest.raises(OperationStateConflict, match="finished"):
        operation_stop_request(operation_id=got.operation_id, by="alice")


def _attempt_with_reply(op_id, fencing, leaf):
    attempt = ModelAttempted(
        operation_id=op_id, timestamp=NOW, attempt_id="a1", assistant_entry_id="A", model="m"
    )
    run_append(operation_id=op_id, fencing=fencing, records=[attempt])
    reply = MessageEntry(
        id="A",
        parent_id=leaf,
        timestamp=NOW,
        message=AssistantMessage(
            content="drawing",
            tool_calls=[{"id": "call_1", "name": "generate_image", "arguments": {"p": 1}}],
            stop_reason="tool_use",
        ),
    )
    usage = UsageSettled(
        operation_id=op_id,
        timestamp=NOW,
        attempt_id="a1",
        usage={"input_tokens": 5, "output_tokens": 6},
    )
    run_append(
        operation_id=op_id,
        fencing=fencing,
        entries=[reply],
        expected_leaf_id=leaf,
        records=[usage],
    )


def test_approval_decided_only_when_pending(session):
    got = operation_accept(session_id=session.id, text="draw")
    lease = operation_claim(owner="r1", now=NOW, lease_seconds=15)
    _attempt_with_reply(got.operation_id, lease.fencing, got.input_entry_id)
    with pytest.raises(OperationStateConflict, match="not awaiting a decision"):
        operation_approval_decide(
            operation_id=got.operation_id, tool_call_id="call_1", decision="approved", by="alice"
        )
    ask = ApprovalRequested(
        operation_id=got.operation_id, timestamp=NOW, tool_call_id="call_1", cost=10
    )
    run_append(operation_id=got.operation_id, fencing=lease.fencing, records=[ask])
    operation_approval_decide(
        operation_id=got.operation_id, tool_call_id="call_1", decision="approved", by="alice"
    )
    with pytest.raises(OperationStateConflict):
        operation_approval_decide(
            operation_id=got.operation_id, tool_call_id="call_1", decision="denied", by="alice"
        )
    log = fold_operation(operation_records(operation_id=got.operation_id))
    assert log.calls["call_1"].approval == "approved"


def test_claim_lease_and_fencing(session):
    got = operation_accept(session_id=session.id, text="one", now=NOW)
    first = operation_claim(owner="r1", now=NOW, lease_seconds=15)
    assert first.operation_id == got.operation_id and first.fencing == 1
    assert operation_claim(owner="r2", now=NOW + timedelta(seconds=5), lease_seconds=15) is None
    first = lease_renew(lease=first, now=NOW + timedelta(seconds=10), lease_seconds=15)
    assert operation_claim(owner="r2", now=NOW + timedelta(seconds=20), lease_seconds=15) is None
    second = operation_claim(owner="r2", now=NOW + timedelta(seconds=26), lease_seconds=15)
    assert second.fencing == 2 and second.owner == "r2"
    before = list(OperationRecord.objects.values_list("seq", flat=True))
    with pytest.raises(LeaseLost):
        _attempt_with_reply(got.operation_id, first.fencing, got.input_entry_id)
    with pytest.raises(LeaseLost):
        lease_renew(lease=first, now=NOW + timedelta(seconds=27), lease_seconds=15)
    assert list(OperationRecord.objects.values_list("seq", flat=True)) == before
    _attempt_with_reply(got.operation_id, second.fencing, got.input_entry_id)
    op = Operation.objects.get(pk=got.operation_id)
    assert (op.attempts, op.fencing, op.lease_owner) == (2, 2, "r2")
    lease_release(lease=second)
    third = operation_claim(owner="r3", now=NOW + timedelta(seconds=28), lease_seconds=15)
    assert third.fencing == 3


def test_lost_lease_writes_no_entry_either(session):
    got = operation_accept(session_id=session.id, text="one", now=NOW)
    old = operation_claim(owner="r1", now=NOW, lease_seconds=1)
    operation_claim(owner="r2", now=NOW + timedelta(seconds=2), lease_seconds=15)
    reply = MessageEntry(
        id="late",
        parent_id=got.input_entry_id,
        timestamp=NOW,
        message=AssistantMessage(content="late", stop_reason="stop"),
    )
    with pytest.raises(LeaseLost):
        run_append(
            operation_id=got.operation_id,
            fencing=old.fencing,
            entries=[reply],
            expected_leaf_id=got.input_entry_id,
        )
    assert not Entry.objects.filter(entry_id="late").exists()
    session.refresh_from_db()
    assert session.leaf_id == got.input_entry_id


def test_parked_operations_are_not_claimed(session):
    got = operation_accept(session_id=session.id, text="one", now=NOW)
    Operation.objects.filter(pk=got.operation_id).update(parked_at=NOW)
    assert operation_claim(owner="r1", now=NOW, lease_seconds=15) is None


def test_folded_columns_equal_the_fold(session, alice):
    """The stored leaf, entry count, outcome and record count always equal their folds."""
    other = session_create(owner=alice, title="other")
    for s in (session, other):
        got = operation_accept(session_id=s.id, text="one", now=NOW)
        operation_accept(session_id=s.id, text="two", now=NOW)
        lease = operation_claim(owner="r", now=NOW, lease_seconds=15, operation_id=got.operation_id)
        _attempt_with_reply(got.operation_id, lease.fencing, got.input_entry_id)
    finish = OperationFinished(operation_id=got.operation_id, timestamp=NOW, outcome="completed")
    run_append(operation_id=got.operation_id, fencing=lease.fencing, records=[finish])

    for s in ComicSession.objects.all():
        rows = list(Entry.objects.filter(session=s).order_by("seq"))
        assert [r.seq for r in rows] == list(range(1, len(rows) + 1))
        assert s.entry_count == len(rows) and s.leaf_id == rows[-1].entry_id
    for op in Operation.objects.all():
        records = operation_records(operation_id=op.id)
        log = fold_operation(records)
        assert op.record_count == len(records)
        assert op.outcome == (log.finished.outcome if log.finished else None)
    assert Operation.objects.get(pk=got.operation_id).lease_owner is None


def test_a_run_starts_from_its_session_owner_language_and_position(
    session, alice, django_assert_num_queries
):
    got = operation_accept(session_id=session.id, text="/draw a roof", language="zh-hans", now=NOW)
    with django_assert_num_queries(2):  # the operation with its session, then the owner
        ran_in, language = operation_session_get(operation_id=got.operation_id)
    with django_assert_num_queries(0):
        assert ran_in.owner == alice and ran_in.owner.username == alice.username
    assert ran_in.id == session.id and language == "zh-hans"
    assert session_position(session_id=session.id) == (got.input_entry_id, 1)
    with pytest.raises(Operation.DoesNotExist):
        operation_session_get(operation_id="op_nope")
    with pytest.raises(ComicSession.DoesNotExist):
        session_position(session_id="s_nope")


def test_a_prompt_in_a_callers_transaction_takes_one_savepoint(session):
    """The message's append inside the prompt's own transaction takes no savepoint of its
    own: the session row is locked, and a refusal refuses the prompt whole. The prompt's
    savepoint keeps a caller's transaction usable after a refusal (above)."""
    with transaction.atomic(), CaptureQueriesContext(connection) as seen:
        operation_accept(session_id=session.id, text="one")
    savepoints = [q["sql"] for q in seen.captured_queries if q["sql"].startswith("SAVEPOINT")]
    assert len(savepoints) == 1
