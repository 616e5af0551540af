"""Parses the offline director's slash-command grammar: ``/state``, ``/draw``, ``/publish``, …

One command per line, any number of lines, in order; a line is a command when it starts
with ``/`` and a word. Other lines are scene text. The user documentation is
``docs/DIRECTOR.md``.
"""

from __future__ import annotations

import re

from jaiweb.agent.providers.offline.limits import FIELD_LIMITS

COMMAND_LINE = re.compile(r"^\s*/([A-Za-z]+)(?=\s|$)(.*)$")
STATE_KEY = re.compile(r"\s(buff|skill|mood)=", re.IGNORECASE)


def is_command_line(line: str) -> bool:
    return COMMAND_LINE.match(line) is not None


def parse_state(rest: str) -> tuple[str, dict[str, str]]:
    """``<character> buff=… skill=… mood=…``: each value runs until the next key or the end."""
    rest = " " + rest
    keys = list(STATE_KEY.finditer(rest))
    end = keys[0].start() if keys else len(rest)
    character = rest[:end].strip()[: FIELD_LIMITS["character"]]
    fields: dict[str, str] = {}
    for i, key in enumerate(keys):
        stop = keys[i + 1].start() if i + 1 < len(keys) else len(rest)
        name = key.group(1).lower()
        fields.pop(name, None)  # a repeated key moves to where it was last given
        fields[name] = rest[key.end() : stop].strip()[: FIELD_LIMITS[name]]
    return character, {k: fields[k] for k in ("buff", "skill", "mood") if k in fields}
