"""The storyboard: the session tree drawn one node per turn, folded where it is long.

A **turn** is what one prompt made: the user's message and everything the director did
for it (replies, tool calls and results, state changes) until the next prompt. Its node
shows the prompt, the panels drawn and a badge when the state changed; the entries
themselves open in the inspector. "Continue from here" on a turn goes right after it
(its last entry on the line drawn). A rewind's ``branch`` entry is not a node: it is the
edge from the node it forks from to the turn that follows it, so a fork is drawn as
siblings under one node.

How a line of entries splits into turns (``turn_starts``): a turn starts at the line's
first entry, after a final reply (no tool calls, not ``tool_use``), at a rewind (a run of
``branch`` entries counts as one), and at a user message — unless what came before it in
the turn is only rewinds and state edits, which then lead up to that prompt (a character
edited before a prompt belongs to the turn it was made for). A turn made only of rewinds
(a rewind nothing followed yet) is not drawn.

A session can be 10,000 entries deep with many forks, so the page never draws it whole.
The active path shows its first few and its last many turns, with "… N more" between;
every turn with branches off the drawn line shows "+N". Both load on demand: a fork opens
as the straight runs (chains) of its children, a run as the next page of it. The chain
fold of the store (a first child continues its parent's chain) makes a run one index
range scan; the path is walked from its ends and only the turns drawn are parsed.
"""

from __future__ import annotations

import itertools
import threading
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import NamedTuple

from cachetools import LRUCache
from django.db.models import Max, Q

from jaiweb.prepared import Prepared
from jaiweb.store.chains import chain_last_rows
from jaiweb.store.labels import NodeLabel, labels_on
from jaiweb.store.models import ComicSession, Entry
from jaiweb.store.rows import StoredEntry, parse_rows
from jaiweb.store.selectors import app_state_at, branch_rows, chapters_at, parked_inputs
from jaiweb.studio.choices import only_chooses
from jaiweb.studio.selectors.characters import edited_characters
from journal.branches import effects_of
from journal.chapters import CHAPTERS_KEY, Chapter
from journal.entries import (
    AppStateEntry,
    AssistantMessage,
    CompactionEntry,
    MessageEntry,
    ToolResultMessage,
    UserMessage,
    parse_entry,
)
from journal.entries import Entry as JournalEntry
from journal.errors import UnknownEntry
from journal.lettering import edit_kind
from journal.text import one_line

PATH_HEAD = 2  # turns drawn at the root end of a long active path
PATH_TAIL = 30  # … and at the leaf end
PAGE = 40  # turns loaded per "… N more" click
CHAIN_PAGE = 12  # turns of a side branch drawn when it opens
OPEN_BUDGET = 40  # side-branch turns drawn open on the page; past it forks stay folded
LABEL_CHARS = 160  # a label longer than this is cut at a word's end
THUMBS = 4  # panel thumbnails drawn in one node
CHUNK = 128  # path rows parsed at a time while looking for turns
CHAIN_FETCH = 120  # chain rows read at a time while looking for turns

# What an entry is for the split into turns.
USER, FINAL, REPLY, TOOL, STATE, BRANCH, SUMMARY = (
    "user",
    "final",
    "reply",
    "tool",
    "state",
    "branch",
    "summary",
)
_LEAD_UP = frozenset((BRANCH, STATE))  # what may come before a prompt in its turn


def kind_of(entry: JournalEntry) -> str:
    """One entry's part in the split into turns."""
    if isinstance(entry, MessageEntry):
        message = entry.message
        if isinstance(message, UserMessage):
            return USER
        if isinstance(message, AssistantMessage):
            return FINAL if message.is_final else REPLY
        return TOOL
    if isinstance(entry, AppStateEntry):
        return STATE
    if isinstance(entry, CompactionEntry):
        return SUMMARY
    return BRANCH


def turn_starts(kinds: Sequence[str]) -> list[int]:
    """Where turns start in a line of entries (their kinds, ``kinds[0]`` starting one)."""
    starts: list[int] = []
    only_branches = lead_up = False  # what the current turn holds so far
    for i, kind in enumerate(kinds):
        if (
            i == 0
            or kinds[i - 1] == FINAL
            or (kind == BRANCH and not only_branches)
            or (kind == USER and not lead_up)
        ):
            starts.append(i)
            only_branches, lead_up = kind == BRANCH, kind in _LEAD_UP
        else:
            only_branches = only_branches and kind == BRANCH
            lead_up = lead_up and kind in _LEAD_UP
    return starts


