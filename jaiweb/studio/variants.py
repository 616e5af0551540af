"""The strip's variant switcher: of each variant set, the panel chosen, with its place.

A pure step over the strip's panels (``selectors.Panel``): the variants not chosen leave the
strip, and the one chosen carries a ``VariantView`` saying which of how many it is, so the
page can draw "‹ 2/4 ›" and post the neighbours' numbers (``journal/variants.py``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from journal.entries import Entry
from journal.variants import VariantSet, chosen_member, sets_on


@dataclass(frozen=True, slots=True)
class VariantView:
    set_id: str
    index: int  # the variant shown, from 1
    count: int  # the variants drawn

    @property
    def previous(self) -> int | None:
        return self.index - 1 if self.index > 1 else None

    @property
    def next(self) -> int | None:
        return self.index + 1 if self.index < self.count else None


def choices_on_rows(rows: Sequence[Any]) -> Mapping[str, Any]:
    """The variants chosen in the last ``app_state`` row of a path (none: no choice)."""
    from journal.variants import choices_of

    for row in reversed(rows):
        if row.type == "app_state":
            return choices_of(row.entry.value)
    return {}


def with_variants(panels: list, entries: Iterable[Entry], choices: Mapping[str, Any]) -> list:
    """``panels`` (in path order, drawn from ``entries``) with each variant set down to its
    chosen member, which carries its ``VariantView``."""
    sets: list[VariantSet] = [s for s in sets_on(entries) if s.members]
    if not sets:
        return panels
    member_of = {m: s for s in sets for m in s.members}
    out = []
    for panel in panels:
        variant_set = member_of.get(panel.entry_id)
        if variant_set is None:
            out.append(panel)
            continue
        if panel.entry_id != chosen_member(variant_set, choices):
            continue
        index = variant_set.members.index(panel.entry_id) + 1
        view = VariantView(variant_set.id, index, len(variant_set.members))
        out.append(replace(panel, variant=view))
    return out
