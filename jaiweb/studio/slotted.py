"""Kept fragments with slots: HTML kept whole but for a few small parts that change often.

A turn of the tree, a panel of the strip and the strip's export links are kept per
process by what they show (their template tags). One thing each shows changes more often
than the rest: where the session is now. When a run adds a turn, the turn before it stops
being "where you are" and nothing else of it changes. So the kept HTML holds a named slot
at each such place (``{{ slot.here }}`` in its template), and the tag fills the slots with
small parts: the big fragment is rendered once per content, not once more each time the
leaf moves on.

A slot is markup that only a template can write: every template that holds one escapes
what a user typed, so a typed ``<`` comes out as ``&lt;`` and can never forge one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from django.utils.safestring import SafeString, mark_safe

_SLOT = re.compile(r"<jaiweb-slot ([a-z_]+)>")


class SlotMarks(dict):
    """The ``slot`` of a slotted template's context: ``{{ slot.<name> }}`` marks a slot."""

    def __missing__(self, name: str) -> SafeString:
        return mark_safe(f"<jaiweb-slot {name}>")


@dataclass(frozen=True, slots=True)
class Slotted:
    """Rendered HTML cut at its slots: ``pieces`` has one piece more than ``names``."""

    pieces: tuple[str, ...]
    names: tuple[str, ...]

    def filled(self, parts: Mapping[str, str]) -> SafeString:
        """The HTML with each slot holding its part (a ``KeyError`` for a part not given)."""
        html = self.pieces[0]
        for name, piece in zip(self.names, self.pieces[1:], strict=True):
            html += parts[name] + piece
        return SafeString(html)


def slotted(html: str) -> Slotted:
    """``html`` (rendered with a ``SlotMarks`` as its ``slot``) cut at its slots."""
    cut = _SLOT.split(html)
    return Slotted(pieces=tuple(cut[0::2]), names=tuple(cut[1::2]))
