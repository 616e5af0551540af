"""What the readers of other tools' session files share: clean text, ids jaiweb accepts,
times, and a tree that refuses a broken link at its line.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError

from journal.entries import AppStateEntry, Entry, ToolCall
from journal.errors import JournalError
from journal.session_file import FileRefused, LabelLine, SessionFile, SessionHeader
from journal.snapshot import SessionSnapshot, apply_entry

# The state an imported session starts from: no characters, ask before paid tools.
INITIAL_STATE: dict[str, Any] = {"characters": {}, "permission_mode": "ask"}
TITLE_MAX = 200
_CALL_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_BAD_TEXT = re.compile("[\x00\ud800-\udfff]")


def clean_text(value: str) -> str:
    """The text with U+0000 and lone surrogates (which jaiweb cannot keep) as U+FFFD."""
    if "\x00" not in value and value.isascii():
        return value
    return _BAD_TEXT.sub("\ufffd", value)


def clean(value: Any) -> Any:
    """A JSON value with every string and key cleaned, and non-finite numbers as text."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, list):
        return [clean(item) for item in value]
    if isinstance(value, dict):
        return {clean_text(str(k)): clean(v) for k, v in value.items()}
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


def as_text(value: Any) -> str:
    """Any JSON value as text: a string as it is, anything else as compact JSON."""
    if isinstance(value, str):
        return clean_text(value)
    return clean_text(json.dumps(value, ensure_ascii=False, sort_keys=True))


def call_id(raw: Any) -> str:
    """A tool call id jaiweb accepts (``[A-Za-z0-9_-]{1,64}``): the source's own when it
    fits, else one derived from it, the same for the call and its result."""
    text = raw if isinstance(raw, str) else as_text(raw)
    if _CALL_ID.match(text):
        return text
    return "c_" + hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:24]


def tool_name(raw: Any) -> str:
    text = clean_text(raw if isinstance(raw, str) else "")[:64].strip()
    return text or "unknown"


def arguments(raw: Any) -> dict[str, Any]:
    """A call's arguments as a JSON object; anything else kept as ``{"_unparsed": text}``
    (docs/ARCHITECTURE.md §5)."""
    if isinstance(raw, dict):
        return clean(raw)
    return {"_unparsed": as_text(raw)}


def tool_call(line_no: int, raw_id: Any, name: Any, args: Any) -> ToolCall:
    return ToolCall(id=call_id(raw_id), name=tool_name(name), arguments=arguments(args))


def parse_time(line_no: int, value: Any, fallback: datetime | None) -> datetime:
    """An ISO 8601 time (a naive one is UTC) or Unix milliseconds; ``fallback`` if absent."""
    if value is None or value == "":
        if fallback is None:
            raise FileRefused(line_no, "no timestamp")
        return fallback
    if isinstance(value, bool):
        raise FileRefused(line_no, f"timestamp {value!r} is not a time")
    if isinstance(value, int | float):
        seconds = value / 1000 if abs(value) > 1e11 else value
        try:
            return datetime.fromtimestamp(seconds, tz=UTC)
        except (OverflowError, OSError, ValueError) as exc:
            raise FileRefused(line_no, f"timestamp {value!r} is not a time") from exc
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError as exc:
            raise FileRefused(line_no, f"timestamp {value!r} is not an ISO 8601 time") from exc
        return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)
    raise FileRefused(line_no, f"timestamp {value!r} is not a time")


def entry_id(line_no: int, raw: Any, what: str) -> str:
    if not isinstance(raw, str) or not raw:
        raise FileRefused(line_no, f"{what} has no {'id' if what == 'an entry' else 'uuid'}")
    text = clean_text(raw)
    if len(text) > 120:  # room for the suffixes of the entries one line may become
        raise FileRefused(line_no, f"id {raw[:40]!r}… is longer than 120 characters")
    return text


def title_of(*candidates: str | None, fallback: str) -> str:
    for candidate in candidates:
        if candidate:
            text = " ".join(clean_text(candidate).split())
            if text:
                return text if len(text) <= TITLE_MAX else text[: TITLE_MAX - 1] + "…"
    return fallback


def _reason(exc: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" if e["loc"] else e["msg"]
        for e in exc.errors(include_url=False)
    )


@contextmanager
def refused_at(line_no: int, what: str) -> Iterator[None]:
    """A line jaiweb cannot keep as ``what``: refused at that line, saying why."""
    try:
        yield
    except ValidationError as exc:
        raise FileRefused(line_no, f"cannot be kept as {what}: {_reason(exc)}") from exc


class Tree:
    """The session's entries as they are read, checked as they come (one root, every
    parent read before its child, no id twice), each refusal at the line it came from."""

    def __init__(self, created_at: datetime):
        self.snapshot = SessionSnapshot.empty(INITIAL_STATE, created_at)
        self.entries: list[Entry] = []
        self.created_at = created_at
        self._states: dict[str, dict[str, Any]] = {}  # the app state at each node

    def __contains__(self, entry_id: str) -> bool:
        return entry_id in self.snapshot.index

    @property
    def leaf_id(self) -> str | None:
        return self.snapshot.leaf_id

    def state_at(self, entry_id: str | None) -> dict[str, Any]:
        """The app state at a node (what an ``app_state`` entry there would change)."""
        if entry_id is None:
            return INITIAL_STATE
        return self._states[entry_id]

    def add(self, line_no: int, build: Any, **fields: Any) -> Entry:
        with refused_at(line_no, f"a {build.__name__}"):
            entry = build(**fields)
        try:
            self.snapshot = apply_entry(self.snapshot, entry)
        except JournalError as exc:
            raise FileRefused(line_no, str(exc)) from exc
        self.entries.append(entry)
        if isinstance(entry, AppStateEntry):
            self._states[entry.id] = entry.value
        else:
            self._states[entry.id] = self.state_at(entry.parent_id)
        return entry


def session_file(
    *,
    tree: Tree,
    source_id: str,
    title: str,
    labels: Iterable[LabelLine] = (),
    source: str,
) -> SessionFile:
    updated = tree.entries[-1].timestamp if tree.entries else tree.created_at
    header = SessionHeader(
        id=clean_text(source_id)[:128] or source,
        title=title,
        initial_app_state=INITIAL_STATE,
        leaf_id=tree.leaf_id,
        created_at=tree.created_at,
        updated_at=max(updated, tree.created_at),
        entry_count=len(tree.entries),
        operation_count=0,
    )
    return SessionFile(
        header=header,
        entries=tree.entries,
        operations=[],
        labels=list(labels),
        images=[],
        version=0,
        source=source,
    )
