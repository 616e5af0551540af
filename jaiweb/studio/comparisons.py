"""Reads behind the compare page: two branches side by side, and the ends one may pick."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Max, Q

from jaiweb.store.comparisons import branches_compare
from jaiweb.store.models import ComicSession, Entry
from jaiweb.store.rows import StoredEntry, parse_rows
from jaiweb.store.selectors import branch_rows
from jaiweb.studio.selectors import Panel, characters_of, strip_panels
from journal.branches import CHARACTER_FIELDS, Effects
from journal.entries import UserMessage

PROMPT_CHARS = 160  # a prompt or a narration on the compare page: its first words
LEAVES_SHOWN = 50  # the picker lists the newest branch ends, not every one of a huge tree


def _brief(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= PROMPT_CHARS else text[: PROMPT_CHARS - 1] + "…"


@dataclass(frozen=True, slots=True)
class SideView:
    """One branch from the fork point on, as the page shows it."""

    node_id: str | None
    prompts: list[str]  # the person's prompts on this side, in order (brief)
    panels: list[Panel]
    entries: int  # how many entries this side has past the fork point
    effects: Effects
    permission_mode: str


@dataclass(frozen=True, slots=True)
class FieldRow:
    """One character's field on both sides; ``None``: the character is not there."""

    character: str
    field: str
    left: str | None
    right: str | None

    @property
    def differs(self) -> bool:
        return self.left != self.right


@dataclass(frozen=True, slots=True)
class CompareView:
    fork_id: str | None
    left: SideView
    right: SideView
    fields: list[FieldRow]  # every character's buff, skill and mood, both sides

    @property
    def mode_differs(self) -> bool:
        return self.left.permission_mode != self.right.permission_mode


def _side(node_id: str | None, rows: list[StoredEntry], effects: Effects, state: dict) -> SideView:
    messages = [r for r in rows if r.type == "message"]
    parse_rows(messages)
    prompts = [
        _brief(r.entry.message.content)
        for r in messages
        if isinstance(r.entry.message, UserMessage)
    ]
    panels = [
        Panel(p.image_id, p.entry_id, _brief(p.prompt), _brief(p.narration), "", p.published)
        for p in strip_panels(messages)
    ]
    return SideView(
        node_id, prompts, panels, len(rows), effects, state.get("permission_mode", "ask")
    )


def _fields(left: dict, right: dict) -> list[FieldRow]:
    a, b = characters_of(left), characters_of(right)
    rows = []
    for name in sorted(set(a) | set(b)):
        for key in CHARACTER_FIELDS:
            was = None if name not in a else str(a[name].get(key, "") or "")
            now = None if name not in b else str(b[name].get(key, "") or "")
            rows.append(FieldRow(name, key, was, now))
    return rows


def compare_view(*, session: ComicSession, left_id: str, right_id: str) -> CompareView:
    """The branches ending at two nodes from where they part (``UnknownEntry`` for a node
    not in the session): O(depth) of each, like the JSON endpoint."""
    got = branches_compare(session=session, left_id=left_id, right_id=right_id)
    c = got.comparison
    return CompareView(
        c.fork_id,
        _side(c.left.node_id, got.left_rows, c.left.effects, c.left.state),
        _side(c.right.node_id, got.right_rows, c.right.effects, c.right.state),
        _fields(c.left.state, c.right.state),
    )


@dataclass(frozen=True, slots=True)
class BranchEnd:
    """A leaf of the tree: the end of one branch, named by the last prompt on it."""

    entry_id: str
    timestamp: datetime
    prompt: str  # the last prompt on root → this leaf (brief), "" before the first
    current: bool  # the session's leaf


def branch_prompt(*, session: ComicSession, leaf_id: str) -> str:
    """The last prompt of a branch: the path's ids and types, then its last turn's messages
    parsed in one go (a turn is a handful of entries, so rarely a second look)."""
    rows = branch_rows(session=session, leaf_id=leaf_id, lazy=True)
    messages = [r for r in rows if r.type == "message"]
    while messages:
        window, messages = messages[-PROMPT_WINDOW:], messages[:-PROMPT_WINDOW]
        parse_rows(window)
        for row in reversed(window):
            if isinstance(row.entry.message, UserMessage):
                return _brief(row.entry.message.content)
    return ""


PROMPT_WINDOW = 16  # messages read back at a time looking for a branch's last prompt


def branch_ends(*, session: ComicSession) -> list[BranchEnd]:
    """The session's leaves, newest first (at most LEAVES_SHOWN). A node's first child
    continues its chain, so every leaf is the last entry of a chain and each chain ends in
    a leaf: one grouped read of the chain index, not a walk of the tree."""
    ends = list(
        Entry.objects.filter(session=session)
        .values("chain")
        .annotate(last=Max("chain_pos"))
        .order_by("-chain")[:LEAVES_SHOWN]
    )
    if not ends:
        return []
    where = Q()
    for end in ends:
        where |= Q(chain=end["chain"], chain_pos=end["last"])
    leaves = (
        Entry.objects.filter(session=session)
        .filter(where)
        .order_by("-seq")
        .values_list("entry_id", "timestamp")
    )
    return [
        BranchEnd(
            entry_id,
            ts,
            branch_prompt(session=session, leaf_id=entry_id),
            entry_id == session.leaf_id,
        )
        for entry_id, ts in leaves
    ]
