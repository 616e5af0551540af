"""``{% strip_panel panel %}``: one panel of the strip, its HTML kept per process.

The strip is drawn again after every entry of a run, for each page and each watcher's
catch-up, and most of its panels have not changed. A panel's HTML depends on the panel
alone (a frozen value that holds its lettering, its variant and sibling switchers and
where "continue from here" goes), the character names its forms offer, the session's id,
the language and the script prefix. It names no leaf: its forms send the page's leaf when
they are submitted. So a panel is rendered once and its HTML reused while it stays the
same.
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


@lru_cache(maxsize=4096)
def _rendered(
    panel, characters: tuple[str, ...], session_id: str, language: str | None, prefix: str
) -> SafeString:
    context = {
        "panel": panel,
        "characters": characters,
        "session": SimpleNamespace(id=session_id),
    }
    return get_template("studio/strip/panel.html").render(context)


def strip_panels_forget() -> None:
    """Forget every panel's HTML (a bench's cold request; a test that changes templates)."""
    _rendered.cache_clear()


@register.simple_tag(takes_context=True)
def strip_panel(context, panel) -> SafeString:
    characters = tuple(context.get("characters") or ())
    return _rendered(panel, characters, context["session"].id, get_language(), get_script_prefix())