def _is_anchor(kinds: Sequence[str], i: int) -> bool:
    """A turn surely starts at ``i``, whatever came before ``i - 1``."""
    if i == 0:
        return True
    before, kind = kinds[i - 1], kinds[i]
    return (
        before == FINAL
        or (kind == BRANCH and before != BRANCH)
        or (kind == USER and before not in _LEAD_UP)
    )


def _spans(kinds: Sequence[str]) -> list[tuple[int, int]]:
    starts = turn_starts(kinds)
    return list(zip(starts, [*starts[1:], len(kinds)], strict=True))


def _drawn(kinds: Sequence[str], span: tuple[int, int]) -> bool:
    """A turn made only of rewinds is an edge with nothing at its end: not drawn."""
    return any(k != BRANCH for k in kinds[span[0] : span[1]])


@dataclass(frozen=True, slots=True)
class Turn:
    entry_id: str  # its last entry on the line drawn: "continue from here" goes there
    first_id: str  # its first entry (a rewind's branch entry is its edge, not its start)
    parent_id: str | None  # the entry it hangs from
    type: str  # of ``entry_id`` (the page's hooks)
    role: str  # of ``entry_id`` when a message, else ""
    tag: str  # what starts it: you (a prompt) / state / ai / tool / summary / picked (a panel
    # put here from another branch)
    label: str  # the prompt (or what stands for it), cut at a word's end
    active: bool
    tool: str = ""  # the tool, for a turn that starts at a tool result
    panels: tuple[tuple[str, str], ...] = ()  # (image id, its result entry id), in order
    more_panels: int = 0  # panels beyond the thumbnails drawn
    state_changed: bool = False
    published: bool = False
    outcome: str = ""  # "stopped" / "failed" when its last reply says so
    steps: int = 0  # entries in it
    via: str = ""  # the rewind's branch entry it came by
    fork_points: tuple[tuple[str, str, int], ...] = ()  # (entry, its line child, branches)
    fork_starts: tuple[Child, ...] = ()  # where those branches start
    here: bool = False  # the session is right after this turn (its leaf)
    branches: tuple = ()  # forks drawn open (small trees): tuples of items
    credits: int = 0  # charged by its panels (a fold of its tool results)
    waiting: bool = False  # its run is parked, waiting for an admin (the recovery inbox)
    labels: tuple[NodeLabel, ...] = ()  # labels and bookmarks on its entries (a side table)
    chapter: Chapter | None = None  # the chapter that starts in it (journal/chapters.py)
    chapters_only: bool = False  # a state turn that changed the chapter marks alone
    # for a turn that starts with a hand edit of the state: what it changed (characters,
    # lettering: a panel's words, page: the comic's layout)
    edited: str = "characters"
    chose: bool = False  # a state turn that only chose variants (studio/variants.py)

    kind = "node"

    @property
    def forks(self) -> int:
        return sum(n for _, _, n in self.fork_points)


@dataclass(frozen=True, slots=True)
class More:
    """A folded run: ``count`` entries that load when asked."""

    count: int
    query: str  # the tree view's query string that loads them

    kind = "more"


Item = Turn | More


def _image(entry: JournalEntry, tool: str) -> str | None:
    if not isinstance(entry, MessageEntry):
        return None
    message = entry.message
    if not isinstance(message, ToolResultMessage) or message.is_error or message.tool_name != tool:
        return None
    image = message.details.get("image_id")
    return image if isinstance(image, str) else None


def _panel_image(entry: JournalEntry) -> str | None:
    """A panel of the turn: drawn in it, or placed in it from another branch."""
    return _image(entry, "generate_image") or _image(entry, "place_panel")


def _known(session: ComicSession) -> int:
    """Return the last seq of the session as it was read.

    Entries appended since, by a run going on while the tree is drawn, wait for the next
    drawing. Otherwise a new leaf's child would show as a fork off the path read before it."""
    return session.entry_count


class Child(NamedTuple):
    id: str
    type: str
    chain: int
    pos: int


