"""Reads behind the studio's pages: the strip, the run's controls, my sessions."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from django.conf import settings
from django.urls import reverse
from django.utils.translation import gettext, gettext_lazy

from jaiweb.agent.state import AppState, UnreadableAppState
from jaiweb.comic.reading import Reading, reading_of
from jaiweb.comic.selectors import panel_layers
from jaiweb.render.models import Image, LedgerEntry
from jaiweb.render.selectors import images_by_id, ledger_for
from jaiweb.sessions.access import may_see
from jaiweb.sessions.status import UNREAD, SessionStatus, session_status
from jaiweb.store.labels import TEXT_MAX as LABEL_TEXT_MAX
from jaiweb.store.labels import labels_on
from jaiweb.store.models import ComicSession, Entry, Operation, operation_state
from jaiweb.store.rows import PathRows, StoredEntry, index_of, parse_rows
from jaiweb.store.selectors import (
    app_state_at,
    branch_counts,
    branch_rows,
    entries_after,
    entry_ids_among,
    latest_tool_result,
    operation_records,
    panel_sessions,
    tool_results_at,
    where_i_was_of,
)
from jaiweb.studio.labels import people_named
from jaiweb.studio.variants import (
    SiblingView,
    VariantView,
    choices_on_rows,
    with_siblings,
    with_variants,
)
from journal.branches import (
    PANEL_TOOLS,
    RewindPreview,
    choices_changed,
    effects_of,
    panel_image_of,
    state_changes,
)
from journal.entries import AssistantMessage, ToolResultMessage, UserMessage
from journal.errors import BrokenSessionTree, CorruptedOperationLog, UnknownEntry
from journal.lettering import comic_changes
from journal.recovery import fold_operation
from journal.timeline import timeline, timeline_data
from journal.variants import sets_on


@dataclass(frozen=True, slots=True)
class Panel:
    image_id: str
    entry_id: str
    prompt: str  # what the panel was drawn from
    narration: str  # the assistant's words with the drawing
    asked: str  # the user's message that led to it
    published: bool = False
    # "continue from here": right after the panel's turn, or right after the panel when
    # another panel follows it in that turn; None when that is where the session is now
    continue_id: str | None = None
    # put here from another branch (a cherry-pick's ``place_panel``), not drawn here
    picked: bool = False
    from_entry_id: str | None = None  # a picked panel's origin
    layer: Any = None  # the lettering drawn over and under it (``strip_lettered``)
    # one of a variant set, the one chosen: which of how many (studio/variants.py)
    variant: VariantView | None = None
    prompt_id: str | None = None  # the user message of the panel's turn
    # the first panel of a turn with sibling prompts (regenerated, resent): which of how
    # many, and where a flip to the one before or after would rewind to
    siblings: SiblingView | None = None


# Panels the studio page shows at first; earlier ones load on demand, a page at a time.
STRIP_PAGE = 24


@dataclass(frozen=True, slots=True)
class Strip:
    panels: list[Panel]
    earlier: str | None  # the first shown panel's entry id, when panels come before it


def strip_panels(rows: list[StoredEntry], choices: Mapping[str, Any] | None = None) -> list[Panel]:
    """Every panel of a branch in order, with its prompt and narration (the export). Of a
    variant set, the one chosen (``choices``; default: the last state on the rows)."""
    messages = [r for r in rows if r.type == "message"]
    parse_rows(messages)
    chosen = choices_on_rows(rows) if choices is None else choices
    return with_variants(
        _panels(messages, _published(messages)), (r.entry for r in messages), chosen
    )


def episode_reading(*, session: ComicSession) -> Reading:
    """The active branch as readers see it, each picture inlined as a ``data:`` URI (an
    empty frame when its file is gone): the episode export needs nothing from elsewhere."""
    reading = reading_of(session=session)
    ids = [f.image_id for page in reading.pages for f in page.frames if f.image_id]
    images = images_by_id(ids=ids, owner_id=session.owner_id)
    inlined: dict[str, str] = {}
    for image_id, image in images.items():
        path = Path(settings.MEDIA_ROOT) / image.path
        if path.is_file():
            encoded = base64.b64encode(path.read_bytes()).decode()
            inlined[image_id] = f"data:{image.content_type};base64,{encoded}"
    return reading.sourced(lambda image_id: inlined.get(image_id, ""))


def studio_reading(*, session: ComicSession) -> Reading:
    """The active branch as readers see it (the studio's Read mode), each picture loaded
    from the panel's own address."""
    return reading_of(session=session).sourced(
        lambda image_id: reverse("panel-image", args=[image_id])
    )


def strip_view(
    rows: list[StoredEntry],
    *,
    before: str | None = None,
    limit: int | None = None,
    session: ComicSession | None = None,
    choices: Mapping[str, Any] | None = None,
) -> Strip:
    """The last ``limit`` panels of a branch (before the panel ``before``, if given).

    Walks back from the leaf and parses only the rows it needs: results that may hold
    an image, then the stretch from the user message that asked for the first panel
    shown. A 10,000-entry branch costs about as much as the page of panels it shows; one
    with few panels (``session`` given) is not parsed past its last SCAN_ROWS rows: the
    panels further back are found by one query.
    """
    limit = STRIP_PAGE if limit is None else limit
    end = len(rows)
    if before is not None:
        end = index_of(rows, before)
        if end is None:
            raise UnknownEntry(before)
    shown: list[int] = []  # row indices of the panels to show, newest first
    earlier = False
    for i in _backwards_parsed(rows, end, session):
        if _panel_image(rows[i]) is None:
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
    panels = _panels(span, _published(rows, session, start=shown[-1]))
    # Of a variant set, the one chosen (``choices``: the leaf's), with its switcher.
    panels = with_variants(panels, (r.entry for r in span), choices or {})
    targets = _continue_targets(rows, shown)
    ends = _set_ends(span)
    here = {rows[-1].entry_id}  # the leaf, and the node it rewound to
    if rows[-1].type == "branch":
        here.add(rows[-1].entry.parent_id)
    if session is not None:
        panels = with_siblings(session, rows, panels)
    for i, p in enumerate(panels):
        # a variant continues after its whole set: the last variant's target
        target = targets.get(
            ends.get(p.variant.set_id, "") if p.variant else "", targets[p.entry_id]
        )
        panels[i] = replace(p, continue_id=None if target in here else target)
    return Strip(panels, panels[0].entry_id if earlier else None)


def strip_lettered(strip: Strip, *, session: ComicSession, state: dict | None) -> Strip:
    """The strip with each panel's lettering layer (``state``: the app state at the leaf)."""
    layers = panel_layers(session=session, panels=strip.panels, state=state)
    return replace(strip, panels=[replace(p, layer=layers[p.entry_id]) for p in strip.panels])


def _set_ends(span: list[StoredEntry]) -> dict[str, str]:
    """Each variant set's last drawn variant on the parsed rows ``span``."""
    return {s.id: s.members[-1] for s in sets_on(r.entry for r in span) if s.members}


def _continue_targets(rows: list[StoredEntry], shown: list[int]) -> dict[str, str]:
    """Where "continue from here" on each shown panel goes: the end of its turn (the entry
    before the next turn starts), or the panel itself when another panel comes first."""
    targets = {}
    for i in shown:
        end = i
        for j in range(i + 1, len(rows)):
            if (j - i - 1) % 16 == 0:  # the rows ahead, a few at a time
                parse_rows([r for r in rows[j : j + 16] if r.type == "message"])
            if rows[j].type == "branch" or _ends_a_turn(rows[j - 1]) or _is_prompt(rows[j]):
                break
            if _panel_image(rows[j]) is not None:
                end = i  # another panel of the same turn: right after this one
                break
            end = j
        targets[rows[i].entry_id] = rows[end].entry_id
    return targets


def _ends_a_turn(row: StoredEntry) -> bool:
    return (
        row.type == "message"
        and isinstance(row.entry.message, AssistantMessage)
        and row.entry.message.is_final
    )


def _is_prompt(row: StoredEntry) -> bool:
    return row.type == "message" and isinstance(row.entry.message, UserMessage)


SCAN_ROWS = 512  # rows of a branch the strip parses before it asks where the panels are


def _backwards_parsed(
    rows: list[StoredEntry], end: int, session: ComicSession | None = None, chunk: int = 128
):
    """Indices ``end - 1`` down to 0; the message rows that may hold an image are parsed a
    chunk at a time (one fetch and one pydantic call per chunk, not one per row). Past
    SCAN_ROWS rows, with ``session``, only the rows of drawn panels (read by one query)."""
    stop = max(0, end - SCAN_ROWS) if session is not None else 0
    while end > stop:
        start = max(stop, end - chunk)
        parse_rows(
            [r for r in rows[start:end] if r.type == "message" and r.may_contain('"image_id"')]
        )
        yield from range(end - 1, start - 1, -1)
        end = start
    if end == 0:
        return
    found = _results_on(rows, session, PANEL_TOOLS, 0, end)[::-1]
    for at in range(0, len(found), chunk):
        parse_rows([rows[i] for i in found[at : at + chunk]])
        yield from found[at : at + chunk]


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


def _panel_image(row: StoredEntry) -> str | None:
    """The image of a panel of the strip: drawn here, or placed here from another branch."""
    return _image_of(row, "generate_image") or _image_of(row, "place_panel")


def _published(
    rows: Sequence[StoredEntry], session: ComicSession | None = None, *, start: int = 0
) -> set[str]:
    """The panels published on a branch from ``rows[start]`` on (a long stretch, with
    ``session``: its publish results found by one query rather than by parsing it)."""
    if session is not None and len(rows) - start > SCAN_ROWS:
        stretch = [
            rows[i] for i in _results_on(rows, session, ("publish_panel",), start, len(rows))
        ]
    else:
        stretch = rows[start:]
    parse_rows([r for r in stretch if r.type == "message" and r.may_contain('"image_id"')])
    return {image for r in stretch if (image := _image_of(r, "publish_panel")) is not None}


def _results_on(
    rows: Sequence[StoredEntry],
    session: ComicSession,
    tools: tuple[str, ...],
    start: int,
    stop: int,
) -> list[int]:
    """Where the results of ``tools`` are among ``rows[start:stop]`` (a path), in order: one
    search of the session's results by tool name (no payload parsed), placed on the path by
    their chain positions when it is a ``PathRows`` (no row of the stretch read), else by
    seq."""
    found = tool_results_at(session=session, tools=tools)
    if isinstance(rows, PathRows):
        at = (rows.index_at(chain, pos) for _seq, chain, pos in found)
        return sorted(i for i in at if i is not None and start <= i < stop)
    seqs = {seq for seq, _chain, _pos in found}
    return [i for i in range(start, stop) if rows[i].seq in seqs]


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
    asked, asked_id = "", None
    calls: dict[str, tuple[str, str]] = {}  # tool call id → (panel prompt, narration)
    panels: list[Panel] = []
    for row in messages:
        message = row.entry.message
        if isinstance(message, UserMessage):
            asked, asked_id = message.content, row.entry_id
        elif isinstance(message, AssistantMessage):
            for call in message.tool_calls:
                if call.name == "generate_image":
                    calls[call.id] = (str(call.arguments.get("prompt", "")), message.content)
        elif (image := _image_of(row, "generate_image")) is not None:
            prompt, narration = calls.get(message.tool_call_id, ("", ""))
            panels.append(
                Panel(
                    image,
                    row.entry_id,
                    prompt,
                    narration,
                    asked,
                    image in published,
                    prompt_id=asked_id,
                )
            )
        elif (image := _image_of(row, "place_panel")) is not None:
            origin = message.details.get("from_entry_id")
            panels.append(
                Panel(
                    image,
                    row.entry_id,
                    "",
                    "",
                    "",
                    image in published,
                    picked=True,
                    from_entry_id=origin if isinstance(origin, str) else None,
                )
            )
    return panels


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
    images = [image for row in rows if (image := _panel_image(row)) is not None]
    out = []
    for dispatch in open_:
        panel = None
        if dispatch.tool_name == "generate_image":
            panel = len(images) + 1
        elif dispatch.args.get("image_id") in images:
            panel = images.index(dispatch.args["image_id"]) + 1
        out.append(ParkedCall(dispatch.tool_name, panel))
    return out


def edited_characters(before: dict, after: dict) -> list[str]:
    """The characters whose buff, skill or mood differ between two states, in the stable
    order of ``state_changes``: each read with its defaults, so a character the first state
    names without its fields is not "changed" by a state that writes them out."""
    changes = state_changes(
        {"characters": characters_of(before)}, {"characters": characters_of(after)}
    )
    return list(dict.fromkeys(c.character for c in changes if c.character))


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
        ComicSession.objects.filter(owner=owner, deleting=False).order_by("-updated_at")
    )
    ids = [session.id for session in sessions]
    branches = branch_counts(session_ids=ids)
    unfinished = dict(
        Operation.objects.filter(session_id__in=ids, outcome__isnull=True).values_list(
            "session_id", "parked_at"
        )
    )
    cards = []
    for session in sessions:
        latest = latest_tool_result(session=session, tool="generate_image") or {}
        image = latest.get("details", {}).get("image_id")
        if session.id in unfinished:
            state = operation_state(outcome=None, parked_at=unfinished[session.id])
        else:
            state = "idle"
        cards.append(SessionCard(session, branches.get(session.id, 0), image, state))
    return cards


