"""Readers of session files from elsewhere, and the one entry point that picks the reader.

``session_read(lines)`` looks at the first line that is not blank: a ``jaiweb-session``
header is jaiweb's own file (``journal.session_file``, any readable version); a pi
``session`` header is a pi session (JSONL v3, ``journal.importers.pi``); a line of a
Claude Code transcript is one (``journal.importers.claude_code``). Anything else goes to
jaiweb's reader, which says what it expected. Every reader returns a checked
``SessionFile`` or raises ``FileRefused`` naming the line; none of them writes.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import chain

from journal.importers.claude_code import claude_code_session_read, is_claude_code_line
from journal.importers.pi import is_pi_header, pi_session_read
from journal.jsonvalues import json_loads
from journal.session_file import SessionFile, session_file_read

__all__ = ["detect_format", "session_read"]


def detect_format(first_line: str | bytes | None) -> str:
    """``"jaiweb"``, ``"pi"`` or ``"claude_code"`` from a file's first non-blank line."""
    if first_line is None:
        return "jaiweb"
    try:
        data = json_loads(first_line)
    except ValueError:  # not JSON, too deep, or not UTF-8: jaiweb's reader says so with the line
        return "jaiweb"
    if not isinstance(data, dict) or "format" in data:
        return "jaiweb"
    if is_pi_header(data):
        return "pi"
    if is_claude_code_line(data):
        return "claude_code"
    return "jaiweb"


def _peeked(lines: Iterable[str | bytes]) -> tuple[str | bytes | None, Iterator[str | bytes]]:
    """The first line that is not blank, and every line (that one included) in order."""
    iterator = iter(lines)
    seen: list[str | bytes] = []
    for line in iterator:
        seen.append(line)
        if line.strip():
            return line, chain(seen, iterator)
    return None, iter(seen)


READERS = {
    "jaiweb": session_file_read,
    "pi": pi_session_read,
    "claude_code": claude_code_session_read,
}


def session_read(lines: Iterable[str | bytes]) -> SessionFile:
    """The session in ``lines``, whichever of the readable formats it is in."""
    first, lines = _peeked(lines)
    return READERS[detect_format(first)](lines)