_CHILDREN = Prepared(
    lambda session_id, parents, known: Entry.objects.filter(
        session_id=session_id, parent_id__in=parents, seq__lte=known
    ).values_list("seq", "parent_id", "entry_id", "type", "chain", "chain_pos"),
    session_id=str,
    parents=[str],
    known=int,
)


def _children_of(session: ComicSession, ids: list[str]) -> dict[str, list[Child]]:
    """The children (append order) of the given nodes, with where their runs are: no payloads.

    Sorted here, not by ``ORDER BY seq``: for a list of parents SQLite would rather walk the
    session in seq order (its (session, seq) index) than sort what ``entry_children`` finds.
    """
    rows: list[tuple] = []
    for start in range(0, len(ids), 500):
        rows.extend(
            _CHILDREN.rows(
                session_id=session.pk, parents=ids[start : start + 500], known=_known(session)
            )
        )
    rows.sort()
    found: dict[str, list[Child]] = defaultdict(list)
    for _seq, parent, child, type_, chain, pos in rows:
        found[parent].append(Child(child, type_, chain, pos))
    return found


class _Line:
    """Entries along one drawn line, parsed, with the child each continues to."""

    def __init__(self, entries: list[JournalEntry], after: str | None) -> None:
        self.entries = entries
        self.kinds = [kind_of(e) for e in entries]
        self.after = after  # the line's next entry past the last one held, if any

    def line_child(self, i: int) -> str | None:
        return self.entries[i + 1].id if i + 1 < len(self.entries) else self.after


def _turns(
    session: ComicSession,
    line: _Line,
    spans: list[tuple[int, int]],
    *,
    active: bool,
    leaf: JournalEntry | None = None,
) -> list[Turn]:
    """The nodes of some turns of one line (``spans``: their entry ranges on it)."""
    return _turns_of_lines(session, [(line, spans)], active=active, leaf=leaf)[0]


def _turns_of_lines(
    session: ComicSession,
    lines: list[tuple[_Line, list[tuple[int, int]]]],
    *,
    active: bool,
    leaf: JournalEntry | None = None,
    chapters: Sequence[Chapter] = (),
) -> list[list[Turn]]:
    """The nodes of turns of several lines, their children read at once (two queries);
    ``chapters``: the active path's, each drawn as a heading on the turn it starts in."""
    lines = [(line, [s for s in spans if _drawn(line.kinds, s)]) for line, spans in lines]
    ids = [line.entries[i].id for line, spans in lines for a, b in spans for i in range(a, b)]
    children = _children_of(session, ids)
    marks = _Marks(
        labels_on(session_id=session.id, entry_ids=ids), parked_inputs(session=session), chapters
    )
    # A rewind that nothing followed (and is not the leaf) is no branch to draw.
    rewinds = [c.id for kids in children.values() for c in kids if c.type == "branch"]
    followed = set(_children_of(session, rewinds)) if rewinds else set()
    out = []
    for line, spans in lines:
        turns = []
        before = _states_before(session, line)
        for a, b in spans:
            forks = []
            for i in range(a, b):
                kept = line.line_child(i)
                forks.extend(
                    (line.entries[i].id, kept or "", c)
                    for c in children.get(line.entries[i].id, [])
                    if c.id != kept and (c.type != "branch" or c.id in followed)
                )
            turn = _turn_kept(session.id, line.entries[a:b], line.kinds[a:b], active, forks, leaf)
            if turn.tag == "state" and only_chooses(line.entries, a, b):
                turn = replace(turn, chose=True)
            elif turn.tag == "state" and _chapters_only(line.entries[a:b], before):
                turn = replace(turn, chapters_only=True)
            elif turn.tag == "state":
                turn = _edit_kind_of(session, turn, line.entries[a:b])
                if turn.edited == "characters":
                    turn = replace(turn, label=_edited(session, line, a, b))
            turns.append(marks.on(turn, line.entries[a:b]))
        out.append(turns)
    return out


def _states_before(session: ComicSession, line: _Line) -> dict[str, dict | None]:
    """For each ``app_state`` entry of a line, the state before it when the line shows it
    (an earlier one on the line, or the initial state for a line from the root); None when
    it came before the line."""
    known: dict | None = (
        session.initial_app_state if line.entries and (line.entries[0].parent_id is None) else None
    )
    before: dict[str, dict | None] = {}
    for entry in line.entries:
        if isinstance(entry, AppStateEntry):
            before[entry.id] = known
            known = entry.value
    return before