# --- the inspector: one turn, step by step ---------------------------------------------

_ERRORS = {
    "insufficient_credits": gettext_lazy("not enough credits"),
    "invalid_arguments": gettext_lazy("the director's arguments were not valid"),
    "in_progress": gettext_lazy("the render is still going on elsewhere"),
    "render_failed": gettext_lazy("the renderer failed"),
    "idempotency_key_reused": gettext_lazy("the render key was used for another panel"),
}
_DENIED = re.compile(r"^not run: (?P<who>.+) denied it$")


@dataclass(frozen=True, slots=True)
class Step:
    """One entry of a turn as the inspector shows it."""

    entry_id: str
    kind: str  # prompt / reply / result / state / summary / rewind
    text: str = ""
    calls: list[dict] = field(default_factory=list)  # tool, arguments (JSON), scene
    tool: str = ""
    is_error: bool = False
    error: str = ""  # why it failed, in the viewer's words
    images: list[str] = field(default_factory=list)  # panels it shows
    characters: dict = field(default_factory=dict)  # a state: the characters after it
    raw: str = ""  # the tool result as the journal keeps it
    is_leaf: bool = False


def inspector_steps(
    rows: list[StoredEntry], *, leaf_id: str, before: dict | None = None
) -> list[Step]:
    """The steps of a turn (``rows``: its entries, in order). With ``before``, the state
    before the turn, a state step shows only the characters it changed: an entry holds the
    whole state, and a hand edit of one character is not an edit of all of them."""
    parse_rows(rows)
    steps = []
    for row in rows:
        entry = row.entry
        here = entry.id == leaf_id
        if entry.type == "app_state":
            characters = characters_of(entry.value)
            if before is not None:
                changed = set(edited_characters(before, entry.value))
                characters = {n: c for n, c in characters.items() if n in changed}
                before = entry.value
            steps.append(Step(entry.id, "state", characters=characters, is_leaf=here))
        elif entry.type == "compaction":
            steps.append(Step(entry.id, "summary", text=entry.summary, is_leaf=here))
        elif entry.type == "branch":
            steps.append(Step(entry.id, "rewind", is_leaf=here))
        elif isinstance(entry.message, UserMessage):
            steps.append(Step(entry.id, "prompt", text=entry.message.content, is_leaf=here))
        elif isinstance(entry.message, AssistantMessage):
            calls = [
                {
                    "tool": call.name,
                    "name": call.name,
                    "scene": str(
                        call.arguments.get("prompt") or call.arguments.get("caption") or ""
                    ),
                    "arguments": json.dumps(call.arguments, ensure_ascii=False, indent=2),
                }
                for call in entry.message.tool_calls
            ]
            steps.append(
                Step(entry.id, "reply", text=entry.message.content, calls=calls, is_leaf=here)
            )
        elif isinstance(entry.message, ToolResultMessage):
            steps.append(_result_step(entry.id, entry.message, here))
    return steps


