"""``{% tree_item item %}``: one turn of the tree, its HTML kept per process.

The tree is drawn again and again: each page, and each watcher's catch-up after every
entry of a run. A turn's HTML depends on the turn alone (a frozen value that holds its
labels, credits, badges and whether it is active or the leaf), the session's id, the
language and the script prefix. So a turn is rendered once and its HTML reused while it
stays the same; a turn with branches drawn open holds lists and is rendered each time
(its branches' own turns reusing theirs).
"""

from __future__ import annotations

from functools import lru_cache
from types import SimpleNamespace

from django import template
from django.template.loader import get_template
from django.urls import get_script_prefix
from django.utils.safestring import SafeString
from django.utils.translation import get_language

register = template.Library()


def _render(item, session_id: str) -> SafeString:
    context = {"item": item, "session": SimpleNamespace(id=session_id)}
    return get_template("studio/tree/item.html").render(context)


@lru_cache(maxsize=4096)
def _rendered(item, session_id: str, language: str | None, prefix: str) -> SafeString:
    return _render(item, session_id)


def tree_items_forget() -> None:
    """Forget every turn's HTML (a bench's cold request; a test that changes templates)."""
    _rendered.cache_clear()


@register.simple_tag(takes_context=True)
def tree_item(context, item) -> SafeString:
    session_id = context["session"].id
    try:
        hash(item)
    except TypeError:  # branches drawn open: lists of turns
        return _render(item, session_id)
    return _rendered(item, session_id, get_language(), get_script_prefix())