def _chapters_only(entries: list[JournalEntry], before: dict[str, dict | None]) -> bool:
    """The turn's state changes touched the chapter marks alone (so its card says so
    rather than "characters changed")."""
    changes = [e for e in entries if isinstance(e, AppStateEntry)]
    if not changes:
        return False
    for entry in changes:
        prior = before.get(entry.id)
        if prior is None:
            return False
        rest = {k: v for k, v in entry.value.items() if k != CHAPTERS_KEY}
        if rest != {k: v for k, v in prior.items() if k != CHAPTERS_KEY}:
            return False
    return True


def _edit_kind_of(session: ComicSession, turn: Turn, entries: list[JournalEntry]) -> Turn:
    """The turn, saying what its opening hand edit of the state changed (one query: the
    state before it)."""
    first = next((e for e in entries if isinstance(e, AppStateEntry)), None)
    if first is None:
        return turn
    try:
        before = (
            app_state_at(session=session, leaf_id=first.parent_id)
            if first.parent_id
            else session.initial_app_state
        )
    except UnknownEntry:
        return turn
    what = edit_kind(before, first.value)
    return turn if what == "characters" else replace(turn, edited=what)


class _Marks:
    """What a turn's node shows beside the journal's own facts: the labels on its entries
    and whether its run waits for an admin (both read once for all the turns drawn)."""

    def __init__(
        self, labels: list[NodeLabel], parked: set[str], chapters: Sequence[Chapter] = ()
    ) -> None:
        self.labels: dict[str, list[NodeLabel]] = defaultdict(list)
        for label in labels:
            self.labels[label.entry_id].append(label)
        self.parked = parked  # the inputs (prompts) of a parked operation
        self.chapters = {c.entry_id: c for c in chapters}

    def on(self, turn: Turn, entries: list[JournalEntry]) -> Turn:
        labels = tuple(x for e in entries for x in self.labels.get(e.id, ()))
        waiting = bool(self.parked) and any(e.id in self.parked for e in entries)
        chapter = next((self.chapters[e.id] for e in entries if e.id in self.chapters), None)
        if not (labels or waiting or chapter):
            return turn
        return replace(turn, labels=labels, waiting=waiting, chapter=chapter)


def _edited(session: ComicSession, line: _Line, a: int, b: int) -> str:
    """Name the characters that the hand edits of a turn changed, on one label line.

    The hand edits are the turn's ``app_state`` entries, ``line.entries`` from ``a`` to ``b``.
    An entry holds the whole state, so the names are those that differ from the state before
    it: the line's previous ``app_state``, or else one read up the path. What an entry
    changed is kept by its id, since neither it nor the state before it ever changes: a
    turn of many edits is compared once an edit, not again at every pass that draws it."""
    names: dict[str, None] = {}
    before: dict | None = None  # the state before the next edit, once it is needed
    for i in range(a, b):
        entry = line.entries[i]
        if not isinstance(entry, AppStateEntry):
            continue
        key = (session.id, entry.id)
        with _edits_lock:
            changed = _edits.get(key)
        if changed is None:
            if before is None:
                before = _state_before(session, line, i)
            changed = tuple(edited_characters(before, entry.value))
            with _edits_lock:
                _edits[key] = changed
        names.update(dict.fromkeys(changed))
        before = entry.value
    return one_line(", ".join(names), limit=LABEL_CHARS)


def _state_before(session: ComicSession, line: _Line, i: int) -> dict:
    """The state before ``line.entries[i]``: the line's last ``app_state`` before it, or
    else the state at its parent, read up the path."""
    for j in range(i - 1, -1, -1):
        entry = line.entries[j]
        if isinstance(entry, AppStateEntry):
            return entry.value
    parent = line.entries[i].parent_id
    return app_state_at(session=session, leaf_id=parent) if parent else session.initial_app_state


# The characters each hand edit changed, by session and entry id.
_EDITS_KEPT = 16384
_edits: LRUCache[tuple[str, str], tuple[str, ...]] = LRUCache(_EDITS_KEPT)
_edits_lock = threading.Lock()


