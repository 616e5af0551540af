"""``{% path_to %}``: ``{% url %}`` for the tree's and strip's per-node links, made cheap.

A page draws a few dozen nodes, each with three or four links; ``reverse`` walks the
URLconf through asgiref Locals every time (20–50 µs each, a tenth of the tree's render on
a busy box). The pattern of a name is reversed once per script prefix, with a marker for
each argument, and the arguments are put in with the quoting ``reverse`` applies. An
argument the pattern's ``str`` converter would refuse (empty, or with a "/") goes through
``reverse`` itself, so it fails exactly as ``{% url %}`` would.
"""

from __future__ import annotations

import re
from functools import lru_cache
from urllib.parse import quote

from django import template
from django.urls import get_script_prefix, reverse

register = template.Library()

_SAFE = "!$&'()*+,;=~:@"  # what reverse leaves unquoted, "/" apart (RFC 3986 sub-delims + ~:@)
_PLAIN = re.compile(r"[A-Za-z0-9_.~-]+")  # ids as the store makes them: nothing to quote
_MARKS = re.compile(r"JAIWEBARG(\d+)X")


@lru_cache(maxsize=256)
def _pattern(name: str, count: int, prefix: str) -> tuple[str, ...]:
    """The URL of ``name`` split around its arguments: text, index, text, … text."""
    url = reverse(name, args=[f"JAIWEBARG{i}X" for i in range(count)])
    return tuple(_MARKS.split(url))


@register.simple_tag
def path_to(name: str, *args) -> str:
    """The path of the URL named ``name`` with ``args``, as ``{% url name *args %}`` gives."""
    values = [str(a) for a in args]
    if not all(values) or any("/" in v for v in values):
        return reverse(name, args=values)
    parts = _pattern(name, len(values), get_script_prefix())
    out = list(parts)
    for i in range(1, len(parts), 2):
        value = values[int(parts[i])]
        out[i] = value if _PLAIN.fullmatch(value) else quote(value, safe=_SAFE)
    return "".join(out)
