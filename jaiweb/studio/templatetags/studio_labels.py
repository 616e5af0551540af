"""Template filters for the studio's words: ``{% load studio_labels %}``."""

from __future__ import annotations

from django import template

from jaiweb.render import selectors as render_selectors
from jaiweb.studio import labels

register = template.Library()


@register.filter
def tag_label(tag: str) -> str:
    return labels.tag_label(tag)


@register.filter
def tool_label(name: str) -> str:
    return labels.tool_label(name)


@register.filter
def state_value(value, field: str) -> str:
    return labels.state_value(value, field)


@register.filter
def is_default(value, field: str) -> bool:
    return labels.is_default(field, value)


@register.filter
def layout_label(name: str) -> str:
    return labels.layout_label(name)


@register.filter
def permission_mode_label(mode: str) -> str:
    return labels.permission_mode_label(mode)


@register.filter
def draw_offer(reply: str) -> tuple[str, str] | None:
    return labels.draw_offer(reply)


@register.filter
def credits_level(balance: int, cost: int) -> str:
    """ "out", "last" (one panel left) or "ok": what the balance hint next to a paid button
    says (``jaiweb.render.selectors.credits_level``)."""
    return render_selectors.credits_level(balance=int(balance), cost=int(cost))