# Turns drawn lately, by all that makes one: its session and entries (an appended entry
# never changes), whether it is on the active path, its forks and whether the leaf is at
# it. A pass after an entry draws the whole path again, and all its turns but the last
# come from here.
_TURNS_KEPT = 4096
_turns: LRUCache[tuple, Turn] = LRUCache(_TURNS_KEPT)
_turns_lock = threading.Lock()


def turns_forget() -> None:
    """Forget the turns kept, and what each hand edit changed (a bench's cold page)."""
    with _turns_lock:
        _turns.clear()
    with _edits_lock:
        _edits.clear()


def _turn_kept(
    session_id: str,
    entries: list[JournalEntry],
    kinds: list[str],
    active: bool,
    forks: list[tuple[str, str, Child]],
    leaf: JournalEntry | None,
) -> Turn:
    """``_turn``, from the turns kept when the same turn was drawn lately."""
    last = entries[-1]
    here = leaf is not None and (
        leaf.id == last.id or (leaf.type == "branch" and leaf.parent_id == last.id)
    )
    key = (session_id, tuple(e.id for e in entries), active, tuple(forks), here)
    with _turns_lock:
        turn = _turns.get(key)
    if turn is None:
        turn = _turn(entries, kinds, active=active, forks=forks, here=here)
        with _turns_lock:
            _turns[key] = turn
    return turn


def _turn(
    entries: list[JournalEntry],
    kinds: list[str],
    *,
    active: bool,
    forks: list[tuple[str, str, Child]],
    here: bool,
) -> Turn:
    lead = next(i for i, k in enumerate(kinds) if k != BRANCH)
    first, last = entries[lead], entries[-1]
    tag, label, tool = "ai", "", ""
    prompt = next((e for e, k in zip(entries, kinds, strict=True) if k == USER), None)
    if prompt is not None:
        tag, label = "you", prompt.message.content
    elif isinstance(first, AppStateEntry):
        tag, label = "state", ", ".join(sorted(first.value.get("characters", {}) or {}))
    elif isinstance(first, CompactionEntry):
        tag, label = "summary", first.summary
    elif isinstance(first, MessageEntry) and isinstance(first.message, ToolResultMessage):
        tag, tool = "tool", first.message.tool_name
    elif isinstance(first, MessageEntry):
        label = first.message.content
    panels = [(image, e.id) for e in entries if (image := _panel_image(e))]
    if prompt is None and any(_image(e, "place_panel") for e in entries):
        tag = "picked"  # a cherry-pick: a panel put here from another branch, not drawn
    replies = [e.message for e in entries if isinstance(e, MessageEntry)]
    last_reply = next((m for m in reversed(replies) if isinstance(m, AssistantMessage)), None)
    outcome = ""
    if last_reply is not None and last_reply.stop_reason in ("aborted", "error"):
        outcome = "stopped" if last_reply.stop_reason == "aborted" else "failed"
    return Turn(
        entry_id=last.id,
        first_id=first.id,
        parent_id=entries[0].parent_id,
        type=last.type,
        role=last.message.role if isinstance(last, MessageEntry) else "",
        tag=tag,
        label=one_line(label, limit=LABEL_CHARS),
        active=active,
        tool=tool,
        panels=tuple(panels[-THUMBS:]),
        more_panels=max(0, len(panels) - THUMBS),
        state_changed=STATE in kinds,
        published=any(_image(e, "publish_panel") for e in entries),
        outcome=outcome,
        steps=len(entries) - lead,
        via=entries[0].id if lead else "",
        fork_points=tuple(
            (entry_id, kept, len(kids))
            for (entry_id, kept), kids in itertools.groupby(forks, key=lambda f: f[:2])
            for kids in [list(kids)]
        ),
        fork_starts=tuple(child for _, _, child in forks),
        here=here,
        credits=effects_of(entries).credits,
    )


# --- the active path ---------------------------------------------------------------------


def _kinds(rows: list[StoredEntry], start: int, stop: int) -> list[str]:
    """Kinds of ``rows[start:stop]``, parsing the message rows among them (at once)."""
    parse_rows([r for r in rows[start:stop] if r.type == "message"])
    return [
        kind_of(r.entry) if r.type == "message" else _TYPE_KINDS[r.type] for r in rows[start:stop]
    ]


