"""Sessions written straight to the store in the shape the loop writes a turn, for the
storyboard's tests: the prompt, a reply calling tools, the state entry and its result, the
panel's result, the closing reply (ids ``t<n>u``, ``t<n>a``, ``t<n>s``, ``t<n>r1``,
``t<n>r2``, ``t<n>f``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from django.db import transaction

from jaiweb.store.chains import entry_rows
from jaiweb.store.models import ComicSession, Entry
from jaiweb.store.services import session_create
from journal.entries import (
    AppStateEntry,
    AssistantMessage,
    BranchEntry,
    MessageEntry,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

T0 = datetime(2026, 1, 1, tzinfo=UTC)
HERO = "猪猪侠"


def turn(
    n: int, parent: str | None, *, state: bool = True, panel: bool = True, cost: int | None = None
) -> list:
    """The entries of turn ``n`` (ids ``t<n>…``): its last one is ``t<n>f``; ``cost``: the
    credits its panel charged, as a render's result says (left out: none said)."""
    ts = T0 + timedelta(minutes=n)
    p = f"t{n}"
    calls = []
    if state:
        calls.append(ToolCall(id="c1", name="set_character_state", arguments={"character": HERO}))
    if panel:
        calls.append(ToolCall(id="c2", name="generate_image", arguments={"prompt": f"scene {n}"}))
    out = [
        MessageEntry(
            id=f"{p}u", parent_id=parent, timestamp=ts, message=UserMessage(content=f"prompt {n}")
        ),
        MessageEntry(
            id=f"{p}a",
            parent_id=f"{p}u",
            timestamp=ts,
            message=AssistantMessage(
                content=f"reply {n}",
                tool_calls=calls,
                stop_reason="tool_use" if calls else "stop",
            ),
        ),
    ]
    if not calls:
        out[-1] = out[-1].model_copy(update={"id": f"{p}f"})
        return out
    last = f"{p}a"
    if state:
        value = {"characters": {HERO: {"mood": f"mood {n}"}}, "permission_mode": "ask"}
        out.append(AppStateEntry(id=f"{p}s", parent_id=last, timestamp=ts, value=value))
        result = ToolResultMessage(tool_call_id="c1", tool_name="set_character_state", content="ok")
        out.append(MessageEntry(id=f"{p}r1", parent_id=f"{p}s", timestamp=ts, message=result))
        last = f"{p}r1"
    if panel:
        result = ToolResultMessage(
            tool_call_id="c2",
            tool_name="generate_image",
            content="panel rendered",
            details={"image_id": f"img_{n:04d}"} | ({} if cost is None else {"cost": cost}),
        )
        out.append(MessageEntry(id=f"{p}r2", parent_id=last, timestamp=ts, message=result))
        last = f"{p}r2"
    final = AssistantMessage(content=f"done {n}", stop_reason="stop")
    out.append(MessageEntry(id=f"{p}f", parent_id=last, timestamp=ts, message=final))
    return out


def rewind(bid: str, target: str, left: str, n: int = 0) -> BranchEntry:
    return BranchEntry(
        id=bid, parent_id=target, timestamp=T0 + timedelta(hours=1, seconds=n), from_id=left
    )


def store(owner, entries: list, leaf: str, title: str = "storyboard") -> ComicSession:
    session = session_create(owner=owner, title=title)
    with transaction.atomic():
        Entry.objects.bulk_create(entry_rows(session.id, entries), batch_size=2000)
        ComicSession.objects.filter(pk=session.id).update(leaf_id=leaf, entry_count=len(entries))
    session.refresh_from_db()
    return session


def line(count: int, start: int = 1, parent: str | None = None, **kw) -> list:
    entries = []
    for n in range(start, start + count):
        entries.extend(turn(n, parent, **kw))
        parent = entries[-1].id
    return entries