def turn_prompt(rows: list[StoredEntry]) -> Any:
    """The prompt a turn's entries (parsed) begin with, or None (a state edit, a pick…)."""
    for row in rows:
        if row.type == "message" and isinstance(row.entry.message, UserMessage):
            return row.entry
    return None


def _result_step(entry_id: str, message: ToolResultMessage, here: bool) -> Step:
    details = message.details or {}
    raw = json.dumps({"content": message.content, "details": details}, ensure_ascii=False, indent=2)
    images: list[str] = []
    characters: dict = {}
    error = ""
    if message.is_error:
        code = details.get("code")
        denied = _DENIED.match(message.content)
        if denied:
            error = gettext("not run: %(who)s said no") % {"who": people_named(denied["who"])}
        elif message.content == "not run on this branch":
            error = gettext("not run on this branch")
        else:
            error = str(_ERRORS.get(code) or gettext("it failed"))
    elif message.tool_name in ("generate_image", "place_panel", "publish_panel"):
        image = details.get("image_id")
        images = [image] if isinstance(image, str) else []
    elif message.tool_name == "list_panels":
        images = [p["image_id"] for p in details.get("panels", []) if isinstance(p, dict)][:24]
    elif message.tool_name == "set_character_state" and isinstance(details.get("state"), dict):
        characters = {str(details.get("character", "")): details["state"]}
    return Step(
        entry_id,
        "result",
        tool=message.tool_name,
        is_error=message.is_error,
        error=error,
        images=images,
        characters=characters,
        raw=people_named(raw),
        is_leaf=here,
    )


