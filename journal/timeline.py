"""The whole session tree as it grew: a timeline of its entries in append order.

Position ``n`` of the timeline is the tree after the first ``n`` entries, every branch in
it, abandoned ones too. Entries are only ever appended, so the tree at ``n`` is a prefix:
the nodes that had appeared by then (a node never leaves), the panels drawn by then, and
the node the session was at — where the ``n``-th entry left the leaf (a rewind's leaf is
its ``branch`` entry, which stands at its target). That is why one fold over the log in
append order describes every position at once, and a reader shows position ``n`` by
taking prefixes: what it costs per position is what changed, not the session's size.

A node is a **turn**, as the storyboard draws it: a prompt and what the director did for
it until the next prompt (the split of ``jaiweb.studio.tree``, walked over the tree
rather than along one path). A rewind's ``branch`` entry and the state edits made right
after it lead up to the prompt that follows; a turn made only of rewinds is no node.

Nodes sit on a grid: ``depth`` (turns from the root) and ``lane``. A node's first child
continues its lane; each later child opens the next lane — lanes are numbered in the
order the branches were made, so at every position they are 0 … k-1 with no gap, and
there is one node per (lane, depth).

Pure: no clock, no I/O; the entries carry their own timestamps.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from journal.entries import (
    AppStateEntry,
    AssistantMessage,
    CompactionEntry,
    Entry,
    MessageEntry,
    ToolResultMessage,
    UserMessage,
)
from journal.text import one_line

LABEL_CHARS = 120  # a node's label is cut at a word's end past this

# What one step did (``Step.what``); a reader words each in its language.
YOU = "you"  # a prompt
CALL = "call"  # the director asks for tools (``detail``: their names, comma-separated)
REPLY = "reply"  # the director's closing reply
STOPPED = "stopped"  # … that says the run was stopped
FAILED = "failed"  # … that says the run failed
PANEL = "panel"  # a panel drawn
PUBLISHED = "published"  # a panel published to the feed
TOOL = "tool"  # another tool's result (``detail``: the tool)
TOOL_FAILED = "tool_failed"  # a tool's error (``detail``: the tool)
CHARACTERS = "characters"  # the characters changed
MODE = "mode"  # the permission mode changed
STATE = "state"  # the state was written again, unchanged
REWIND = "rewind"  # went back (the step's ``active`` node is where to)
SUMMARY = "summary"  # a compaction

# An entry's part in the split into turns (as in jaiweb.studio.tree).
_USER, _FINAL, _OTHER, _STATE, _BRANCH = "user", "final", "other", "state", "branch"


@dataclass(frozen=True, slots=True)
class Node:
    """One turn. It appears at ``step`` (1-based: the entry that made it visible) with
    ``tag``/``label``; when its prompt comes later (state edits led up to it), it is named
    by ``prompt`` from ``prompt_step`` on."""

    entry_id: str  # its first entry that is no rewind
    parent: int | None  # the node it hangs from (index into ``Timeline.nodes``)
    depth: int
    lane: int
    step: int
    tag: str  # you / state / ai / tool / summary: what starts it
    label: str
    prompt: str = ""
    prompt_step: int = 0  # 0: no prompt came after it appeared

    def named(self, position: int) -> tuple[str, str]:
        """Its tag and label after ``position`` entries."""
        if self.prompt_step and position >= self.prompt_step:
            return "you", self.prompt
        return self.tag, self.label


@dataclass(frozen=True, slots=True)
class Panel:
    node: int
    step: int
    image_id: str


@dataclass(frozen=True, slots=True)
class Step:
    """The ``n``-th entry (``Timeline.steps[n - 1]``) and where it left the session."""

    entry_id: str
    timestamp: datetime
    what: str
    node: int | None  # the node it belongs to (None: a rewind no turn has followed yet)
    active: int  # the node the session is at after it
    detail: str = ""


@dataclass(frozen=True, slots=True)
class Timeline:
    nodes: tuple[Node, ...]
    panels: tuple[Panel, ...]
    steps: tuple[Step, ...]

    def at(self, position: int) -> Timeline:
        """The tree after the first ``position`` entries (0 … len(steps))."""
        if not 0 <= position <= len(self.steps):
            raise ValueError(f"a position is 0 … {len(self.steps)}, not {position}")
        shown = []
        for node in self.nodes:
            if node.step <= position:
                tag, label = node.named(position)
                shown.append(replace(node, tag=tag, label=label, prompt="", prompt_step=0))
        return Timeline(
            nodes=tuple(shown),
            panels=tuple(p for p in self.panels if p.step <= position),
            steps=self.steps[:position],
        )

    def active_path(self, position: int) -> list[int]:
        """The nodes from the root to where the session is after ``position`` entries."""
        if position == 0:
            return []
        path: list[int] = []
        node: int | None = self.steps[position - 1].active
        while node is not None:
            path.append(node)
            node = self.nodes[node].parent
        return path[::-1]


def _kind(entry: Entry) -> str:
    if isinstance(entry, MessageEntry):
        message = entry.message
        if isinstance(message, UserMessage):
            return _USER
        if isinstance(message, AssistantMessage) and message.is_final:
            return _FINAL
        return _OTHER
    if isinstance(entry, AppStateEntry):
        return _STATE
    if isinstance(entry, CompactionEntry):
        return _OTHER
    return _BRANCH


class _Turn:
    """A turn while the log is folded: where it hangs, its tip, its node once drawn."""

    __slots__ = ("node", "parent", "prompted", "tip")

    def __init__(self, parent: int | None, tip: str) -> None:
        # the node it hangs from: where the session was at the entry it follows (a fork
        # off a rewind that leads up to a prompt hangs where that rewind went back to)
        self.parent = parent
        self.tip = tip  # its last entry so far: only a child of the tip continues it
        self.node: int | None = None
        self.prompted = False


@dataclass(slots=True)
class _At:
    """What the fold keeps per entry: its turn, and what that turn held up to it."""

    turn: int
    kind: str
    only_branches: bool  # the turn so far is rewinds only
    lead_up: bool  # … rewinds and state edits only (a prompt may still join it)
    state: Mapping[str, Any]  # the app state after it, on its path
    active: int = 0  # the node the session is at when this entry is the leaf


def _what(entry: Entry, before: Mapping[str, Any]) -> tuple[str, str]:
    """What an entry did, and its detail (tool names)."""
    if isinstance(entry, AppStateEntry):
        if entry.value.get("characters") != before.get("characters"):
            return CHARACTERS, ""
        if entry.value.get("permission_mode") != before.get("permission_mode"):
            return MODE, ""
        return STATE, ""
    if isinstance(entry, CompactionEntry):
        return SUMMARY, ""
    if not isinstance(entry, MessageEntry):
        return REWIND, ""
    message = entry.message
    if isinstance(message, UserMessage):
        return YOU, ""
    if isinstance(message, AssistantMessage):
        if message.tool_calls:
            return CALL, ",".join(dict.fromkeys(call.name for call in message.tool_calls))
        if message.stop_reason == "aborted":
            return STOPPED, ""
        if message.stop_reason == "error":
            return FAILED, ""
        return REPLY, ""
    if message.is_error:
        return TOOL_FAILED, message.tool_name
    if message.tool_name == "generate_image" and isinstance(message.details.get("image_id"), str):
        return PANEL, ""
    if message.tool_name == "publish_panel":
        return PUBLISHED, ""
    return TOOL, message.tool_name


def _shown(entry: Entry) -> tuple[str, str]:
    """The tag and label of a node that appears at ``entry`` (its first non-rewind)."""
    if isinstance(entry, AppStateEntry):
        return "state", ", ".join(sorted(entry.value.get("characters", {}) or {}))
    if isinstance(entry, CompactionEntry):
        return "summary", entry.summary
    assert isinstance(entry, MessageEntry)
    message = entry.message
    if isinstance(message, UserMessage):
        return "you", message.content
    if isinstance(message, ToolResultMessage):
        return "tool", message.tool_name
    return "ai", message.content


def timeline(entries: Iterable[Entry], initial_app_state: Mapping[str, Any]) -> Timeline:
    """The timeline of a session's entries, given in append order: O(n), one pass.

    Raises ``ValueError`` when an entry names a parent not appended before it.
    """
    at: dict[str, _At] = {}
    turns: list[_Turn] = []
    nodes: list[Node] = []
    node_has_child: list[bool] = []
    panels: list[Panel] = []
    steps: list[Step] = []
    lanes = 0

    def show(turn: _Turn, entry: Entry, step: int) -> int:
        """Draw a turn as a node, from its first entry that is no rewind."""
        nonlocal lanes
        parent = turn.parent
        depth = 0 if parent is None else nodes[parent].depth + 1
        if parent is not None and not node_has_child[parent]:
            lane = nodes[parent].lane  # the first child continues its parent's lane
        else:
            lane, lanes = lanes, lanes + 1
        if parent is not None:
            node_has_child[parent] = True
        tag, label = _shown(entry)
        nodes.append(
            Node(entry.id, parent, depth, lane, step, tag, one_line(label, limit=LABEL_CHARS))
        )
        node_has_child.append(False)
        turn.node = len(nodes) - 1
        turn.prompted = tag == "you"
        return turn.node

    for step, entry in enumerate(entries, start=1):
        kind = _kind(entry)
        parent = None
        if entry.parent_id is not None:
            parent = at.get(entry.parent_id)
            if parent is None:
                raise ValueError(f"entry {entry.id!r}: its parent {entry.parent_id!r} comes later")
        if entry.id in at:
            raise ValueError(f"entry {entry.id!r} appended twice")
        starts = (
            parent is None
            or parent.kind == _FINAL
            or (kind == _BRANCH and not parent.only_branches)
            or (kind == _USER and not parent.lead_up)
            or turns[parent.turn].tip != entry.parent_id  # a fork in the middle of a turn
        )
        if starts:
            turns.append(_Turn(None if parent is None else parent.active, entry.id))
            index = len(turns) - 1
            only_branches, lead_up = kind == _BRANCH, kind in (_BRANCH, _STATE)
        else:
            assert parent is not None
            index = parent.turn
            turns[index].tip = entry.id
            only_branches = parent.only_branches and kind == _BRANCH
            lead_up = parent.lead_up and kind in (_BRANCH, _STATE)
        turn = turns[index]
        before = initial_app_state if parent is None else parent.state
        state = entry.value if isinstance(entry, AppStateEntry) else before
        at[entry.id] = _At(index, kind, only_branches, lead_up, state)

        if turn.node is None and kind != _BRANCH:
            show(turn, entry, step)
        elif turn.node is not None and kind == _USER and not turn.prompted:
            # the prompt the state edits led up to: the node is named by it from here on
            nodes[turn.node] = replace(
                nodes[turn.node],
                prompt=one_line(entry.message.content, limit=LABEL_CHARS),
                prompt_step=step,
            )
            turn.prompted = True

        what, detail = _what(entry, before)
        if what == PANEL:
            assert turn.node is not None
            panels.append(Panel(turn.node, step, entry.message.details["image_id"]))
        # where the session is: at the entry's node; after a rewind, where it went back to
        active = parent.active if kind == _BRANCH and parent is not None else turn.node
        assert active is not None  # a rewind has a parent; any other entry is in a node
        at[entry.id].active = active
        steps.append(Step(entry.id, entry.timestamp, what, turn.node, active, detail))
    return Timeline(tuple(nodes), tuple(panels), tuple(steps))


def timeline_data(line: Timeline) -> dict[str, Any]:
    """The timeline as compact JSON data, for a page that draws every position itself.

    Rows, not objects (a 10,000-entry session is ~10,000 steps): ``nodes`` are
    ``[entry_id, parent, depth, lane, step, tag, label, prompt, prompt_step]``, ``panels``
    ``[node, step, image_id]``, ``steps`` ``[ms since the epoch, what, node, active,
    detail]`` (``parent``/``node``: an index or null).
    """
    return {
        "nodes": [
            [n.entry_id, n.parent, n.depth, n.lane, n.step, n.tag, n.label, n.prompt, n.prompt_step]
            for n in line.nodes
        ],
        "panels": [[p.node, p.step, p.image_id] for p in line.panels],
        "steps": [
            [round(s.timestamp.timestamp() * 1000), s.what, s.node, s.active, s.detail]
            for s in line.steps
        ],
    }
