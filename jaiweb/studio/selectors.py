"""Reads behind the studio's pages: the strip, the run's controls, my sessions."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.db.models import Count, Q

from jaiweb.agent.actions import SessionStatus, session_status
from jaiweb.agent.state import AppState
from jaiweb.store.models import ComicSession, Entry, Operation
from jaiweb.store.selectors import StoredEntry, operation_records
from journal.entries import AssistantMessage, ToolResultMessage, UserMessage
from journal.errors import CorruptedOperationLog
from journal.recovery import fold_operation


@dataclass(frozen=True, slots=True)
class Panel:
    image_id: str
    entry_id: str
    prompt: str  # what the panel was drawn from
    narration: str  # the assistant's words with the drawing
    asked: str  # the user's message that led to it
    published: bool = False


def strip_panels(rows: list[StoredEntry]) -> list[Panel]:
    """The panels of a branch in order, with their prompts and narration."""
    asked = ""
    calls: dict[str, tuple[str, str]] = {}  # tool call id → (panel prompt, narration)
    published: set[str] = set()
    found: list[tuple[str, str, str, str, str]] = []
    for row in rows:
        if row.type != "message":
            continue
        message = row.entry.message
        if isinstance(message, UserMessage):
            asked = message.content
        elif isinstance(message, AssistantMessage):
            for call in message.tool_calls:
                if call.name == "generate_image":
                    calls[call.id] = (str(call.arguments.get("prompt", "")), message.content)
        elif isinstance(message, ToolResultMessage) and not message.is_error:
            image = message.details.get("image_id")
            if not isinstance(image, str):
                continue
            if message.tool_name == "generate_image":
                prompt, narration = calls.get(message.tool_call_id, ("", ""))
                found.append((image, row.entry_id, prompt, narration, asked))
            elif message.tool_name == "publish_panel":
                published.add(image)
    return [
        Panel(image, entry_id, prompt, narration, asked_, image in published)
        for image, entry_id, prompt, narration, asked_ in found
    ]


@dataclass(frozen=True, slots=True)
class PendingApproval:
    tool_call_id: str
    tool: str
    arguments: dict
    cost: int


@dataclass(frozen=True, slots=True)
class RunView:
    """What the controls show: the status, approvals awaited, steering text queued."""

    status: SessionStatus
    approvals: list[PendingApproval] = field(default_factory=list)
    queued: list[str] = field(default_factory=list)
    stopping: bool = False
    corrupted: bool = False


def run_view(*, session: ComicSession) -> RunView:
    status = session_status(session=session)
    if status.operation_id is None:
        return RunView(status)
    records = operation_records(operation_id=status.operation_id)
    try:
        log = fold_operation(records)
    except CorruptedOperationLog:
        return RunView(status, corrupted=True)
    calls: dict[str, tuple[str, dict]] = {}
    for entry_id in {a.assistant_entry_id for a in log.attempts}:
        row = Entry.objects.filter(session=session, entry_id=entry_id).values("payload").first()
        if row is None:
            continue
        message = row["payload"].get("message", {})
        for call in message.get("tool_calls", []):
            calls[call["id"]] = (call["name"], call.get("arguments", {}))
    approvals = [
        PendingApproval(
            call_id,
            calls.get(call_id, ("?", {}))[0],
            calls.get(call_id, ("?", {}))[1],
            call.approval_request.cost if call.approval_request else 0,
        )
        for call_id, call in log.calls.items()
        if call.approval == "pending"
    ]
    return RunView(
        status,
        approvals=approvals,
        queued=[i.text for i in log.unanswered_inputs],
        stopping=log.stop is not None,
    )


def characters_of(state: dict) -> dict[str, dict[str, Any]]:
    return {
        name: character.model_dump(mode="json")
        for name, character in AppState.of(state).characters.items()
    }


@dataclass(frozen=True, slots=True)
class SessionCard:
    session: ComicSession
    branches: int
    thumbnail: str | None
    state: str  # idle / running / parked


def my_sessions(*, owner: Any) -> list[SessionCard]:
    """The owner's sessions, latest activity first, with a thumbnail of the latest panel."""
    sessions = list(
        ComicSession.objects.filter(owner=owner, deleting=False)
        .annotate(
            branches=Count("entries", filter=Q(entries__chain_pos=0)),
        )
        .order_by("-updated_at")
    )
    unfinished = dict(
        Operation.objects.filter(session__in=sessions, outcome__isnull=True).values_list(
            "session_id", "parked_at"
        )
    )
    cards = []
    for session in sessions:
        latest = (
            Entry.objects.filter(
                session=session,
                type="message",
                payload__message__tool_name="generate_image",
                payload__message__is_error=False,
            )
            .order_by("-seq")
            .values_list("payload", flat=True)
            .first()
        )
        image = (latest or {}).get("message", {}).get("details", {}).get("image_id")
        if session.id in unfinished:
            state = "parked" if unfinished[session.id] is not None else "running"
        else:
            state = "idle"
        cards.append(SessionCard(session, session.branches, image, state))
    return cards