_TYPE_KINDS = {"app_state": STATE, "branch": BRANCH, "compaction": SUMMARY}


def _path_line(rows: list[StoredEntry], start: int, stop: int) -> _Line:
    parse_rows(rows[start:stop])
    after = rows[stop].entry_id if stop < len(rows) else None
    return _Line([r.entry for r in rows[start:stop]], after)


def _head(rows: list[StoredEntry], want: int, stop: int) -> tuple[list[tuple[int, int]], int]:
    """The first ``want`` turns of ``rows[:stop]`` and where the next one starts."""
    end = 0
    while True:
        end = min(stop, end + CHUNK)
        kinds = _kinds(rows, 0, end)
        starts = turn_starts(kinds)
        if len(starts) > want:
            return _spans(kinds)[:want], starts[want]
        if end == stop:
            return _spans(kinds), stop


def _tail(rows: list[StoredEntry], want: int) -> int:
    """Where the last ``want`` drawn turns of the path start (0 when it has no more)."""
    n = len(rows)
    low = n
    while low > 0:
        low = max(0, low - CHUNK)
        kinds = _kinds(rows, max(0, low - 1), n)
        offset = max(0, low - 1)
        anchor = next((i for i in range(low, n) if _is_anchor(kinds, i - offset)), None)
        if anchor is None:
            continue
        spans = _spans(kinds[anchor - offset :])
        drawn = [s for s in spans if _drawn(kinds[anchor - offset :], s)]
        if len(drawn) > want:
            return anchor + drawn[-want][0]
    return 0


def active_path_view(session: ComicSession, rows: list[StoredEntry] | None = None) -> list[Item]:
    """The active path's turns, root first, the middle folded when it is long (``rows``:
    the branch, when the caller has read it already)."""
    rows = branch_rows(session=session, lazy=True) if rows is None else rows
    if not rows:
        return []
    leaf = rows[-1].entry
    chapters = chapters_at(session=session, rows=rows)
    tail = _tail(rows, PATH_TAIL)
    head, fold = _head(rows, PATH_HEAD, tail) if tail else ([], 0)
    if not tail or fold >= tail:  # short enough to draw whole
        line = _path_line(rows, 0, len(rows))
        [turns] = _turns_of_lines(
            session, [(line, _spans(line.kinds))], active=True, leaf=leaf, chapters=chapters
        )
        return _open_forks(session, list(turns))
    line = _path_line(rows, tail, len(rows))
    first, last = _turns_of_lines(
        session,
        [(_path_line(rows, 0, fold), head), (line, _spans(line.kinds))],
        active=True,
        leaf=leaf,
        chapters=chapters,
    )
    more = More(tail - fold, f"path={session.leaf_id}&start={fold}&stop={tail}")
    return _open_forks(session, [*first, more, *last])


def _open_forks(session: ComicSession, items: list[Item]) -> list[Item]:
    """Draw the forks nearest the leaf open while the budget lasts, so a rewound branch
    stays in sight, grey; the rest stay folded behind "+N". The runs of all the branches
    that may open are read at once."""
    candidates: list[int] = []
    starts: list[Child] = []
    for i in range(len(items) - 1, -1, -1):
        item = items[i]
        if isinstance(item, Turn) and item.fork_starts:
            if len(starts) + len(item.fork_starts) > OPEN_BUDGET:  # each opens 1 turn or more
                continue
            candidates.append(i)
            starts.extend(item.fork_starts)
    runs = _runs(session, starts)
    budget = OPEN_BUDGET
    opened: dict[int, Turn] = {}
    for i in candidates:
        item = items[i]
        branches = [tuple(runs[c.id]) for c in item.fork_starts if runs[c.id]]
        size = sum(len(b) for b in branches)
        if size > budget:
            continue
        budget -= size
        opened[i] = replace(item, branches=tuple(branches))
    return [opened.get(i, item) for i, item in enumerate(items)]


