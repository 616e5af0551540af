"""Reads behind the compare page: two branches side by side, and the ends one may pick."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Max, Q

from jaiweb.store.comparisons import messages_above
from jaiweb.store.models import ComicSession, Entry
from jaiweb.store.rows import StoredEntry, parse_rows
from jaiweb.store.selectors import branch_rows
from jaiweb.studio.selectors.characters import characters_of
from jaiweb.studio.selectors.strip import Panel, strip_panels
from journal.branches import CHARACTER_FIELDS, PANEL_TOOLS, Effects, effects_of
from journal.entries import ToolResultMessage, UserMessage

PROMPT_CHARS = 160  # a prompt or a narration on the compare page: its first words
LEAVES_SHOWN = 50  # the picker lists the newest branch ends, not every one of a huge tree
# Each side shows its first panels and prompts after the fork (where the two part is what
# a comparison is about); ``whole=True`` shows all of them.
SIDE_SHOWN = 24


def _brief(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= PROMPT_CHARS else text[: PROMPT_CHARS - 1] + "…"


@dataclass(frozen=True, slots=True)
class SideView:
    """One branch from the fork point on, as the page shows it."""

    node_id: str | None
    prompts: list[str]  # the person's first prompts on this side, in order (brief)
    panels: list[Panel]  # its first panels
    more_prompts: int  # how many more prompts the side has than it shows
    more_panels: int  # and how many more panels
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


def _is_drawn_panel(row: StoredEntry) -> bool:
    """A panel's result as the strip shows it, drawn here or placed here by a cherry-pick,
    read off an entry already parsed."""
    message = getattr(row.entry, "message", None)
    return (
        isinstance(message, ToolResultMessage)
        and message.tool_name in PANEL_TOOLS
        and not message.is_error
        and isinstance((message.details or {}).get("image_id"), str)
    )


def _end_state(path: list[StoredEntry], initial: dict) -> dict:
    """The app state at the end of a path (``journal.branches.state_on``), parsing only the
    last ``app_state`` row."""
    for row in reversed(path):
        if row.type == "app_state":
            return row.entry.value
    return initial


def _side(node_id: str | None, rows: list[StoredEntry], state: dict, shown: int) -> SideView:
    """One side, parsing only what it shows or counts: rows whose JSON may hold a panel or
    a post (the effects), may be a prompt, and the stretch up to the last panel shown. The
    fold of the effects is the core's (``effects_of``) over exactly those rows."""
    messages = [r for r in rows if r.type == "message"]
    effects = [
        r for r in messages if r.may_contain('"image_id"') or r.may_contain('"publish_panel"')
    ]
    asked = [r for r in messages if r.may_contain('"user"')]
    parse_rows(effects + asked)
    prompts = [r.entry.message.content for r in asked if isinstance(r.entry.message, UserMessage)]
    drawn = [r for r in effects if _is_drawn_panel(r)]
    # The strip's own fold (prompts and narrations of each panel) only as far as the last
    # panel shown; the rest is counted.
    cut = messages.index(drawn[shown]) if len(drawn) > shown else len(messages)
    panels = strip_panels(messages[:cut])
    return SideView(
        node_id,
        [_brief(text) for text in prompts[:shown]],
        [
            Panel(p.image_id, p.entry_id, _brief(p.prompt), _brief(p.narration), "", p.published)
            for p in panels
        ],
        max(0, len(prompts) - shown),
        len(drawn) - len(panels),
        len(rows),
        effects_of(r.entry for r in effects),
        state.get("permission_mode", "ask"),
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


def compare_view(
    *, session: ComicSession, left_id: str, right_id: str, whole: bool = False
) -> CompareView:
    """Compare the branches ending at two nodes, from the node where they part.

    The sides are folded as ``store.comparisons.branches_compare`` folds them for the API, and
    reading each costs O(depth). The entries this page neither shows nor counts stay unparsed,
    because parsing a whole path was most of a cold page's work. Each side shows its first
    SIDE_SHOWN prompts and panels, or every one with ``whole``. Raise ``UnknownEntry`` for a
    node that is not in the session."""
    left = branch_rows(session=session, leaf_id=left_id)
    right = branch_rows(session=session, leaf_id=right_id)
    shared = 0
    for a, b in zip(left, right, strict=False):
        if a.entry_id != b.entry_id:
            break
        shared += 1
    initial = session.initial_app_state
    left_state, right_state = _end_state(left, initial), _end_state(right, initial)
    shown = len(left) + len(right) if whole else SIDE_SHOWN
    return CompareView(
        left[shared - 1].entry_id if shared else None,
        _side(left_id, left[shared:], left_state, shown),
        _side(right_id, right[shared:], right_state, shown),
        _fields(left_state, right_state),
    )


@dataclass(frozen=True, slots=True)
class BranchEnd:
    """A leaf of the tree: the end of one branch, named by the last prompt on it."""

    entry_id: str
    timestamp: datetime
    prompt: str  # the last prompt of its branch (brief; "" when none is near: last_prompts)
    current: bool  # the session's leaf


PROMPT_REACH = 64  # entries walked up from a branch end to find its last prompt


def last_prompts(*, session: ComicSession, node_ids: list[str]) -> dict[str, str]:
    """Each node's branch named by its last prompt (brief): the nearest user message at
    most PROMPT_REACH entries up from it, "" when none is that near. Two queries for all
    the nodes, whatever the depth of their branches: the walk up, then those messages."""
    ids = list(dict.fromkeys(node_ids))
    if not ids:
        return {}
    found = messages_above(session_id=session.id, node_ids=ids, reach=PROMPT_REACH)
    prompts = dict(
        Entry.objects.filter(
            session=session, seq__in={seq for _, _, seq in found}, payload__message__role="user"
        ).values_list("seq", "payload__message__content")
    )
    out: dict[str, str] = {}
    for node, _, seq in sorted(found, key=lambda row: row[1]):
        if node not in out and seq in prompts:
            out[node] = _brief(str(prompts[seq]))
    return {node: out.get(node, "") for node in ids}


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
    leaves = list(
        Entry.objects.filter(session=session)
        .filter(where)
        .order_by("-seq")
        .values_list("entry_id", "timestamp")
    )
    prompts = last_prompts(session=session, node_ids=[entry_id for entry_id, _ in leaves])
    return [
        BranchEnd(entry_id, ts, prompts[entry_id], entry_id == session.leaf_id)
        for entry_id, ts in leaves
    ]
