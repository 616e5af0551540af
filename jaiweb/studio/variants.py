"""The strip's switchers: of each variant set the panel chosen, and a turn's siblings.

A step over the strip's panels (``selectors.strip.Panel``): the variants not chosen leave the
strip, and the one chosen carries a ``VariantView`` saying which of how many it is, so the
page can draw "‹ 2/4 ›" and post the neighbours' numbers (``journal/variants.py``). The
first panel of a turn whose prompt has siblings (regenerated, sent again) carries a
``SiblingView``: the same switcher, where a flip opens the rewind to the end of the
sibling's line (where that branch was left) in the inspector, previewed like any rewind.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from jaiweb.store.rows import indices_of
from jaiweb.store.variants import line_end, prompt_siblings
from journal.entries import Entry
from journal.variants import VariantSet, choices_of, chosen_member, sets_on


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
        if len(variant_set.members) < 2:  # one drawn (the others failed): nothing to choose
            out.append(panel)
            continue
        index = variant_set.members.index(panel.entry_id) + 1
        view = VariantView(variant_set.id, index, len(variant_set.members))
        out.append(replace(panel, variant=view))
    return out


@dataclass(frozen=True, slots=True)
class SiblingView:
    """Say where a turn stands among the prompts hanging from one node.

    Such prompts come from a regenerate or a resend. The view says which of how many the turn
    is, and gives the ends of the lines of the prompts before and after it: where each branch
    was left, its choices of variants included. A flip rewinds there after the rewind
    preview, as any rewind does."""

    index: int  # from 1, in append order
    count: int
    previous_id: str | None
    next_id: str | None


def with_siblings(session: Any, rows: Sequence[Any], panels: list) -> list:
    """``panels`` with each turn's first panel carrying its ``SiblingView`` when the turn's
    prompt has siblings (``rows``: the path they are on)."""
    firsts: dict[str, int] = {}  # a turn's prompt → its first panel among ``panels``
    for i, panel in enumerate(panels):
        if panel.prompt_id is not None and panel.prompt_id not in firsts:
            firsts[panel.prompt_id] = i
    node_of: dict[str, str] = {}  # a prompt → the story node it hangs from
    found = indices_of(rows, list(firsts))
    for prompt_id in firsts:
        at = found[prompt_id]
        j = -1 if at is None else at - 1
        while j >= 0 and rows[j].type == "branch":
            j -= 1
        if j >= 0:
            node_of[prompt_id] = rows[j].entry_id
    if not node_of:
        return panels
    siblings = prompt_siblings(session=session, parents=sorted(set(node_of.values())))
    out = list(panels)
    for prompt_id, i in firsts.items():
        prompts = siblings.get(node_of.get(prompt_id, ""), [])
        if len(prompts) < 2 or prompt_id not in prompts:
            continue
        k = prompts.index(prompt_id)
        before = line_end(session=session, entry_id=prompts[k - 1]) if k > 0 else None
        after = line_end(session=session, entry_id=prompts[k + 1]) if k + 1 < len(prompts) else None
        out[i] = replace(out[i], siblings=SiblingView(k + 1, len(prompts), before, after))
    return out
