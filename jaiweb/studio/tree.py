"""The explorer's view of a session tree: which nodes to draw, and what to fold.

A session can be 10,000 entries deep with many forks, so the page never draws it whole.
The active path shows its first few and its last many nodes, with "… N more" between
them; every node with children off the drawn line shows "+N". Both load on demand:
a fork opens as the straight runs (chains) of its children, a run as the next page of it.
The chain fold of the store (a first child continues its parent's chain) makes a run
one index range scan.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from dataclasses import dataclass, replace

from jaiweb.store.models import ComicSession, Entry
from jaiweb.store.rows import StoredEntry, parse_rows
from jaiweb.store.selectors import branch_rows
from journal.entries import (
    AppStateEntry,
    AssistantMessage,
    BranchEntry,
    CompactionEntry,
    MessageEntry,
    ToolResultMessage,
    UserMessage,
    parse_entry,
)
from journal.entries import Entry as JournalEntry

PATH_HEAD = 3  # nodes drawn at the root end of a long active path
PATH_TAIL = 40  # … and at the leaf end
PAGE = 100  # nodes loaded per "… N more" click
CHAIN_PAGE = 25  # nodes of a side branch drawn when it opens
OPEN_BUDGET = 120  # side-branch nodes drawn open on the page; past it forks stay folded
LABEL_CHARS = 70

# Short tags rather than emoji: they read the same in every font (and are styled per kind).
ICONS = {
    "user": "you",
    "assistant": "ai",
    "tool_result": "tool",
    "panel": "panel",
    "app_state": "state",
    "compaction": "sum",
    "branch": "fork",
}


@dataclass(frozen=True, slots=True)
class Node:
    entry_id: str
    parent_id: str | None
    type: str
    role: str  # "" unless a message
    icon: str
    label: str
    active: bool
    image_id: str | None = None  # a panel thumbnail
    state_changed: bool = False
    forks: int = 0  # children not drawn on this line
    line_child: str | None = None  # the child that is drawn on this line
    is_leaf: bool = False
    branches: tuple = ()  # forks drawn open (small trees): lists of items

    kind = "node"


@dataclass(frozen=True, slots=True)
class More:
    """A folded run: ``count`` nodes that load when asked."""

    count: int
    query: str  # the tree view's query string that loads them

    kind = "more"


Item = Node | More


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= LABEL_CHARS else text[: LABEL_CHARS - 1] + "…"


def describe(entry: JournalEntry) -> tuple[str, str, str, str | None]:
    """(role, icon, label, panel image id) of one entry."""
    if isinstance(entry, MessageEntry):
        message = entry.message
        if isinstance(message, UserMessage):
            return "user", ICONS["user"], _short(message.content), None
        if isinstance(message, AssistantMessage):
            calls = ", ".join(call.name for call in message.tool_calls)
            text = message.content or ""
            label = _short(f"{text} → {calls}" if text and calls else text or f"→ {calls}")
            return "assistant", ICONS["assistant"], label, None
        if isinstance(message, ToolResultMessage):
            image = message.details.get("image_id") if not message.is_error else None
            image = image if isinstance(image, str) else None
            label = _short(f"{message.tool_name}: {message.content}")
            return "tool_result", ICONS["panel" if image else "tool_result"], label, image
    if isinstance(entry, AppStateEntry):
        names = ", ".join(sorted(entry.value.get("characters", {}) or {}))
        return "", ICONS["app_state"], _short(names or "—"), None
    if isinstance(entry, CompactionEntry):
        return "", ICONS["compaction"], _short(entry.summary), None
    if isinstance(entry, BranchEntry):
        return "", ICONS["branch"], "continued from here", None
    return "", "?", entry.type, None


def _node(
    entry: JournalEntry, *, active: bool, children: list[str], line_child: str | None
) -> Node:
    role, icon, label, image = describe(entry)
    return Node(
        entry_id=entry.id,
        parent_id=entry.parent_id,
        type=entry.type,
        role=role,
        icon=icon,
        label=label,
        active=active,
        image_id=image,
        state_changed=isinstance(entry, AppStateEntry),
        forks=len([c for c in children if c != line_child]),
        line_child=line_child,
        is_leaf=not children,
    )


def _children_of(session: ComicSession, ids: list[str]) -> dict[str, list[str]]:
    """Children ids (append order) of the given nodes: ids and parents only, no payloads.

    Sorted here, not by ``ORDER BY seq``: for a list of parents SQLite would rather walk the
    session in seq order (its (session, seq) index) than sort what ``entry_children`` finds.
    """
    rows: list[tuple[int, str, str]] = []
    for start in range(0, len(ids), 500):
        rows.extend(
            Entry.objects.filter(
                session=session, parent_id__in=ids[start : start + 500]
            ).values_list("seq", "parent_id", "entry_id")
        )
    rows.sort()
    found: dict[str, list[str]] = defaultdict(list)
    for _seq, parent, child in rows:
        found[parent].append(child)
    return found


def _path_nodes(session: ComicSession, rows: list[StoredEntry], path: list[str]) -> list[Node]:
    """Nodes of a stretch of the active path (``path``: every id on it, root first)."""
    parse_rows(rows)
    children = _children_of(session, [r.entry_id for r in rows])
    nxt = {a: b for a, b in itertools.pairwise(path)}
    return [
        _node(
            r.entry,
            active=True,
            children=children.get(r.entry_id, []),
            line_child=nxt.get(r.entry_id),
        )
        for r in rows
    ]


def active_path_view(session: ComicSession, rows: list[StoredEntry] | None = None) -> list[Item]:
    """The active path, root first, its middle folded when it is long (``rows``: the
    branch, when the caller has read it already)."""
    rows = branch_rows(session=session, lazy=True) if rows is None else rows
    path = [r.entry_id for r in rows]
    items: list[Item] = []
    if len(rows) <= PATH_HEAD + PATH_TAIL + 1:
        items.extend(_path_nodes(session, rows, path))
    else:
        hidden = len(rows) - PATH_HEAD - PATH_TAIL
        items.extend(_path_nodes(session, rows[:PATH_HEAD], path))
        query = f"path={session.leaf_id}&start={PATH_HEAD}&stop={PATH_HEAD + hidden}"
        items.append(More(hidden, query))
        items.extend(_path_nodes(session, rows[-PATH_TAIL:], path))
    return _open_forks(session, items)


def _open_forks(session: ComicSession, items: list[Item]) -> list[Item]:
    """Draw the forks nearest the leaf open while the budget lasts, so a rewound branch
    stays in sight, grey; the rest stay folded behind "+N"."""
    budget = OPEN_BUDGET
    opened: dict[int, Node] = {}
    for i in range(len(items) - 1, -1, -1):
        item = items[i]
        if budget <= 0:
            break
        if isinstance(item, Node) and item.forks:
            branches = fork_view(session, parent_id=item.entry_id, exclude=item.line_child)
            size = sum(len(b) for b in branches)
            if size > budget:
                continue
            budget -= size
            opened[i] = replace(item, branches=tuple(branches))
    return [opened.get(i, item) for i, item in enumerate(items)]


def path_page(session: ComicSession, *, leaf_id: str, start: int, stop: int) -> list[Item]:
    """Nodes ``start``…``stop`` of the path to ``leaf_id``, a page at a time."""
    rows = branch_rows(session=session, leaf_id=leaf_id, lazy=True)
    path = [r.entry_id for r in rows]
    active = session.leaf_id == leaf_id
    start, stop = max(0, start), min(stop, len(rows))
    end = min(stop, start + PAGE)
    nodes = _path_nodes(session, rows[start:end], path)
    if not active:
        nodes = [_inactive(n) for n in nodes]
    items: list[Item] = list(nodes)
    if end < stop:
        items.append(More(stop - end, f"path={leaf_id}&start={end}&stop={stop}"))
    return items


def _inactive(node: Node) -> Node:
    return replace(node, active=False)


def chain_view(session: ComicSession, *, chain: int, from_pos: int) -> list[Item]:
    """A straight run of a side branch from a position: a page of it, the rest folded."""
    rows = list(
        Entry.objects.filter(session=session, chain=chain, chain_pos__gte=from_pos)
        .order_by("chain_pos")
        .values_list("entry_id", "payload", "chain_pos")[: CHAIN_PAGE + 1]
    )
    shown = rows[:CHAIN_PAGE]
    children = _children_of(session, [r[0] for r in shown])
    items: list[Item] = []
    for i, (entry_id, payload, _pos) in enumerate(shown):
        line_child = rows[i + 1][0] if i + 1 < len(rows) else None
        entry = parse_entry(payload)
        items.append(
            _node(entry, active=False, children=children.get(entry_id, []), line_child=line_child)
        )
    if len(rows) > CHAIN_PAGE:
        last_pos = (
            Entry.objects.filter(session=session, chain=chain)
            .order_by("-chain_pos")
            .values_list("chain_pos", flat=True)
            .first()
        )
        next_pos = shown[-1][2] + 1
        items.append(More(last_pos - next_pos + 1, f"chain={chain}&from={next_pos}"))
    return items


def fork_view(
    session: ComicSession, *, parent_id: str | None, exclude: str | None
) -> list[list[Item]]:
    """The children of a node other than the one on its line, each as the start of its run."""
    qs = Entry.objects.filter(session=session).order_by("seq")
    qs = qs.filter(parent_id__isnull=True) if parent_id is None else qs.filter(parent_id=parent_id)
    branches = []
    for entry_id, chain, pos in qs.values_list("entry_id", "chain", "chain_pos"):
        if entry_id == exclude:
            continue
        branches.append(chain_view(session, chain=chain, from_pos=pos))
    return branches
