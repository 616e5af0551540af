"""Reads behind the studio's pages: the strip, the run's controls, my sessions."""

from __future__ import annotations

import base64
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db.models import Count, Q

from jaiweb.agent.state import AppState, UnreadableAppState
from jaiweb.render.selectors import images_by_id
from jaiweb.sessions.status import SessionStatus, session_status
from jaiweb.store.models import ComicSession, Entry, Operation, operation_state
from jaiweb.store.rows import StoredEntry, parse_rows
from jaiweb.store.selectors import branch_rows, entry_ids_among, operation_records
from journal.entries import AssistantMessage, ToolResultMessage, UserMessage
from journal.errors import CorruptedOperationLog, UnknownEntry
from journal.recovery import fold_operation


@dataclass(frozen=True, slots=True)
class Panel:
    image_id: str
    entry_id: str
    prompt: str  # what the panel was drawn from
    narration: str  # the assistant's words with the drawing
    asked: str  # the user's message that led to it
    published: bool = False


# Panels the studio page shows at first; earlier ones load on demand, a page at a time.
STRIP_PAGE = 24


@dataclass(frozen=True, slots=True)
class Strip:
    panels: list[Panel]
    earlier: str | None  # the first shown panel's entry id, when panels come before it


def strip_panels(rows: list[StoredEntry]) -> list[Panel]:
    """Every panel of a branch in order, with its prompt and narration (the export)."""
    messages = [r for r in rows if r.type == "message"]
    parse_rows(messages)
    return _panels(messages, _published(messages))


def episode_panels(*, session: ComicSession) -> list[dict[str, Any]]:
    """Every panel of the active branch with its picture inlined as a ``data:`` URI (None
    when the file is gone): the episode export needs nothing from elsewhere."""
    strip = strip_panels(branch_rows(session=session))
    images = images_by_id(ids=[p.image_id for p in strip])
    panels = []
    for panel in strip:
        image = images.get(panel.image_id)
        data_uri = None
        if image is not None:
            path = Path(settings.MEDIA_ROOT) / image.path
            if path.is_file():
                encoded = base64.b64encode(path.read_bytes()).decode()
                data_uri = f"data:{image.content_type};base64,{encoded}"
        panels.append({**asdict(panel), "data_uri": data_uri})
    return panels


def strip_view(
    rows: list[StoredEntry], *, before: str | None = None, limit: int | None = None
) -> Strip:
    """The last ``limit`` panels of a branch (before the panel ``before``, if given).

    Walks back from the leaf and parses only the rows it needs: results that may hold
    an image, then the stretch from the user message that asked for the first panel
    shown. A 10,000-entry branch costs about as much as the page of panels it shows.
    """
    limit = STRIP_PAGE if limit is None else limit
    end = len(rows)
    if before is not None:
        end = next((i for i, r in enumerate(rows) if r.entry_id == before), -1)
        if end < 0:
            raise UnknownEntry(before)
    shown: list[int] = []  # row indices of the panels to show, newest first
    earlier = False
    for i in _backwards_parsed(rows, end):
        if _image_of(rows[i], "generate_image") is None:
            continue
        if len(shown) == limit:
            earlier = True
            break
        shown.append(i)
    if not shown:
        return Strip([], None)
    start = _asked_at(rows, shown[-1])
    span = [r for r in rows[start : shown[0] + 1] if r.type == "message"]
    parse_rows(span)
    panels = _panels(span, _published(rows[shown[-1] :]))
    return Strip(panels, panels[0].entry_id if earlier else None)


def _backwards_parsed(rows: list[StoredEntry], end: int, chunk: int = 128):
    """Indices ``end - 1`` down to 0; the message rows that may hold an image are parsed a
    chunk at a time (one fetch and one pydantic call per chunk, not one per row)."""
    while end > 0:
        start = max(0, end - chunk)
        parse_rows(
            [r for r in rows[start:end] if r.type == "message" and r.may_contain('"image_id"')]
        )
        yield from range(end - 1, start - 1, -1)
        end = start


def _image_of(row: StoredEntry, tool: str) -> str | None:
    """The image id of a successful ``tool`` result row, else None (most rows unparsed)."""
    if row.type != "message" or not row.may_contain('"image_id"'):
        return None
    message = row.entry.message
    if not isinstance(message, ToolResultMessage) or message.is_error:
        return None
    if message.tool_name != tool:
        return None
    image = message.details.get("image_id")
    return image if isinstance(image, str) else None


def _published(rows: list[StoredEntry]) -> set[str]:
    return {image for r in rows if (image := _image_of(r, "publish_panel")) is not None}


def _asked_at(rows: list[StoredEntry], panel: int) -> int:
    """Where to start reading for the panel at ``panel``: the user message before the
    assistant message that called for it (or the root)."""
    call_id = rows[panel].entry.message.tool_call_id
    called = False
    for i in range(panel - 1, -1, -1):
        if rows[i].type != "message":
            continue
        message = rows[i].entry.message
        if isinstance(message, AssistantMessage) and any(
            c.id == call_id for c in message.tool_calls
        ):
            called = True
        elif called and isinstance(message, UserMessage):
            return i
    return 0


def _panels(messages: list[StoredEntry], published: set[str]) -> list[Panel]:
    """Panels of consecutive message rows, each with its call's prompt and narration."""
    asked = ""
    calls: dict[str, tuple[str, str]] = {}  # tool call id → (panel prompt, narration)
    panels: list[Panel] = []
    for row in messages:
        message = row.entry.message
        if isinstance(message, UserMessage):
            asked = message.content
        elif isinstance(message, AssistantMessage):
            for call in message.tool_calls:
                if call.name == "generate_image":
                    calls[call.id] = (str(call.arguments.get("prompt", "")), message.content)
        elif (image := _image_of(row, "generate_image")) is not None:
            prompt, narration = calls.get(message.tool_call_id, ("", ""))
            panels.append(Panel(image, row.entry_id, prompt, narration, asked, image in published))
    return panels


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
    )


def characters_of(state: dict) -> dict[str, dict[str, Any]]:
    """The characters to show; none for a state the agent cannot read (a row from before
    states were checked): the page shows the rest, and a run says what is wrong."""
    try:
        characters = AppState.of(state).characters
    except UnreadableAppState:
        return {}
    return {name: character.model_dump(mode="json") for name, character in characters.items()}


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
            state = operation_state(outcome=None, parked_at=unfinished[session.id])
        else:
            state = "idle"
        cards.append(SessionCard(session, session.branches, image, state))
    return cards
