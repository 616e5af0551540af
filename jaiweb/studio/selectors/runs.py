"""Reads behind the run's controls: the status, approvals awaited, calls parked."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from jaiweb.commands.status import UNREAD, SessionStatus, session_status
from jaiweb.store.models import ComicSession, Entry
from jaiweb.store.selectors import branch_rows, entry_ids_among, operation_records
from jaiweb.studio.selectors.strip import panel_image
from journal.errors import CorruptedOperationLog
from journal.recovery import fold_operation


@dataclass(frozen=True, slots=True)
class PendingApproval:
    tool_call_id: str
    tool: str
    arguments: dict
    cost: int


@dataclass(frozen=True, slots=True)
class ParkedCall:
    """A step an admin must decide about, as the session's owner is told of it: the tool,
    and the panel it was about (its number on the branch), never a call id."""

    tool: str
    panel: int | None = None


@dataclass(frozen=True, slots=True)
class RunView:
    """What the controls show: the status, approvals awaited, steering text queued."""

    status: SessionStatus
    approvals: list[PendingApproval] = field(default_factory=list)
    queued: list[str] = field(default_factory=list)
    stopping: bool = False
    corrupted: bool = False
    parked: list[ParkedCall] = field(default_factory=list)  # what waits for an admin


def run_view(*, session: ComicSession, operation: object = UNREAD) -> RunView:
    """What the controls show (``operation``: the unfinished one, when read already)."""
    status = session_status(session=session, operation=operation)
    if status.operation_id is None:
        return RunView(status)
    records = operation_records(operation_id=status.operation_id)
    try:
        log = fold_operation(records)
    except CorruptedOperationLog:
        return RunView(status, corrupted=True)
    pending = {call_id: call for call_id, call in log.calls.items() if call.approval == "pending"}
    calls: dict[str, tuple[str, dict]] = {}
    if pending:  # what each awaited call asks for, from its replies, in one read
        replies = Entry.objects.filter(
            session=session, entry_id__in={a.assistant_entry_id for a in log.attempts}
        ).values_list("payload", flat=True)
        for payload in replies:
            for call in payload.get("message", {}).get("tool_calls", []):
                calls[call["id"]] = (call["name"], call.get("arguments", {}))
    approvals = [
        PendingApproval(
            call_id,
            calls.get(call_id, ("?", {}))[0],
            calls.get(call_id, ("?", {}))[1],
            call.approval_request.cost if call.approval_request else 0,
        )
        for call_id, call in pending.items()
    ]
    written = (
        entry_ids_among(session=session, ids=[i.input_entry_id for i in log.inputs])
        if log.inputs
        else set()
    )
    return RunView(
        status,
        approvals=approvals,
        queued=[
            i.text for i in log.inputs if i.input_entry_id not in written
        ],  # not in the tree yet
        stopping=log.stop is not None,
        parked=_parked_calls(session, log) if status.state == "parked" else [],
    )


def _parked_calls(session: ComicSession, log: Any) -> list[ParkedCall]:
    """The open calls of a parked operation (their result not written, no retry chosen
    since), each with the panel it is about: a publication's panel by its number on the
    branch, a drawing's as the next one. Read only while the session is parked."""
    dispatches = [
        call.dispatch
        for call in log.calls.values()
        if call.dispatch is not None and not call.retry_after_dispatch
    ]
    if not dispatches:
        return []
    done = entry_ids_among(session=session, ids=[d.result_entry_id for d in dispatches])
    open_ = [d for d in dispatches if d.result_entry_id not in done]
    if not open_:
        return []
    # the branch's panels in order; only rows that may hold an image are parsed
    rows = branch_rows(session=session, lazy=True)
    images = [image for row in rows if (image := panel_image(row)) is not None]
    out = []
    for dispatch in open_:
        panel = None
        if dispatch.tool_name == "generate_image":
            panel = len(images) + 1
        elif dispatch.args.get("image_id") in images:
            panel = images.index(dispatch.args["image_id"]) + 1
        out.append(ParkedCall(dispatch.tool_name, panel))
    return out
