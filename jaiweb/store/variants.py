"""Reads for the strip's switcher: the variant sets on a path (``journal/variants.py``), and
the sibling prompts of a turn (a regenerate's, a resend's)."""

from __future__ import annotations

from collections.abc import Sequence

from django.db.models import F

from jaiweb.prepared import Prepared
from jaiweb.store.models import ComicSession, Entry
from jaiweb.store.rows import StoredEntry, parse_rows
from journal.variants import DRAW_TOOL, VariantSet, sets_on


def variant_sets_of(rows: Sequence[StoredEntry]) -> list[VariantSet]:
    """The variant sets drawn on a path (``rows``: root → a node), each with its members.

    Only the rows that name the drawing tool are parsed: the replies that call it and its
    results."""
    kept = [r for r in rows if r.type == "message" and r.may_contain(DRAW_TOOL)]
    parse_rows(kept)
    return sets_on(r.entry for r in kept)


# The children of some nodes (the prompts and the rewinds hanging from them), with each
# message's role: run after every change a watcher hears of, so compiled once. Unordered:
# an ORDER BY seq made SQLite walk the session's (session, seq) index, every entry of it,
# rather than the children's index; the prompts are put in append order below.
_UNDER = Prepared(
    lambda session_id, parents, known: Entry.objects.filter(
        session_id=session_id, parent_id__in=parents, seq__lte=known
    ).values_list("parent_id", "entry_id", "type", "seq", "payload__message__role"),
    session_id=str,
    parents=[str],
    known=int,
)


def prompt_siblings(*, session: ComicSession, parents: Sequence[str]) -> dict[str, list[str]]:
    """The prompts hanging from each node of ``parents``, in append order: its user-message
    children and those of the rewinds made to it (a regenerate or a resend hangs its prompt
    under a ``branch`` entry at the node). Two queries, whatever the number of nodes."""
    if not parents:
        return {}
    known = session.entry_count
    under = _UNDER.rows(session_id=session.id, parents=sorted(set(parents)), known=known)
    node_of = {entry_id: parent for parent, entry_id, type_, _s, _r in under if type_ == "branch"}
    found: list[tuple[int, str, str]] = [
        (seq, parent, entry_id)
        for parent, entry_id, type_, seq, role in under
        if type_ == "message" and role == "user"
    ]
    if node_of:
        found += [
            (seq, node_of[parent], entry_id)
            for parent, entry_id, type_, seq, role in _UNDER.rows(
                session_id=session.id, parents=sorted(node_of), known=known
            )
            if type_ == "message" and role == "user"
        ]
    siblings: dict[str, list[str]] = {parent: [] for parent in parents}
    for _seq, parent, entry_id in sorted(found):
        siblings[parent].append(entry_id)
    return siblings


_CHAIN_OF = Prepared(
    lambda session_id, entry_id: Entry.objects.filter(
        session_id=session_id, entry_id=entry_id
    ).values_list("chain")[:1],
    session_id=str,
    entry_id=str,
)
# A chain's last entry the session's snapshot holds. The snapshot's bound is on ``seq + 0``:
# on ``seq`` itself, SQLite walked the session's (session, seq) index, every entry of it,
# rather than the chain's own (session, chain, chain_pos) index backwards.
_CHAIN_END = Prepared(
    lambda session_id, chain, known: (
        Entry.objects.filter(session_id=session_id, chain=chain)
        .alias(appended=F("seq") + 0)
        .filter(appended__lte=known)
        .order_by("-chain_pos")
        .values_list("entry_id")[:1]
    ),
    session_id=str,
    chain=int,
    known=int,
)


def line_end(*, session: ComicSession, entry_id: str) -> str:
    """The last entry of the line (the chain of first children) that holds ``entry_id``:
    where that branch was left, as a sibling turn's flip goes back to. ``entry_id`` itself
    when it is unknown."""
    found = _CHAIN_OF.first(session_id=session.id, entry_id=entry_id)
    if found is None:
        return entry_id
    last = _CHAIN_END.first(session_id=session.id, chain=found[0], known=session.entry_count)
    return last[0] if last else entry_id
