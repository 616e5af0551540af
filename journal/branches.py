"""What branches hold and cost: two branches compared, and what a rewind would roll back.

All of it is a fold of paths (root → node lists of entries) the caller has read: the
credits a panel charged and the posts it made are in its tool result, so neither needs
the ledger or the feed. Nothing here changes a journal.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from journal.chapters import marks_of
from journal.entries import (
    AppStateEntry,
    AssistantMessage,
    BranchEntry,
    Entry,
    MessageEntry,
    ToolCall,
    ToolResultMessage,
)
from journal.lettering import ComicChanges, comic_changes
from journal.variants import choices_of

CHARACTER_FIELDS = ("buff", "skill", "mood")
PANEL_TOOLS = ("generate_image", "place_panel")  # results that hold a panel of the strip


@dataclass(frozen=True, slots=True)
class Effects:
    """What entries did outside the journal: credits charged, panels drawn, posts published."""

    credits: int = 0
    panels: int = 0
    posts: int = 0

    def __add__(self, other: Effects) -> Effects:
        return Effects(
            self.credits + other.credits, self.panels + other.panels, self.posts + other.posts
        )


NO_EFFECTS = Effects()


def entry_effects(entry: Entry) -> Effects:
    """One entry's effects: a drawn panel's charge (none when the render service answered
    with a result it had already charged for), a publication."""
    if not isinstance(entry, MessageEntry):
        return NO_EFFECTS
    message = entry.message
    if not isinstance(message, ToolResultMessage) or message.is_error:
        return NO_EFFECTS
    details = message.details or {}
    if message.tool_name in PANEL_TOOLS and details.get("image_id"):
        charged = 0 if details.get("replayed") else int(details.get("cost") or 0)
        return Effects(credits=charged, panels=1)
    if message.tool_name == "publish_panel":
        return Effects(posts=1)
    return NO_EFFECTS


def effects_of(entries: Iterable[Entry]) -> Effects:
    total = NO_EFFECTS
    for entry in entries:
        total += entry_effects(entry)
    return total


def state_on(path: Sequence[Entry], initial: dict) -> dict:
    """The app state at the end of a path: its last ``app_state`` entry's, or ``initial``."""
    for entry in reversed(path):
        if isinstance(entry, AppStateEntry):
            return entry.value
    return initial


@dataclass(frozen=True, slots=True)
class Change:
    """One value that differs: a character's field (``character`` set), or the permission
    mode (``character`` None, ``field`` "permission_mode"). None: not there."""

    character: str | None
    field: str
    before: str | None
    after: str | None


def state_changes(before: dict, after: dict) -> list[Change]:
    """Every character field, the permission mode and the chapter marks that differ, in a
    stable order."""
    changes: list[Change] = []
    old, new = before.get("characters") or {}, after.get("characters") or {}
    for name in sorted(set(old) | set(new)):
        a, b = old.get(name), new.get(name)
        for key in CHARACTER_FIELDS:
            was = None if a is None else str(a.get(key, ""))
            now = None if b is None else str(b.get(key, ""))
            if was != now:
                changes.append(Change(name, key, was, now))
    mode_before, mode_after = before.get("permission_mode"), after.get("permission_mode")
    if mode_before != mode_after:
        changes.append(Change(None, "permission_mode", mode_before, mode_after))
    marks_before, marks_after = _chapter_titles(before), _chapter_titles(after)
    if marks_before != marks_after:
        changes.append(Change(None, "chapters", marks_before, marks_after))
    return changes


def _chapter_titles(state: dict) -> str | None:
    """A state's chapter marks as one line of titles (None: no chapters), for a change."""
    titles = [m.title for m in marks_of(state)]
    return " · ".join(titles) if titles else None


def common_prefix(left: Sequence[Entry], right: Sequence[Entry]) -> int:
    """How many entries two root → node paths share (the fork point is the last of them)."""
    n = 0
    for a, b in zip(left, right, strict=False):
        if a.id != b.id:
            break
        n += 1
    return n


@dataclass(frozen=True, slots=True)
class Side:
    """One branch from the fork point on: its entries, the state at its end, its effects."""

    node_id: str | None
    entries: list[Entry]
    state: dict
    effects: Effects


@dataclass(frozen=True, slots=True)
class Comparison:
    fork_id: str | None  # None: the two share no entry (different roots)
    left: Side
    right: Side
    changes: list[Change] = field(default_factory=list)  # left's state → right's


