"""Reads of the variant sets on a path (``journal/variants.py``) from stored rows."""

from __future__ import annotations

from collections.abc import Sequence

from jaiweb.store.rows import StoredEntry, parse_rows
from journal.variants import DRAW_TOOL, VariantSet, sets_on


def variant_sets_of(rows: Sequence[StoredEntry]) -> list[VariantSet]:
    """The variant sets drawn on a path (``rows``: root → a node), each with its members.

    Only the rows that name the drawing tool are parsed: the replies that call it and its
    results."""
    kept = [r for r in rows if r.type == "message" and r.may_contain(DRAW_TOOL)]
    parse_rows(kept)
    return sets_on(r.entry for r in kept)
