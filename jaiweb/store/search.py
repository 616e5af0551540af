"""Search the whole tree of a session, abandoned branches included: prompts, narration,
character states and labels, each hit naming its node."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal

from django.db import connection

from jaiweb.store.errors import InvalidEntry
from jaiweb.store.labels import labels_of
from jaiweb.store.models import ComicSession
from jaiweb.store.rows import StoredEntry, parse_rows, payload_text
from journal.entries import (
    AppStateEntry,
    AssistantMessage,
    CompactionEntry,
    Entry,
    MessageEntry,
    UserMessage,
)

Where = Literal["prompt", "narration", "state", "summary", "label"]
QUERY_MAX = 200
CANDIDATES = 2000  # rows whose JSON holds the text, read and checked at the most
AROUND = 40  # characters of context either side of a match


@dataclass(frozen=True, slots=True)
class Hit:
    entry_id: str
    seq: int | None  # None: a label's node is looked up by the page
    where: Where
    text: str  # the matching text, cut around the match


def _texts(entry: Entry) -> list[tuple[Where, str]]:
    if isinstance(entry, MessageEntry):
        message = entry.message
        if isinstance(message, UserMessage):
            return [("prompt", message.content)]
        if isinstance(message, AssistantMessage):
            return [("narration", message.content)]
        return []
    if isinstance(entry, AppStateEntry):
        characters = entry.value.get("characters") or {}
        return [
            ("state", " · ".join([name, *(str(v) for v in (fields or {}).values())]))
            for name, fields in characters.items()
        ]
    if isinstance(entry, CompactionEntry):
        return [("summary", entry.summary)]
    return []


def snippet(text: str, at: int, length: int) -> str:
    start, end = max(0, at - AROUND), min(len(text), at + length + AROUND)
    return ("…" if start else "") + text[start:end] + ("…" if end < len(text) else "")


def _like(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _candidate_rows(session: ComicSession, query: str) -> list[StoredEntry]:
    # The JSON text may hold the query as typed, or as \\u escapes (a file imported through
    # Django's JSON encoder): either narrows the rows, and the parsed text decides.
    forms = {query, json.dumps(query)[1:-1]}
    op = "LIKE" if connection.vendor == "sqlite" else "ILIKE"  # SQLite's LIKE folds ASCII case
    where = " OR ".join(f"{payload_text()} {op} %s ESCAPE '\\'" for _ in forms)
    sql = (
        "SELECT seq, entry_id, type FROM store_entry WHERE session_id = %s "
        f"AND type IN ('message', 'app_state', 'compaction') AND ({where}) ORDER BY seq LIMIT %s"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [session.id, *(_like(f) for f in forms), CANDIDATES])
        rows = cursor.fetchall()
    stored = [
        StoredEntry(seq, entry_id=entry_id, type=type_, session_id=session.id)
        for seq, entry_id, type_ in rows
    ]
    parse_rows(stored)
    return stored


def session_search(*, session: ComicSession, query: str, limit: int = 50) -> list[Hit]:
    """Hits in append order, then labels; case-insensitive. ``InvalidEntry`` for an empty
    or too long query."""
    query = query.strip()
    if not query:
        raise InvalidEntry("say what to search for")
    if len(query) > QUERY_MAX:
        raise InvalidEntry(f"a search has at most {QUERY_MAX} characters")
    folded = query.casefold()
    hits: list[Hit] = []
    for row in _candidate_rows(session, query):
        for where, text in _texts(row.entry):
            at = text.casefold().find(folded)
            if at >= 0:
                hits.append(Hit(row.entry_id, row.seq, where, snippet(text, at, len(query))))
                break
        if len(hits) >= limit:
            return hits
    for label in labels_of(session_id=session.id):
        at = label.text.casefold().find(folded)
        if at >= 0:
            hits.append(Hit(label.entry_id, None, "label", label.text))
            if len(hits) >= limit:
                break
    return hits
