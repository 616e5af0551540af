"""Operations in the states tests need, written fact by fact through the real store (no
runner, no process): accepted, a model attempt, its reply with one tool call, then stopped
at a chosen step, and left there, parked in the recovery inbox or with its lease released.

``operation_stopped_at`` is the one builder; ``left_by_a_crash``, ``parked_call`` and
``awaiting_approval`` are the shapes the suites use most, named.
"""

from __future__ import annotations

from typing import Literal

from django.db import transaction
from django.utils import timezone

from jaiweb.agent.tools import default_tools
from jaiweb.store.leases import lease_release, operation_claim
from jaiweb.store.services import operation_accept, operation_park, run_append
from journal.entries import AssistantMessage, MessageEntry
from journal.ids import args_hash, idempotency_key, result_entry_id
from journal.records import ApprovalRequested, ModelAttempted, ToolDispatched, UsageSettled

XSS = "<script>alert(1)</script>"
PANEL_ARGS = {"image_id": "img_1", "caption": "第一格"}
# What a user may have typed into a caption: every page that shows it must escape it.
TYPED_PANEL_ARGS = {"image_id": "img_1", "caption": f"第一格 {XSS}"}
ATTENTION = "publish_panel may have run: at most once, waiting for an admin"

Step = Literal["reply", "approval", "dispatched", "final"]
Then = Literal["release", "park", "hold"]


def operation_stopped_at(
    session,
    at: Step,
    *,
    tool: str = "publish_panel",
    args: dict | None = None,
    call_id: str = "call_1",
    prompt: str = "画",
    content: str = "好",
    usage: bool = True,
    cost: int = 10,
    policy: str | None = None,
    owner: str = "dead:1:1",
    lease_seconds: int = 60,
    then: Then = "release",
    reason: str = ATTENTION,
) -> str:
    """An operation of ``session`` whose runner stopped ``at``:

    * ``"reply"``: its reply with one call to ``tool`` is durable, nothing after it;
    * ``"approval"``: the reply, and the call waiting for its owner's approval (``cost``);
    * ``"dispatched"``: the reply and the call's T1 (``policy``: the tool's own), no T2;
    * ``"final"``: a reply with no call (the model's last word), not finished yet.

    Then the lease (held by ``owner``) is released, the operation parked with ``reason``,
    or held on. Returns the operation's id.
    """
    args = PANEL_ARGS if args is None else args
    # Accepted and claimed in one transaction: a live studio's runner polling the same
    # database never sees the operation unclaimed, so it cannot take it first.
    with transaction.atomic():
        got = operation_accept(session_id=session.id, text=prompt)
        op, now = got.operation_id, timezone.now()
        lease = operation_claim(owner=owner, now=now, lease_seconds=lease_seconds, operation_id=op)
    calls = [] if at == "final" else [{"id": call_id, "name": tool, "arguments": args}]
    reply = MessageEntry(
        id="A" + op[-6:],
        parent_id=got.input_entry_id,
        timestamp=now,
        message=AssistantMessage(
            content=content, tool_calls=calls, stop_reason="stop" if at == "final" else "tool_use"
        ),
    )
    attempt = ModelAttempted(
        operation_id=op, timestamp=now, attempt_id="a1", assistant_entry_id=reply.id, model="m"
    )
    run_append(operation_id=op, fencing=lease.fencing, records=[attempt])
    with_reply = []
    if usage:
        with_reply.append(
            UsageSettled(
                operation_id=op,
                timestamp=now,
                attempt_id="a1",
                usage={"input_tokens": 1, "output_tokens": 1},
            )
        )
    if at == "approval":
        with_reply.append(
            ApprovalRequested(operation_id=op, timestamp=now, tool_call_id=call_id, cost=cost)
        )
    run_append(
        operation_id=op,
        fencing=lease.fencing,
        entries=[reply],
        expected_leaf_id=got.input_entry_id,
        records=with_reply,
    )
    if at == "dispatched":
        t1 = ToolDispatched(
            operation_id=op,
            timestamp=now,
            tool_call_id=call_id,
            tool_name=tool,
            assistant_entry_id=reply.id,
            args=args,
            args_hash=args_hash(args),
            result_entry_id=result_entry_id(reply.id, call_id),
            idempotency_key=idempotency_key(op, call_id),
            policy=policy or default_tools()[tool].policy(),
        )
        run_append(operation_id=op, fencing=lease.fencing, records=[t1])
    if then == "park":
        operation_park(operation_id=op, fencing=lease.fencing, reason=reason)
    elif then == "release":
        lease_release(lease=lease)
    return op


def left_by_a_crash(session, *, call: str | None, final: bool = False) -> str:
    """An operation whose runner died (its lease released, as a dead holder's is): a reply
    with a call to ``call`` and its T1; with ``call=None`` a reply calling list_panels and
    no T1; with ``final`` a reply with no call. Recovery decides what happens next."""
    if final:
        return operation_stopped_at(session, "final", lease_seconds=1)
    tool = call or "list_panels"
    args = PANEL_ARGS if tool == "publish_panel" else {}
    at: Step = "dispatched" if call else "reply"
    return operation_stopped_at(session, at, tool=tool, args=args, lease_seconds=1)


def parked_call(
    session,
    *,
    tool: str = "publish_panel",
    args: dict | None = None,
    dispatch: bool = True,
    reason: str = ATTENTION,
) -> str:
    """A call a dead runner left dispatched (T1, no T2; at most once), parked in the
    recovery inbox with ``reason``; with ``dispatch=False`` parked before its T1."""
    return operation_stopped_at(
        session,
        "dispatched" if dispatch else "reply",
        tool=tool,
        args=TYPED_PANEL_ARGS if args is None else args,
        policy="at_most_once",
        then="park",
        reason=reason,
    )


def awaiting_approval(session, call_id: str = "call_1") -> str:
    """A run that asked its owner before a paid generate_image call (10 credits); no
    runner holds it."""
    return operation_stopped_at(
        session,
        "approval",
        tool="generate_image",
        args={"prompt": "猪"},
        call_id=call_id,
        prompt="画一格",
        content="画",
        owner="test",
    )


def park_operation(
    operation_id: str, reason: str = "publish_panel may have run", owner: str = "test-runner"
) -> None:
    """Park an operation as a runner would: claim its lease, then hand it to the inbox."""
    lease = operation_claim(
        owner=owner, now=timezone.now(), lease_seconds=60, operation_id=operation_id
    )
    operation_park(operation_id=operation_id, fencing=lease.fencing, reason=reason)
