"""What the director can tell from the conversation: the panels drawn, the states, the language.

The director sees only the messages of the branch (and, when its caller passes it, the
app state at the leaf). A panel is a successful ``generate_image`` result; a state is
the last successful ``set_character_state`` result per character, or what a compaction
summary of this director's recorded.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from jaiweb.agent.providers.offline.narration import CJK
from jaiweb.agent.providers.offline.summary import (
    GENERATE,
    IMAGE_IN_SUMMARY,
    SET_STATE,
    Tally,
)
from jaiweb.render.panel.script import parse
from journal.cast import Cast
from journal.entries import (
    AssistantMessage,
    ContextMessage,
    SummaryMessage,
    ToolResultMessage,
    UserMessage,
)

LATIN_WORD = re.compile(r"[A-Za-z]{2,}")
COMMAND_WORD = re.compile(r"(?m)^\s*/[A-Za-z]+")


@dataclass(frozen=True)
class Panel:
    image_id: str
    prompt: str  # what it was drawn from (a panel script)
    turn: str  # the user's prompt of the turn that drew it
    before: str | None  # the user's prompt of the turn before that one, if on the path

    @property
    def caption(self) -> str:
        return parse(self.prompt).shown_caption or " ".join(self.turn.split())


@dataclass
class Memory:
    panels: list[Panel] = field(default_factory=list)
    summary_image: str | None = None  # the last panel a compaction summary names
    summarized: bool = False  # earlier turns are folded into a summary
    states: dict[str, dict[str, str]] = field(default_factory=dict)
    from_app_state: bool = False  # the states are the branch's own, not just what was said
    permission_mode: str | None = None  # "ask" / "auto", when the app state was given
    last_character: str | None = None  # the one named or whose state was set, last
    recent: list[str] = field(default_factory=list)  # the characters named, oldest first
    cast: Cast = field(default_factory=lambda: Cast.of({}))
    language: str | None = None  # the session's (its built-ins' and defaults'), if it has one

    @property
    def state_language(self) -> str:
        """The language built-in states are written in: the session's (Chinese for a
        session from before sessions had one)."""
        return self.language or "zh"


def remember(messages: list[ContextMessage], app_state: Mapping[str, Any] | None = None) -> Memory:
    memory = Memory()
    tally = Tally()
    prompts: list[str] = []
    said: list[tuple[str, str]] = []  # ("prompt", text) / ("state", name), in order
    calls: dict[str, tuple[dict[str, Any], int]] = {}  # id → arguments, turn (latest call)
    for message in messages:
        if isinstance(message, SummaryMessage):
            memory.summarized = True
            tally.carry_over(message.content)
            found = IMAGE_IN_SUMMARY.findall(message.content)
            memory.summary_image = found[-1] if found else memory.summary_image
        elif isinstance(message, UserMessage):
            prompts.append(message.content)
            said.append(("prompt", message.content))
        elif isinstance(message, AssistantMessage):
            for call in message.tool_calls:
                calls[call.id] = (call.arguments, len(prompts) - 1)
        elif isinstance(message, ToolResultMessage) and not message.is_error:
            args, turn = calls.get(message.tool_call_id, ({}, len(prompts) - 1))
            image_id = message.details.get("image_id")
            if message.tool_name == GENERATE and isinstance(image_id, str) and image_id:
                prompt = args.get("prompt", "")
                memory.panels.append(
                    Panel(
                        image_id,
                        prompt if isinstance(prompt, str) else "",
                        prompts[turn] if 0 <= turn < len(prompts) else "",
                        prompts[turn - 1] if 0 < turn < len(prompts) else None,
                    )
                )
            elif message.tool_name == SET_STATE:
                character = message.details.get("character") or args.get("character")
                fields = message.details.get("state")
                if isinstance(character, str) and character:
                    tally.set_state(character, fields if isinstance(fields, dict) else args)
                    said.append(("state", character))
    memory.states = {name: dict(fields) for name, fields in tally.states.items()}
    characters: Mapping[str, Any] = memory.states
    if app_state is not None:
        language = app_state.get("language")
        memory.language = language if language in ("en", "zh") else None
        given = app_state.get("characters")
        if isinstance(given, Mapping):
            characters = given
            memory.states = {
                str(name): {k: str(v) for k, v in dict(c).items() if isinstance(v, str)}
                for name, c in given.items()
                if isinstance(c, Mapping)
            }
            memory.from_app_state = True
        mode = app_state.get("permission_mode")
        memory.permission_mode = mode if mode in ("ask", "auto") else None
    memory.cast = Cast.of(characters, memory.state_language)
    for kind, value in said:
        for name in memory.cast.named(value) if kind == "prompt" else [value]:
            resolved = name if name in memory.cast.by_name else _resolve(memory.cast, name)
            if resolved:
                memory.recent.append(resolved)
    if memory.recent:
        memory.last_character = memory.recent[-1]
    elif memory.states:
        memory.last_character = list(memory.states)[-1]
    return memory


def _resolve(cast: Cast, name: str) -> str | None:
    try:
        return cast.resolve(name)
    except ValueError:
        return None


def conversation_language(messages: list[ContextMessage]) -> str:
    """The language of the conversation's prompts taken together, so that one prompt in the
    other script does not flip it: Chinese when their CJK characters (two to a word) outweigh
    their Latin words, English when the words do; Chinese when there is no prompt."""
    said = " ".join(m.content for m in messages if isinstance(m, UserMessage)).strip()
    return text_language(said) if said else "zh"


def text_language(text: str) -> str:
    text = COMMAND_WORD.sub(" ", text)  # "/draw" says nothing of the language
    cjk = len(CJK.findall(text))
    latin = len(LATIN_WORD.findall(text))
    return "en" if cjk == 0 or latin > cjk / 2 else "zh"