def _panel_ids(rows: list[StoredEntry]) -> list[str]:
    """The panels among a path's rows, in order (only the rows that may be one are parsed)."""
    kept = [r for r in rows if r.type == "message" and r.may_contain('"image_id"')]
    parse_rows(kept)
    return [r.entry_id for r in kept if panel_image_of(r.entry)]


def rewind_preview_of(
    *, session: ComicSession, target_rows: list[StoredEntry], leaf_rows: list[StoredEntry]
) -> RewindPreview:
    """``store.comparisons.rewind_preview_at`` from the two paths the inspector has loaded
    (root → the node, root → the leaf): the paths are compared by id and only the results
    of the part left behind that can hold an effect are parsed, where that one parses both
    paths whole (a 10,000-deep session's click on a node would parse 20,000 entries)."""
    shared = 0
    for a, b in zip(leaf_rows, target_rows, strict=False):
        if a.entry_id != b.entry_id:
            break
        shared += 1
    left = [
        r
        for r in leaf_rows[shared:]
        if r.type == "message" and (r.may_contain('"image_id"') or r.may_contain("publish_panel"))
    ]
    parse_rows(left)
    before = app_state_at(session=session, rows=leaf_rows)
    after = app_state_at(session=session, rows=target_rows)
    return RewindPreview(
        target_id=target_rows[-1].entry_id,
        changes=state_changes(before, after),
        left_behind=len(leaf_rows) - shared,
        stays=effects_of(r.entry for r in left),
        choices=choices_changed(before, after),
        comic=comic_changes(
            before, after, [r.entry_id for r in target_rows], lambda: _panel_ids(target_rows)
        ),
    )


