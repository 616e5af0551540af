"""The lettering layer's geometry in templates: a bubble's tail, middle and lines, as the
exports draw them (``journal.pages``), so the page and the files agree."""

from __future__ import annotations

from django import template

from journal.pages import PlacedBubble, bubble_baseline, tail_points

register = template.Library()


@register.simple_tag
def bubble_tail(bubble: PlacedBubble) -> str:
    """The tail as an SVG path (empty when the bubble has none)."""
    points = tail_points(bubble)
    if not points:
        return ""
    (x0, y0), (x1, y1), (x2, y2) = points
    return f"M {x0} {y0} L {x1} {y1} L {x2} {y2} Z"


@register.simple_tag
def bubble_middle(bubble: PlacedBubble) -> int:
    return bubble.box.x + bubble.box.width // 2


@register.simple_tag
def bubble_baseline_of(bubble: PlacedBubble, line: int) -> int:
    return bubble_baseline(bubble, line)
