"""Parses the offline director's slash-command grammar: ``/state``, ``/draw``, ``/publish``, …

One command per line, any number of lines, in order. A line is a command when it starts
with ``/`` and a word (``/draw``) or one of the Chinese command words (``/画``); other
lines are scene text. What each command does is ``docs/DIRECTOR.md``; the director
(``director.py``) turns the parsed commands into narration and tool calls.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from jaiweb.agent.providers.offline.limits import FIELD_LIMITS

COMMANDS = ("state", "draw", "publish", "panels", "say", "help")
CHINESE = {"状态": "state", "画": "draw", "发布": "publish", "分镜": "panels", "说": "say",
           "帮助": "help"}  # fmt: skip
_CHINESE = "|".join(sorted(CHINESE, key=len, reverse=True))
COMMAND_LINE = re.compile(rf"^\s*/(?:([A-Za-z]+)(?=\s|$)|({_CHINESE}))(.*)$")
STATE_KEY = re.compile(r"\s(buff|skill|mood|增益|招式|技能|心情|情绪)\s*[=＝]", re.IGNORECASE)
KEY_NAMES = {"增益": "buff", "招式": "skill", "技能": "skill", "心情": "mood", "情绪": "mood"}


@dataclass(frozen=True)
class Command:
    """One command line: ``name`` is one of ``COMMANDS`` (``word`` as typed when it is not)."""

    name: str
    rest: str  # the rest of the line, stripped
    word: str  # the command word as typed


def parse(text: str) -> tuple[list[Command], str]:
    """The command lines in order, and the scene text (the other lines, joined by spaces)."""
    commands: list[Command] = []
    scene: list[str] = []
    for line in text.splitlines():
        match = COMMAND_LINE.match(line)
        if match is None:
            if line.strip():
                scene.append(line.strip())
            continue
        word = match.group(1) or match.group(2)
        name = CHINESE.get(word, word.lower())
        commands.append(Command(name if name in COMMANDS else "", match.group(3).strip(), word))
    return commands, " ".join(scene)


def parse_state(rest: str) -> tuple[str, dict[str, str]]:
    """``<character> buff=… skill=… mood=…``: each value runs until the next key or the end;
    a key given twice keeps the last value; values are cut to the tool's limits."""
    rest = " " + rest
    keys = list(STATE_KEY.finditer(rest))
    end = keys[0].start() if keys else len(rest)
    character = rest[:end].strip()[: FIELD_LIMITS["character"]]
    fields: dict[str, str] = {}
    for i, key in enumerate(keys):
        stop = keys[i + 1].start() if i + 1 < len(keys) else len(rest)
        name = KEY_NAMES.get(key.group(1), key.group(1).lower())
        fields.pop(name, None)  # a repeated key moves to where it was last given
        fields[name] = rest[key.end() : stop].strip()[: FIELD_LIMITS[name]]
    return character, {k: fields[k] for k in ("buff", "skill", "mood") if k in fields}
