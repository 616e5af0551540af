"""`manage.py recover`: one pass, one line per unfinished operation, found and done."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.utils import timezone

from jaiweb.store.leases import lease_release, operation_claim
from jaiweb.store.models import Operation
from jaiweb.store.services import operation_accept, run_append
from journal.entries import AssistantMessage, MessageEntry
from journal.ids import args_hash, idempotency_key, result_entry_id
from journal.records import ModelAttempted, ToolDispatched, UsageSettled

pytestmark = pytest.mark.django_db(transaction=True)


def left_by_a_crash(session, *, call: str | None, final: bool = False) -> str:
    """An operation whose runner died: a reply (with a call) and, if ``call``, its T1 only."""
    got = operation_accept(session_id=session.id, text="画")
    op, now = got.operation_id, timezone.now()
    lease = operation_claim(owner="dead:1:1", now=now, lease_seconds=1, operation_id=op)
    calls = [] if final else [{"id": "call_1", "name": call or "list_panels", "arguments": {}}]
    reply = MessageEntry(
        id="A" + op[-6:],
        parent_id=got.input_entry_id,
        timestamp=now,
        message=AssistantMessage(
            content="好", tool_calls=calls, stop_reason="stop" if final else "tool_use"
        ),
    )
    run_append(
        operation_id=op,
        fencing=lease.fencing,
        records=[
            ModelAttempted(
                operation_id=op,
                timestamp=now,
                attempt_id="a1",
                assistant_entry_id=reply.id,
                model="m",
            )
        ],
    )
    run_append(
        operation_id=op,
        fencing=lease.fencing,
        entries=[reply],
        expected_leaf_id=got.input_entry_id,
        records=[
            UsageSettled(
                operation_id=op,
                timestamp=now,
                attempt_id="a1",
                usage={"input_tokens": 1, "output_tokens": 1},
            )
        ],
    )
    if call:
        run_append(
            operation_id=op,
            fencing=lease.fencing,
            records=[
                ToolDispatched(
                    operation_id=op,
                    timestamp=now,
                    tool_call_id="call_1",
                    tool_name=call,
                    assistant_entry_id=reply.id,
                    args={},
                    args_hash=args_hash({}),
                    result_entry_id=result_entry_id(reply.id, "call_1"),
                    idempotency_key=idempotency_key(op, "call_1"),
                    policy="at_most_once" if call == "publish_panel" else "read_only",
                )
            ],
        )
    lease_release(lease=lease)
    return op


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