# --- where a forked session came from ------------------------------------------------


@dataclass(frozen=True, slots=True)
class Origin:
    title: str  # the source's title ("" once it is gone, or when the viewer may not see it)
    session_id: str | None  # the source, when the viewer may see it (a link back)
    entry_id: str  # the node the fork's branch ends at


def fork_origin(*, session: ComicSession, viewer: Any) -> Origin | None:
    """Where ``session`` was forked from (its ``origin``), as ``viewer`` may be told it."""
    forked = (session.origin or {}).get("forked_from")
    if not isinstance(forked, dict):
        return None
    source = (
        ComicSession.objects.filter(pk=str(forked.get("session_id", "")), deleting=False)
        .only("id", "title", "owner_id")
        .first()
    )
    if source is None:
        return Origin("", None, str(forked.get("entry_id", "")))
    if not may_see(user=viewer, owner_id=source.owner_id):
        return Origin("", None, str(forked.get("entry_id", "")))
    return Origin(source.title, source.id, str(forked.get("entry_id", "")))


# --- credits: each movement with what it paid for --------------------------------------


@dataclass(frozen=True, slots=True)
class CreditRow:
    entry: LedgerEntry
    image_id: str | None = None  # the panel a charge paid for
    session_id: str | None = None  # … and the session it was drawn in
    session_title: str = ""

    @property
    def request_id(self) -> str:
        """The credit request a grant answered ("" for another movement)."""
        key = self.entry.job_key or ""
        return key.removeprefix("request:") if key.startswith("request:") else ""