def path_page(session: ComicSession, *, leaf_id: str, start: int, stop: int) -> list[Item]:
    """Turns from entry ``start`` up to entry ``stop`` of the path to ``leaf_id``, a page at a
    time (``start`` is where a turn starts: the fold says so)."""
    rows = branch_rows(session=session, leaf_id=leaf_id, lazy=True)
    start, stop = max(0, start), min(stop, len(rows))
    if start >= stop:
        return []
    end = start
    while True:
        end = min(stop, end + CHUNK)
        kinds = _kinds(rows, start, end)
        starts = turn_starts(kinds)
        if len(starts) > PAGE or end == stop:
            break
    cut = start + starts[PAGE] if len(starts) > PAGE else stop
    line = _path_line(rows, start, cut)
    active = session.leaf_id == leaf_id
    leaf = rows[-1].entry if active and cut == len(rows) else None
    chapters = chapters_at(session=session, rows=rows) if active else []
    [turns] = _turns_of_lines(
        session, [(line, _spans(line.kinds))], active=active, leaf=leaf, chapters=chapters
    )
    items: list[Item] = list(turns)
    if cut < stop:
        items.append(More(stop - cut, f"path={leaf_id}&start={cut}&stop={stop}"))
    return items


# --- side branches ---------------------------------------------------------------------


def chain_view(session: ComicSession, *, chain: int, from_pos: int) -> list[Item]:
    """A straight run of a side branch from a position: a page of its turns, the rest folded."""
    return _runs(session, [Child("", "", chain, from_pos)])[""]


def _runs(session: ComicSession, starts: list[Child]) -> dict[str, list[Item]]:
    """Draw the runs from the given starts, each a page of its turns with the rest folded.

    A start is a chain and a position, and the result is keyed by the start's id. The runs
    are read together, so any number of them costs a few queries."""
    rows = _chain_rows(session, [(c.chain, c.pos) for c in starts], CHAIN_FETCH)
    lines: list[tuple[_Line, list[tuple[int, int]]]] = []
    cuts: list[tuple[Child, int, list]] = []
    for start in starts:
        run = rows.get((start.chain, start.pos), [])
        entries = [parse_entry(payload) for _id, payload, _pos in run]
        kinds = [kind_of(e) for e in entries]
        if len(run) == CHAIN_FETCH and len(turn_starts(kinds)) <= CHAIN_PAGE:
            run, entries, kinds = _longer_run(session, start, CHAIN_PAGE)  # long turns
        starts_at = turn_starts(kinds)
        cut = starts_at[CHAIN_PAGE] if len(starts_at) > CHAIN_PAGE else len(run)
        line = _Line(entries[:cut], run[cut][0] if cut < len(run) else None)
        lines.append((line, _spans(line.kinds)))
        cuts.append((start, cut, run))
    drawn = _turns_of_lines(session, lines, active=False) if lines else []
    folded = [start.chain for start, cut, run in cuts if cut < len(run)]
    last = _chain_ends(session, folded) if folded else {}
    out: dict[str, list[Item]] = {}
    for (start, cut, run), turns in zip(cuts, drawn, strict=True):
        items: list[Item] = list(turns)
        if cut < len(run):
            next_pos = run[cut][2]
            items.append(
                More(last[start.chain] - next_pos + 1, f"chain={start.chain}&from={next_pos}")
            )
        out[start.id] = items
    return out


def _chain_ends(session: ComicSession, chains: list[int]) -> dict[int, int]:
    """Return the last position of each chain as the session was read (``_known``).

    A chain that grew since, because a run is going on, is asked again."""
    found = chain_last_rows(session_id=session.id, chains=chains)
    known, ends, grown = _known(session), {}, []
    for chain, last, seq in found:
        if seq <= known:
            ends[chain] = last
        else:
            grown.append(chain)
    if grown:
        ends.update(
            Entry.objects.filter(session=session, chain__in=grown, seq__lte=known)
            .values("chain")
            .annotate(last=Max("chain_pos"))
            .values_list("chain", "last")
        )
    return ends


def _chain_rows(
    session: ComicSession, starts: list[tuple[int, int]], count: int
) -> dict[tuple[int, int], list[tuple[str, dict, int]]]:
    """Up to ``count`` rows (id, payload, chain_pos) of each chain from each position."""
    if not starts:
        return {}
    where = Q()
    for chain, pos in starts:
        where |= Q(session=session, chain=chain, chain_pos__gte=pos, chain_pos__lt=pos + count)
    found: dict[tuple[int, int], list] = {start: [] for start in starts}
    # Entries appended since the session was read are dropped here, not by ``seq <=`` in
    # the query: given that range, SQLite walks the session by seq for more than one chain.
    rows = (
        Entry.objects.filter(where)  # the session in each term: one index range per start
        .order_by("chain", "chain_pos")
        .values_list("chain", "entry_id", "payload", "chain_pos", "seq")
    )
    known = _known(session)
    for chain, entry_id, payload, pos, seq in rows:
        if seq > known:
            continue
        for start in starts:
            if start[0] == chain and start[1] <= pos < start[1] + count:
                found[start].append((entry_id, payload, pos))
    return found


