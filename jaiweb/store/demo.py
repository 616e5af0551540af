"""The article's story as a session: e0…e4, a rewind to e2 (e5), and the finishing move (e6)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.utils import timezone

from jaiweb.store.models import ComicSession
from jaiweb.store.services import entry_append, rewind_append, session_create
from journal.entries import AppStateEntry, AssistantMessage, MessageEntry, UserMessage

HERO = "猪猪侠"
INITIAL_STATE = {
    "characters": {HERO: {"buff": "无", "skill": "无", "mood": "平静"}},
    "permission_mode": "ask",
}
KUNG_FU_STATE = {
    "characters": {HERO: {"buff": "超级棒棒糖(功夫大师)", "skill": "降龙十巴掌", "mood": "得意"}},
    "permission_mode": "ask",
}
LAXATIVE_STATE = {
    "characters": {HERO: {"buff": "拉肚子虚脱(捂肚子冒冷汗)", "skill": "无", "mood": "狼狈"}},
    "permission_mode": "ask",
}


def article_session_create(*, owner: Any, now: datetime | None = None) -> ComicSession:
    """Build the article's seven rows through the services (no agent run involved)."""
    start = now or timezone.now()

    def at(i: int) -> datetime:
        return start + timedelta(seconds=i)

    session = session_create(
        owner=owner, title="猪猪侠大战超人强", initial_app_state=INITIAL_STATE, now=start
    )
    line = [
        MessageEntry(
            id="e0",
            parent_id=None,
            timestamp=at(0),
            message=UserMessage(
                content="画一张猪猪侠在武林大会擂台上对决超人强，掏出超级棒棒糖吃下！"
            ),
        ),
        AppStateEntry(id="e1", parent_id="e0", timestamp=at(1), value=KUNG_FU_STATE),
        MessageEntry(
            id="e2",
            parent_id="e1",
            timestamp=at(2),
            message=AssistantMessage(content="擂台吃糖分镜 v1.png", stop_reason="stop"),
        ),
        AppStateEntry(id="e3", parent_id="e2", timestamp=at(3), value=LAXATIVE_STATE),
        MessageEntry(
            id="e4",
            parent_id="e3",
            timestamp=at(4),
            message=AssistantMessage(content="捂肚子搞笑图.png", stop_reason="stop"),
        ),
    ]
    leaf = None
    for entry in line:
        entry_append(
            session_id=session.id, entries=[entry], expected_leaf_id=leaf, now=entry.timestamp
        )
        leaf = entry.id
    rewind_append(session_id=session.id, target_id="e2", entry_id="e5", now=at(5))
    entry_append(
        session_id=session.id,
        entries=[
            MessageEntry(
                id="e6",
                parent_id="e5",
                timestamp=at(6),
                message=UserMessage(content="使出绝招降龙十巴掌，一掌拍飞超人强！"),
            )
        ],
        expected_leaf_id="e5",
        now=at(6),
    )
    session.refresh_from_db()
    return session
