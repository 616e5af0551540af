"""Reads behind the studio's strip: its panels, a page at a time, with their lettering."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from jaiweb.comic.selectors import panel_layers
from jaiweb.store.models import ComicSession
from jaiweb.store.rows import PathRows, StoredEntry, index_of, parse_rows
from jaiweb.store.selectors import tool_results_at
from jaiweb.studio.variants import (
    SiblingView,
    VariantView,
    choices_on_rows,
    with_siblings,
    with_variants,
)
from journal.branches import PANEL_TOOLS
from journal.entries import AssistantMessage, ToolResultMessage, UserMessage
from journal.errors import UnknownEntry
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
        if panel_image(rows[i]) is None:
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
            if panel_image(rows[j]) is not None:
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


def _image_of(row: StoredEntry, tools: Collection[str]) -> str | None:
    """The image id of a successful result row of one of ``tools``, else None (most rows
    unparsed)."""
    if row.type != "message" or not row.may_contain('"image_id"'):
        return None
    message = row.entry.message
    if not isinstance(message, ToolResultMessage) or message.is_error:
        return None
    if message.tool_name not in tools:
        return None
    image = message.details.get("image_id")
    return image if isinstance(image, str) else None


def panel_image(row: StoredEntry) -> str | None:
    """The image of a panel of the strip: drawn here, or placed here from another branch."""
    return _image_of(row, PANEL_TOOLS)


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
    return {image for r in stretch if (image := _image_of(r, ("publish_panel",))) is not None}


def _results_on(
    rows: Sequence[StoredEntry],
    session: ComicSession,
    tools: tuple[str, ...],
    start: int,
    stop: int,
) -> list[int]:
    """Return where the results of ``tools`` are among ``rows[start:stop]`` of a path, in order.

    One search finds the session's results by tool name, with no payload parsed. When
    ``rows`` is a ``PathRows``, the results are placed on the path by their chain positions,
    so no row of the stretch is read; otherwise they are placed by seq."""
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
        elif (image := _image_of(row, ("generate_image",))) is not None:
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
        elif (image := _image_of(row, ("place_panel",))) is not None:
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
