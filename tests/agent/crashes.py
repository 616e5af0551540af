"""Operations as a dead runner leaves them, built fact by fact (no process needed)."""

from __future__ import annotations

from django.utils import timezone

from jaiweb.store.leases import lease_release, operation_claim
from jaiweb.store.services import operation_accept, run_append
from journal.entries import AssistantMessage, MessageEntry
from journal.ids import args_hash, idempotency_key, result_entry_id
from journal.records import ModelAttempted, ToolDispatched, UsageSettled

ARGS = {"publish_panel": {"image_id": "img_1", "caption": "第一格"}}


def left_by_a_crash(session, *, call: str | None, final: bool = False) -> str:
    """An operation whose runner died: a reply (with a call) and, if ``call``, its T1 only."""
    got = operation_accept(session_id=session.id, text="画")
    op, now = got.operation_id, timezone.now()
    lease = operation_claim(owner="dead:1:1", now=now, lease_seconds=1, operation_id=op)
    args = ARGS.get(call or "list_panels", {})
    calls = [] if final else [{"id": "call_1", "name": call or "list_panels", "arguments": args}]
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
                    args=args,
                    args_hash=args_hash(args),
                    result_entry_id=result_entry_id(reply.id, "call_1"),
                    idempotency_key=idempotency_key(op, "call_1"),
                    policy="at_most_once" if call == "publish_panel" else "read_only",
                )
            ],
        )
    lease_release(lease=lease)
    return op