def _longer_run(session: ComicSession, start: Child, turns: int):
    """A run read on until it has more than ``turns`` turns or ends (rare: long turns)."""
    run: list = []
    while True:
        pos = start.pos + len(run)
        batch = _chain_rows(session, [(start.chain, pos)], CHAIN_FETCH)[(start.chain, pos)]
        run.extend(batch)
        entries = [parse_entry(payload) for _id, payload, _pos in run]
        kinds = [kind_of(e) for e in entries]
        if len(turn_starts(kinds)) > turns or len(batch) < CHAIN_FETCH:
            return run, entries, kinds


def fork_view(
    session: ComicSession, *, parent_id: str | None, exclude: str | None
) -> list[list[Item]]:
    """The children of a node other than the one on its line, each as the start of its run
    (a rewind nothing followed draws nothing, and is left out)."""
    qs = Entry.objects.filter(session=session, seq__lte=_known(session)).order_by("seq")
    qs = qs.filter(parent_id__isnull=True) if parent_id is None else qs.filter(parent_id=parent_id)
    starts = [
        Child(entry_id, type_, chain, pos)
        for entry_id, type_, chain, pos in qs.values_list("entry_id", "type", "chain", "chain_pos")
        if entry_id != exclude
    ]
    runs = _runs(session, starts)
    return [runs[c.id] for c in starts if runs[c.id]]


def turn_entries(rows: list[StoredEntry], first_id: str | None) -> list[StoredEntry]:
    """The entries of the turn that ends at ``rows[-1]`` (a path), from ``first_id`` when it
    is on the path within the turn's reach, else from where the turn starts."""
    if not rows:
        return []
    low = max(0, len(rows) - 400)
    ids = [r.entry_id for r in rows[low:]]
    if first_id in ids:
        return rows[low + ids.index(first_id) :]
    kinds = _kinds(rows, low, len(rows))
    anchor = next(
        (i for i in range(len(kinds)) if (i == 0 and low == 0) or (i and _is_anchor(kinds, i))),
        0,
    )
    return rows[low + anchor + turn_starts(kinds[anchor:])[-1] :]


def turn_node_of(session: ComicSession, entry_id: str) -> str:
    """Find the tree node that shows ``entry_id``: the last entry of the turn holding it.

    The tree draws a turn as one node, so a search hit inside a turn jumps to that turn's
    last entry. The turn is looked for on the active path first, and otherwise on the
    entry's own chain. Where the turn starts does not matter, only where it ends."""
    rows = branch_rows(session=session, lazy=True)
    at = next((i for i, r in enumerate(rows) if r.entry_id == entry_id), None)
    if at is not None:
        stop = at
        while True:
            stop = min(len(rows), stop + CHUNK)
            starts = turn_starts(_kinds(rows, at, stop))
            if len(starts) > 1:
                return rows[at + starts[1] - 1].entry_id
            if stop == len(rows):
                return rows[-1].entry_id
    place = (
        Entry.objects.filter(session=session, entry_id=entry_id, seq__lte=_known(session))
        .values_list("chain", "chain_pos")
        .first()
    )
    if place is None:
        raise UnknownEntry(entry_id)
    run, _entries, kinds = _longer_run(session, Child(entry_id, "", *place), 1)
    starts = turn_starts(kinds)
    return run[starts[1] - 1 if len(starts) > 1 else len(run) - 1][0]


__all__ = [
    "CHAIN_PAGE",
    "PAGE",
    "PATH_HEAD",
    "PATH_TAIL",
    "Item",
    "More",
    "Turn",
    "active_path_view",
    "chain_view",
    "fork_view",
    "kind_of",
    "path_page",
    "turn_entries",
    "turn_node_of",
    "turn_starts",
]
