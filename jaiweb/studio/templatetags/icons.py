"""``{% icon "name" %}``: a small inline SVG icon, drawn in the text's colour.

The studio's icons are these SVG paths, not glyphs of a font: a glyph the reader's fonts
lack (the fork sign "⑂" was one) shows as an empty box. Inline SVG needs no request and
passes the page's Content-Security-Policy (no style, no script).
"""

from __future__ import annotations

from django import template
from django.utils.safestring import mark_safe

register = template.Library()

# 24×24 outlines in the manner of the Lucide set: 2-unit strokes, round caps and joins.
PATHS = {
    # a branch forking: two tips joined into one stem
    "fork": '<circle cx="6" cy="5" r="2.5"/><circle cx="18" cy="5" r="2.5"/>'
    '<circle cx="12" cy="19" r="2.5"/><path d="M6 7.5v2a3 3 0 0 0 3 3h6a3 3 0 0 0 3-3v-2"/>'
    '<path d="M12 12.5v4"/>',
    # back up to a point, then on from there
    "continue": '<path d="M9 14 4 9l5-5"/><path d="M4 9h10.5a5.5 5.5 0 0 1 0 11H11"/>',
    # the same again: a circular arrow
    "regenerate": '<path d="M21 12a9 9 0 1 1-3-6.7L21 8"/><path d="M21 3v5h-5"/>',
    # a branch hanging from the card above
    "branch": '<path d="M6 3v9a4 4 0 0 0 4 4h9"/><path d="m15 12 4 4-4 4"/>',
}


@register.simple_tag
def icon(name: str) -> str:
    """The icon ``name`` as inline SVG, hidden from screen readers (its label is the text
    beside it)."""
    body = PATHS[name]
    return mark_safe(  # fixed markup from PATHS, nothing a user typed
        f'<svg class="ico" data-icon-svg="{name}" viewBox="0 0 24 24" width="16" height="16" '
        'fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" '
        f'stroke-linejoin="round" aria-hidden="true" focusable="false">{body}</svg>'
    )
