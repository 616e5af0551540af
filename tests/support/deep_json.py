"""JSON nested as deep as a test asks, and session files with one line so nested.

Each file is written as text, never through ``json.dumps`` (which recurses once a level):
the nested value is a run of ``[`` around a number, spliced into an ordinary line. At a
small depth each file is one every reader imports, so a test that sees a deep one refused
knows the depth alone refused it.
"""

from __future__ import annotations

import json
from typing import Any

from journal.jsonvalues import JSON_DEPTH_MAX, JSON_VALUE_DEPTH_MAX

# What the issue tried, and more: every one far past what Python's json recurses through.
TOO_DEEP = (3_000, 5_000, 100_000)
SPOT = "__nested__"  # the value that `splice` replaces
WHEN = "2026-01-01T00:00:00Z"


def nested(depth: int, inner: str = "0") -> str:
    """``inner`` inside ``depth`` arrays, as JSON text."""
    return "[" * depth + inner + "]" * depth


def nested_value(depth: int, leaf: Any = 0) -> Any:
    """``leaf`` inside ``depth`` lists, built without recursion."""
    value = leaf
    for _ in range(depth):
        value = [value]
    return value


def splice(template: dict, depth: int) -> str:
    """``template`` as a JSON line, its value ``"__nested__"`` replaced by ``nested(depth)``."""
    line = json.dumps(template, ensure_ascii=False, separators=(",", ":"))
    spot = json.dumps(SPOT)
    assert line.count(spot) == 1, line
    return line.replace(spot, nested(depth))


def jaiweb_lines(depth: int) -> list[str]:
    """A jaiweb session file (version 2) of one app_state entry, its value holding the
    nested array; the entry is line 2, nested ``depth + 2`` deep."""
    header = {
        "format": "jaiweb-session",
        "version": 2,
        "session": {
            "id": "s_deep",
            "title": "deep",
            "initial_app_state": {"characters": {}, "permission_mode": "ask"},
            "leaf_id": "e0",
            "created_at": WHEN,
            "updated_at": WHEN,
            "entry_count": 1,
            "operation_count": 0,
            "label_count": 0,
            "image_count": 0,
        },
    }
    entry = {
        "type": "app_state",
        "id": "e0",
        "parent_id": None,
        "timestamp": WHEN,
        "value": {"characters": {}, "permission_mode": "ask", "deep": SPOT},
    }
    return [json.dumps(header), splice(entry, depth)]


def pi_lines(depth: int) -> list[str]:
    """A pi session of one ``custom`` entry whose data is the nested array: line 2, nested
    ``depth + 1`` deep (kept in the app state under ``pi.custom.todo``)."""
    header = {"type": "session", "version": 3, "id": "deep", "timestamp": WHEN}
    custom = {
        "type": "custom",
        "id": "c1",
        "parentId": None,
        "timestamp": WHEN,
        "customType": "todo",
        "data": SPOT,
    }
    return [json.dumps(header), splice(custom, depth)]


def claude_code_lines(depth: int) -> list[str]:
    """A Claude Code transcript of a prompt and a reply, the reply's line carrying the
    nested array in a field the reader leaves alone: line 2, nested ``depth + 1`` deep."""
    first = {
        "type": "user",
        "uuid": "00000001-aaaa-4bbb-8ccc-000000000001",
        "parentUuid": None,
        "sessionId": "s",
        "timestamp": WHEN,
        "message": {"role": "user", "content": "draw"},
    }
    second = {
        "type": "assistant",
        "uuid": "00000002-aaaa-4bbb-8ccc-000000000002",
        "parentUuid": first["uuid"],
        "sessionId": "s",
        "timestamp": WHEN,
        "message": {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
        "toolUseResult": SPOT,
    }
    return [json.dumps(first), splice(second, depth)]


# Each format's file, by name: (its lines at a depth, the line that nests).
DEEP_FILES = {
    "jaiweb": (jaiweb_lines, 2),
    "pi": (pi_lines, 2),
    "claude_code": (claude_code_lines, 2),
}


def deep_file(kind: str, depth: int) -> bytes:
    """The ``kind`` file with its nested line, as bytes with a final newline."""
    build, _ = DEEP_FILES[kind]
    return ("\n".join(build(depth)) + "\n").encode()


def refusal(line_no: int) -> str:
    """What every reader says of a line nested past the limit."""
    return f"line {line_no}: JSON nested deeper than {JSON_DEPTH_MAX} levels of arrays and objects"


__all__ = [
    "DEEP_FILES",
    "JSON_DEPTH_MAX",
    "JSON_VALUE_DEPTH_MAX",
    "TOO_DEEP",
    "deep_file",
    "nested",
    "nested_value",
    "refusal",
    "splice",
]
