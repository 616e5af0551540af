"""Reading state: which branches of a session each person has opened (issue 30).

A branch is a chain of the tree (``Entry.chain``: a run of first children), named by its
head's entry id. Each chain ends at one leaf and each leaf ends one chain, so a branch is
also the way to a leaf. Looking at the studio page reads the branch of the active leaf;
opening a node off the active path in the inspector reads the node's branch. A branch
left unread carries a dot in the tree where it leaves what the page draws (its first entry
off the active path), and "next unread" jumps there. It is a side table (``BranchRead``),
per user: nothing of the story, so it is never an entry and no rewind moves it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import Q
from django.utils import timezone

from jaiweb.store.models import BranchRead, ComicSession, Entry
from jaiweb.store.rows import PathRows
from jaiweb.store.selectors import branch_rows

STARTS_AT_ONCE = 200  # branches whose start one query looks up


@dataclass(frozen=True, slots=True)
class Branch:
    head_id: str  # the chain's first entry: a fork's or a rewind's child, or the root
    start_id: str  # its first entry off the active path, where the tree shows it
    parent_id: str | None  # the node ``start_id`` hangs from
    seq: int  # the head's


def _heads(session: ComicSession) -> list[tuple[str, str | None, int, str]]:
    """(id, parent, seq, type) of every chain head, as far as the session was read, less a
    rewind's branch entry that nothing followed (the tree draws none), unless the leaf."""
    heads = list(
        Entry.objects.filter(session=session, chain_pos=0, seq__lte=session.entry_count)
        .order_by("seq")
        .values_list("entry_id", "parent_id", "seq", "type")
    )
    lone = [seq for _id, _parent, seq, kind in heads if kind == "branch"]
    followed = (
        set(
            Entry.objects.filter(
                session=session, chain__in=lone, chain_pos=1, seq__lte=session.entry_count
            ).values_list("chain", flat=True)
        )
        if lone
        else set()
    )
    return [h for h in heads if h[3] != "branch" or h[2] in followed or h[0] == session.leaf_id]


def _path(session: ComicSession) -> PathRows | None:
    rows = branch_rows(session=session, lazy=True)
    return rows if isinstance(rows, PathRows) and len(rows) else None


def unread_branches(*, user: Any, session: ComicSession) -> list[Branch]:
    """The branches ``user`` has not opened, in append order, each with where it leaves
    the active path. The active leaf's own branch is never among them."""
    read = set(
        BranchRead.objects.filter(user=user, session=session).values_list("head_id", flat=True)
    )
    path = _path(session)
    on_path = {}  # chain → its last position on the active path
    if path is not None:
        for k, chain in enumerate(path.chains):
            on_path[chain] = path.last_positions[k]
    active_chain = path.chains[-1] if path is not None else None
    wanted = [h for h in _heads(session) if h[0] not in read and h[2] != active_chain]
    if not wanted:
        return []
    starts: dict[int, tuple[str, str | None]] = {}
    for at in range(0, len(wanted), STARTS_AT_ONCE):  # a bounded OR: SQLite's depth limit
        where = Q()
        for _id, _parent, seq, _kind in wanted[at : at + STARTS_AT_ONCE]:
            where |= Q(chain=seq, chain_pos=on_path.get(seq, -1) + 1)
        for chain, entry_id, parent in Entry.objects.filter(where, session=session).values_list(
            "chain", "entry_id", "parent_id"
        ):
            starts[chain] = (entry_id, parent)
    return [
        Branch(head_id, *starts[seq], seq)
        for head_id, _parent, seq, _kind in wanted
        if seq in starts  # a chain wholly on the active path ends there: nothing more to read
    ]


def branches_read_mark(
    *, user: Any, session: ComicSession, head_ids: list[str], now: datetime | None = None
) -> None:
    """``user`` has opened these branches (a branch read twice stays one row)."""
    if not head_ids or not getattr(user, "is_authenticated", False):
        return
    at = now or timezone.now()
    BranchRead.objects.bulk_create(
        [BranchRead(user=user, session=session, head_id=h, read_at=at) for h in set(head_ids)],
        ignore_conflicts=True,
    )


def _heads_of(session: ComicSession, chains: set[int]) -> list[str]:
    return list(
        Entry.objects.filter(session=session, seq__in=chains, chain_pos=0).values_list(
            "entry_id", flat=True
        )
    )


def path_read_mark(*, user: Any, session: ComicSession, now: datetime | None = None) -> None:
    """``user`` looks at the active path: the branch of its leaf is read."""
    path = _path(session)
    if path is not None:
        heads = _heads_of(session, {path.chains[-1]})
        branches_read_mark(user=user, session=session, head_ids=heads, now=now)


def node_read_mark(
    *, user: Any, session: ComicSession, entry_ids: list[str], now: datetime | None = None
) -> None:
    """``user`` opened a node (its turn's entries named by ``entry_ids``): the branches of
    those entries that are off the active path are read (the path itself is read by
    looking at the page)."""
    path = _path(session)
    chains = {
        chain
        for chain, pos in Entry.objects.filter(session=session, entry_id__in=entry_ids).values_list(
            "chain", "chain_pos"
        )
        if path is None or path.index_at(chain, pos) is None
    }
    if chains:
        heads = _heads_of(session, chains)
        branches_read_mark(user=user, session=session, head_ids=heads, now=now)
