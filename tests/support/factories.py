"""Small builders for journal tests: fixed clock, counters for ids, the article's story."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from journal.entries import (
    AppStateEntry,
    AssistantMessage,
    BranchEntry,
    CompactionEntry,
    MessageEntry,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

T0 = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


def at(seconds: int) -> datetime:
    return T0 + timedelta(seconds=seconds)


def user(id: str, parent: str | None, text: str = "hi", t: int = 0) -> MessageEntry:
    return MessageEntry(id=id, parent_id=parent, timestamp=at(t), message=UserMessage(content=text))


def assistant(
    id: str,
    parent: str | None,
    text: str = "ok",
    calls: list[tuple[str, str]] | None = None,
    stop_reason: str | None = None,
    t: int = 0,
) -> MessageEntry:
    tool_calls = [
        ToolCall(id=cid, name=name, arguments={"n": i}) for i, (cid, name) in enumerate(calls or [])
    ]
    reason = stop_reason or ("tool_use" if tool_calls else "stop")
    return MessageEntry(
        id=id,
        parent_id=parent,
        timestamp=at(t),
        message=AssistantMessage(content=text, tool_calls=tool_calls, stop_reason=reason),
    )


def result(id: str, parent: str, call_id: str, name: str = "generate_image", t: int = 0):
    return MessageEntry(
        id=id,
        parent_id=parent,
        timestamp=at(t),
        message=ToolResultMessage(tool_call_id=call_id, tool_name=name, content="done"),
    )


def state(id: str, parent: str | None, value: dict, t: int = 0) -> AppStateEntry:
    return AppStateEntry(id=id, parent_id=parent, timestamp=at(t), value=value)


def branch(id: str, parent: str, from_id: str, t: int = 0) -> BranchEntry:
    return BranchEntry(id=id, parent_id=parent, timestamp=at(t), from_id=from_id)


def compaction(id: str, parent: str, first_kept: str, summary: str = "so far", t: int = 0):
    return CompactionEntry(
        id=id,
        parent_id=parent,
        timestamp=at(t),
        summary=summary,
        first_kept_entry_id=first_kept,
        tokens_before=9100,
        tokens_after=2300,
    )


KUNG_FU = {"characters": {"猪猪侠": {"buff": "超级棒棒糖(功夫大师)", "skill": "降龙十巴掌"}}}
LAXATIVE = {"characters": {"猪猪侠": {"buff": "拉肚子虚脱(捂肚子冒冷汗)", "skill": "无"}}}
INITIAL = {"characters": {"猪猪侠": {"buff": "无", "skill": "无"}}, "permission_mode": "ask"}


def article_entries():
    """The article's seven rows: e0…e4, then a rewind to e2 (e5) and a new prompt (e6)."""
    return [
        user("e0", None, "吃下超级棒棒糖，上擂台对决超人强！", t=0),
        state("e1", "e0", KUNG_FU, t=1),
        assistant("e2", "e1", "擂台吃糖分镜 v1.png", t=2),
        state("e3", "e2", LAXATIVE, t=3),
        assistant("e4", "e3", "捂肚子搞笑图.png", t=4),
        branch("e5", "e2", "e4", t=5),
        user("e6", "e5", "使出降龙十巴掌拍飞超人强！", t=6),
    ]


def panel(
    id: str,
    parent: str,
    *,
    cost: int = 10,
    replayed: bool = False,
    error: bool = False,
    image: str | None = None,
):
    """A generate_image result holding a panel (``image``, default ``img_<id>``)."""
    details = {"image_id": image or f"img_{id}", "cost": cost, "replayed": replayed}
    message = ToolResultMessage(
        tool_call_id=f"c_{id}",
        tool_name="generate_image",
        content="panel rendered",
        details=details,
        is_error=error,
    )
    return MessageEntry(id=id, parent_id=parent, timestamp=at(9), message=message)


def post(id: str, parent: str):
    """A publish_panel result."""
    message = ToolResultMessage(
        tool_call_id=f"c_{id}", tool_name="publish_panel", content="ok", details={"post_id": "p"}
    )
    return MessageEntry(id=id, parent_id=parent, timestamp=at(9), message=message)