def credit_rows(*, user: Any) -> list[CreditRow]:
    """The user's ledger, newest first, each charge with its panel and session."""
    ledger = ledger_for(user=user)
    keys = [e.job_key for e in ledger if e.job_key]
    images = dict(Image.objects.filter(job_id__in=keys).values_list("job_id", "id"))
    by_image = {image: key for key, image in images.items()}
    drawn_in = panel_sessions(owner=user, image_ids=list(by_image), keys=by_image)
    titles = dict(
        ComicSession.objects.filter(pk__in=set(drawn_in.values())).values_list("id", "title")
    )
    found = {image: (session_id, titles[session_id]) for image, session_id in drawn_in.items()}
    out = []
    for e in ledger:
        image = images.get(e.job_key) if e.job_key else None
        session_id, title = found.get(image, (None, "")) if image else (None, "")
        out.append(CreditRow(e, image, session_id, title))
    return out


@lru_cache(maxsize=8)
def _timeline_of(session_id: str, count: int) -> dict[str, Any]:
    session = ComicSession.objects.get(pk=session_id)
    rows = entries_after(session=session, after_seq=0, limit=count) if count else []
    return timeline_data(timeline([row.entry for row in rows], session.initial_app_state))


def timeline_of(*, session: ComicSession, count: int) -> dict[str, Any]:
    """The timeline of the session's first ``count`` entries, as the page's script reads it.

    Entries never change, so the first ``count`` of a session always make the same timeline:
    kept per process for the last few asked for (each ``?at=`` of the page is a new load of
    the same one; 10,000 entries take a second or two to read and parse).
    """
    return _timeline_of(session.id, count)


def node_labels_context(*, session_id: str, entry_id: str, can_edit: bool) -> dict[str, Any]:
    """What the labels part of a node shows (``studio/inspector/labels-part.html``)."""
    return {
        "labels": labels_on(session_id=session_id, entry_ids=[entry_id]),
        "can_edit": can_edit,
        "text_max": LABEL_TEXT_MAX,
    }


def back_target_of(*, session: ComicSession, rows: Sequence[StoredEntry]) -> str | None:
    """Where "back to where I was" goes from the active path ``rows`` (the leaf the latest
    rewind on it left), or None when no rewind is on it. One index search: the tree shows
    the button on every drawing, and its preview is read only when asked for
    (``back_preview_of``)."""
    target = where_i_was_of(rows) if rows else None
    return None if target is None or target == session.leaf_id else target


def back_preview_of(*, session: ComicSession) -> RewindPreview | None:
    """What "back to where I was" rolls back now, or None when there is nowhere to go."""
    rows = branch_rows(session=session, lazy=True)
    target = back_target_of(session=session, rows=rows)
    if target is None:
        return None
    try:
        target_rows = branch_rows(session=session, leaf_id=target, lazy=True)
    except (UnknownEntry, BrokenSessionTree):
        return None
    return rewind_preview_of(session=session, target_rows=target_rows, leaf_rows=rows)
