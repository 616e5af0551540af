"""Limits the tree's tools show in their forms (the server enforces the same ones)."""

from django import template

from jaiweb.store.search import QUERY_MAX

register = template.Library()


@register.simple_tag
def search_max() -> int:
    return QUERY_MAX
