"""Reads behind the inspector: one turn, step by step, and a node's labels."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from django.utils.translation import gettext, gettext_lazy

from jaiweb.store.labels import TEXT_MAX as LABEL_TEXT_MAX
from jaiweb.store.labels import labels_on
from jaiweb.store.rows import StoredEntry, parse_rows
from jaiweb.studio.labels import people_named
from jaiweb.studio.selectors.characters import characters_of, edited_characters
from journal.entries import AssistantMessage, ToolResultMessage, UserMessage

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


def node_labels_context(*, session_id: str, entry_id: str, can_edit: bool) -> dict[str, Any]:
    """What the labels part of a node shows (``studio/inspector/labels-part.html``)."""
    return {
        "labels": labels_on(session_id=session_id, entry_ids=[entry_id]),
        "can_edit": can_edit,
        "text_max": LABEL_TEXT_MAX,
    }
