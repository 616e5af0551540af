"""``{% strip_panel panel %}`` and ``{% strip_footer %}``: the strip's panels and its
export links, their HTML kept per process.

The strip is drawn again after every entry of a run, for each page and each watcher's
catch-up, and most of its panels have not changed. A panel's HTML depends on the panel
alone (a frozen value that holds its lettering and its variant and sibling switchers),
the character names its forms offer, the session's id, the language and the script
prefix. It names no leaf: its forms send the page's leaf when they are submitted. So a
panel is rendered once and its HTML reused while it stays the same. The export links and
the layout form under the panels depend on the session, its layout and the language.

Where the session is now is kept apart, in slots (``jaiweb.studio.slotted``): where
"continue from here" on a panel goes, and the leaf the export links name. A run's new turn
moves the leaf past the panel before it, which then reuses the HTML it was drawn with.
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from types import SimpleNamespace

from django import template
from django.template.defaultfilters import urlencode
from django.template.defaulttags import CsrfTokenNode
from django.template.loader import get_template
from django.urls import get_script_prefix
from django.utils.html import conditional_escape
from django.utils.safestring import SafeString
from django.utils.translation import get_language

from jaiweb.studio.labels import LAYOUT_LABELS
from jaiweb.studio.slotted import SlotMarks, Slotted, slotted
from journal.lettering import LAYOUT_NAMES

register = template.Library()


@lru_cache(maxsize=4096)
def _rendered(
    panel, characters: tuple[str, ...], session_id: str, language: str | None, prefix: str
) -> SafeString:
    kept = replace(panel, continue_id=None) if panel.continue_id else panel
    drawn = _drawn(kept, characters, session_id, language, prefix)
    return drawn.filled({"continue": _continue_part(panel.continue_id, language)})


@lru_cache(maxsize=4096)
def _drawn(
    panel, characters: tuple[str, ...], session_id: str, language: str | None, prefix: str
) -> Slotted:
    context = {
        "panel": panel,
        "characters": characters,
        "session": SimpleNamespace(id=session_id),
        "slot": SlotMarks(),
    }
    return slotted(get_template("studio/strip/panel.html").render(context))


@lru_cache(maxsize=4096)
def _continue_part(continue_id: str | None, language: str | None) -> SafeString:
    return get_template("studio/strip/continue.html").render({"continue_id": continue_id})


@lru_cache(maxsize=1024)
def _footer(session_id: str, layout: str, language: str | None, prefix: str) -> Slotted:
    context = {
        "session": SimpleNamespace(id=session_id),
        "layout": layout,
        "layouts": [(name, LAYOUT_LABELS[name]) for name in LAYOUT_NAMES],
        "slot": SlotMarks(),
    }
    return slotted(get_template("studio/strip/footer.html").render(context))


def strip_panels_forget() -> None:
    """Forget every panel's HTML and the export links' (a bench's cold request; a test that
    changes templates)."""
    for kept in (_rendered, _drawn, _continue_part, _footer):
        kept.cache_clear()


@register.simple_tag(takes_context=True)
def strip_panel(context, panel) -> SafeString:
    characters = tuple(context.get("characters") or ())
    return _rendered(panel, characters, context["session"].id, get_language(), get_script_prefix())


@register.simple_tag(takes_context=True)
def strip_footer(context) -> SafeString:
    """The export links and the layout form (``layout``: the branch's), naming the leaf."""
    session = context["session"]
    footer = _footer(session.id, context["layout"], get_language(), get_script_prefix())
    return footer.filled(
        {
            "leaf_query": conditional_escape(urlencode(session.leaf_id)),
            "leaf_id": conditional_escape(session.leaf_id or ""),
            "csrf_token": CsrfTokenNode().render(context),
        }
    )
