"""``{% tree_item item %}``: one turn of the tree, its HTML kept per process.

The tree is drawn again and again: each page, and each watcher's catch-up after every
entry of a run. A turn's HTML depends on the turn alone (a frozen value that holds its
labels, credits, badges and whether it is active or the leaf), the session's id, the
language and the script prefix. So a turn is rendered once and its HTML reused while it
stays the same; a turn with branches drawn open holds lists and is rendered each time
(its branches' own turns reusing theirs).

Whether the session is right after the turn (``here``) is kept apart, in the slots of the
turn's HTML (``jaiweb.studio.slotted``): a run's new turn takes the leaf from the turn
before it, which then reuses the HTML it was drawn with.
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from types import SimpleNamespace

from django import template
from django.template.loader import get_template
from django.urls import get_script_prefix
from django.utils.safestring import SafeString
from django.utils.translation import get_language

from jaiweb.studio.slotted import SlotMarks, Slotted, slotted

register = template.Library()


def _render(item, session_id: str) -> Slotted:
    context = {"item": item, "session": SimpleNamespace(id=session_id), "slot": SlotMarks()}
    return slotted(get_template("studio/tree/item.html").render(context))


@lru_cache(maxsize=4096)
def _drawn(item, session_id: str, language: str | None, prefix: str) -> Slotted:
    return _render(item, session_id)


def _marked(item, session_id: str, language: str | None, prefix: str) -> SafeString:
    """The turn's HTML, drawn as if the leaf were elsewhere, then marked where it is."""
    if item.kind == "more":
        return _render(item, session_id).filled({})
    kept = replace(item, here=False) if item.here else item
    try:
        drawn = _drawn(kept, session_id, language, prefix)
    except TypeError:  # not hashable: branches drawn open, lists of turns
        drawn = _render(kept, session_id)
    return drawn.filled(
        {
            "leaf_mark": ' data-leaf="true"' if item.here else "",
            "here": _here_part(item.entry_id, item.here, language, prefix),
        }
    )


@lru_cache(maxsize=4096)
def _rendered(item, session_id: str, language: str | None, prefix: str) -> SafeString:
    return _marked(item, session_id, language, prefix)


@lru_cache(maxsize=4096)
def _here_part(entry_id: str, here: bool, language: str | None, prefix: str) -> SafeString:
    context = {"entry_id": entry_id, "here": here}
    return get_template("studio/tree/here.html").render(context)


def tree_items_forget() -> None:
    """Forget every turn's HTML (a bench's cold request; a test that changes templates)."""
    for kept in (_rendered, _drawn, _here_part):
        kept.cache_clear()


@register.simple_tag(takes_context=True)
def tree_item(context, item) -> SafeString:
    session_id = context["session"].id
    language, prefix = get_language(), get_script_prefix()
    try:
        return _rendered(item, session_id, language, prefix)
    except TypeError:  # not hashable: branches drawn open, lists of turns
        return _marked(item, session_id, language, prefix)