def compare_branches(left: Sequence[Entry], right: Sequence[Entry], initial: dict) -> Comparison:
    """Two root → node paths side by side from where they part."""
    shared = common_prefix(left, right)
    fork_id = left[shared - 1].id if shared else None

    def side(path: Sequence[Entry]) -> Side:
        tail = list(path[shared:])
        return Side(path[-1].id if path else None, tail, state_on(path, initial), effects_of(tail))

    a, b = side(left), side(right)
    return Comparison(fork_id, a, b, state_changes(a.state, b.state))


@dataclass(frozen=True, slots=True)
class RewindPreview:
    """What continuing from ``target_id`` rolls back (the state) and what it does not (what
    the part of the branch left behind spent and published stays spent and published)."""

    target_id: str
    changes: list[Change]  # the state now → the state at the target
    left_behind: int  # entries of the current branch after the fork point
    stays: Effects
    # variant sets whose chosen variant differs there (journal/variants.py)
    choices: int = 0
    # the panels' words, the layout and the order that differ there (journal/lettering.py)
    comic: ComicChanges = field(default_factory=ComicChanges)

    @property
    def story_only_changes(self) -> list[Change]:
        """What "continue from here, story only: keep today's characters" rolls back: the
        same, less the characters, which it writes back as they are now."""
        return [c for c in self.changes if c.character is None]


def rewind_preview(
    current: Sequence[Entry], target: Sequence[Entry], initial: dict
) -> RewindPreview:
    """``current``: root → the leaf; ``target``: root → the node to continue from."""
    comparison = compare_branches(current, target, initial)
    return RewindPreview(
        target_id=target[-1].id,
        changes=comparison.changes,
        left_behind=len(comparison.left.entries),
        stays=comparison.left.effects,
        choices=choices_changed(comparison.left.state, comparison.right.state),
        comic=comic_changes(
            comparison.left.state,
            comparison.right.state,
            [e.id for e in target],
            lambda: [e.id for e in target if panel_image_of(e)],
        ),
    )


def choices_changed(before: dict, after: dict) -> int:
    """How many variant sets show another variant in ``after`` than in ``before``."""
    old, new = choices_of(before), choices_of(after)
    return sum(1 for set_id in set(old) | set(new) if old.get(set_id) != new.get(set_id))


def straightened(path: list[Entry]) -> list[Entry]:
    """The path as one straight branch: its rewinds' ``branch`` entries are left out (the
    branch they left is not copied), and the entry after each hangs on what it pointed to."""
    copied: list[Entry] = []
    skip: dict[str, str | None] = {}  # a left-out branch entry → the node it stood for
    for entry in path:
        parent = entry.parent_id
        while parent in skip:
            parent = skip[parent]
        if isinstance(entry, BranchEntry):
            skip[entry.id] = parent
            continue
        copied.append(
            entry if parent == entry.parent_id else entry.model_copy(update={"parent_id": parent})
        )
    return copied


def panel_image_of(entry: Entry) -> str | None:
    """The image of a panel entry (a drawn or a placed panel's result), else None."""
    if not isinstance(entry, MessageEntry):
        return None
    message = entry.message
    if not isinstance(message, ToolResultMessage) or message.is_error:
        return None
    if message.tool_name not in PANEL_TOOLS:
        return None
    image = (message.details or {}).get("image_id")
    return image if isinstance(image, str) else None


def cherry_pick_entries(
    panel: Entry,
    *,
    leaf_id: str,
    ids: tuple[str, str, str],
    now: datetime,
    state: dict | None = None,
) -> list[Entry]:
    """Return the entries that put an existing panel on the branch at ``leaf_id``.

    The entries are a placement: an assistant message calling ``place_panel``, and its result,
    which names the same image and the entry it came from. With ``state``, an ``app_state``
    entry carrying that panel's state follows. Nothing is drawn or charged, and the result says
    so with a cost of 0."""
    image = panel_image_of(panel)
    if image is None:
        raise ValueError(f"entry {panel.id!r} is not a panel")
    call_entry, result_entry, state_entry = ids
    call_id = f"pick_{call_entry}"
    arguments = {"image_id": image, "from_entry_id": panel.id}
    placed = [
        MessageEntry(
            id=call_entry,
            parent_id=leaf_id,
            timestamp=now,
            message=AssistantMessage(
                content="",
                tool_calls=[ToolCall(id=call_id, name="place_panel", arguments=arguments)],
                stop_reason="tool_use",
            ),
        ),
        MessageEntry(
            id=result_entry,
            parent_id=call_entry,
            timestamp=now,
            message=ToolResultMessage(
                tool_call_id=call_id,
                tool_name="place_panel",
                content="panel placed from another branch (not drawn again, not charged)",
                details={**arguments, "cost": 0},
            ),
        ),
    ]
    if state is not None:
        placed.append(
            AppStateEntry(id=state_entry, parent_id=result_entry, timestamp=now, value=state)
        )
    return placed
