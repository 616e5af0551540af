"""What the studio calls things, in the viewer's language: tree tags, tools, state values.

The journal keeps tool names, default state values and people as the code writes them
(``generate_image``, ``无``, ``user:2``); the page shows each in the viewer's words.
"""

from __future__ import annotations

import re
from typing import Any

from django.contrib.auth import get_user_model
from django.utils.translation import gettext_lazy as _

from journal.appstate import Character
from journal.cast import DEFAULT_STATE

# The tag of a tree node (what starts the turn), short: it sits in a badge.
TAGS = {
    "you": _("you"),
    "ai": _("director"),
    "state": _("state"),
    "tool": _("tool"),
    "panel": _("panel"),
    "picked": _("picked from another branch"),
    "summary": _("summary"),
    "fork": _("fork"),
}

# A human name per tool (an unknown tool shows its own name).
TOOLS = {
    "generate_image": _("draw a panel"),
    "set_character_state": _("set a character's state"),
    "publish_panel": _("publish a panel"),
    "list_panels": _("list the panels"),
    "place_panel": _("put a panel from another branch here"),
}

# How each page layout is named in the strip's choice and the rewind preview
# (journal.pages.LAYOUTS).
LAYOUT_LABELS = {
    "2x2": _("2×2 (four panels a page)"),
    "3-tier": _("3 tiers (six panels a page)"),
    "strip": _("Strip (two panels a page)"),
    "splash": _("Splash (one panel a page)"),
}

# The stored default of each character field (journal.appstate), shown as a placeholder.
_DEFAULTS = {name: field.default for name, field in Character.model_fields.items()}
_ENGLISH = DEFAULT_STATE["en"]
DEFAULT_SHOWN = {
    "buff": _("none"),
    "skill": _("none"),
    "mood": _("calm"),
}

PERMISSION_MODES = {"ask": _("ask me"), "auto": _("don't ask")}

# How a run ended (operation_finished's outcome), as the stream's last line says it.
OUTCOMES = {
    "completed": _("completed"),
    "aborted": _("stopped"),
    "failed": _("failed"),
    "interrupted": _("interrupted"),
}


def outcome_label(outcome: str) -> str:
    return str(OUTCOMES.get(outcome, outcome))


def tag_label(tag: str) -> str:
    return str(TAGS.get(tag, tag))


def tool_label(name: str) -> str:
    return str(TOOLS.get(name, name))


def is_default(field: str, value: Any) -> bool:
    """The value is the stored default of that character field in either language (``无``,
    ``平静``; ``none``, ``calm``)."""
    return field in DEFAULT_SHOWN and value in (_DEFAULTS.get(field), _ENGLISH.get(field))


def state_value(value: Any, field: str) -> str:
    """A character field as the page shows it: the default in the viewer's words."""
    if is_default(field, value):
        return str(DEFAULT_SHOWN[field])
    return "" if value is None else str(value)


def permission_mode_label(mode: str) -> str:
    return str(PERMISSION_MODES.get(mode, mode))


_PERSON = re.compile(r"\buser:(\d+)\b")


def people_named(text: str) -> str:
    """``user:<id>`` in a journal text (who approved, denied, stopped) as a username."""
    ids = {int(m) for m in _PERSON.findall(text)}
    if not ids:
        return text
    names = dict(get_user_model().objects.filter(pk__in=ids).values_list("pk", "username"))
    return _PERSON.sub(lambda m: names.get(int(m.group(1)), m.group(0)), text)


# The director's offer of a panel it was unsure about: its reply ends with the /draw line.
DRAW_OFFER = re.compile(r"^(?P<text>\[[^\]]+\].*?)\s*(?P<line>/(?:draw|画)\s.+?)\s*[.。]?$", re.S)


def draw_offer(reply: str) -> tuple[str, str] | None:
    """``(text, /draw line)`` when a director's reply ends by offering a panel, so the page
    shows a one-click "Draw it" button that sends that line instead of asking for it to be
    typed; None for any other reply."""
    found = DRAW_OFFER.match(reply or "")
    return (found.group("text"), found.group("line")) if found else None


def layout_label(name: str) -> str:
    """A page layout's name in the viewer's words (an unknown one as it is)."""
    return str(LAYOUT_LABELS.get(name, name))
