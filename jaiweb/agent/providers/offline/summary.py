"""Summarizes a conversation for a compaction entry: prompts, panels, the latest states.

``[离线导演] 剧情摘要：`` followed by the number of user prompts, the panels drawn (image
ids with the start of their prompts; the last few shown) and the latest state set per
character. An earlier summary of this director's among the messages is carried over.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from jaiweb.agent.providers.offline.narration import short
from journal.entries import (
    AssistantMessage,
    ContextMessage,
    SummaryMessage,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

SUMMARY_PREFIX = "[离线导演] 剧情摘要："
SUMMARY_PANELS = 5
SET_STATE = "set_character_state"
GENERATE = "generate_image"
IMAGE_IN_SUMMARY = re.compile(r"img_[A-Za-z0-9_-]+")


def summarize(messages: list[ContextMessage]) -> str:
    tally = Tally()
    for message in messages:
        if isinstance(message, SummaryMessage):
            tally.carry_over(message.content)
        elif isinstance(message, UserMessage):
            tally.prompts += 1
    for message, call in results_with_calls(messages):
        if message.is_error:
            continue
        args = call.arguments if call else {}
        if message.tool_name == GENERATE and isinstance(message.details.get("image_id"), str):
            tally.add_panel(message.details["image_id"], str(args.get("prompt", "")))
        elif message.tool_name == SET_STATE:
            character = message.details.get("character") or args.get("character")
            fields = message.details.get("state")
            if isinstance(character, str) and character:
                tally.set_state(character, fields if isinstance(fields, dict) else args)
    return tally.text()


def results_with_calls(
    messages: list[ContextMessage],
) -> Iterator[tuple[ToolResultMessage, ToolCall | None]]:
    """Each tool result with the call it answers. Call ids are unique within one operation
    only (every reply may have a ``call_1``), so a result answers the latest call with its
    id before it, never a later one."""
    calls: dict[str, ToolCall] = {}
    for message in messages:
        if isinstance(message, AssistantMessage):
            for call in message.tool_calls:
                calls[call.id] = call
        elif isinstance(message, ToolResultMessage):
            yield message, calls.get(message.tool_call_id)


_DELIMITERS = str.maketrans({c: " " for c in "「」（）；，、=："})
SUMMARY_PROMPTS = re.compile(r"用户提示 (\d+) 条")
SUMMARY_PANEL_COUNT = re.compile(r"分镜 (\d+) 格")
SUMMARY_PANEL = re.compile(r"([A-Za-z0-9_-]+)「([^「」]*)」")
SUMMARY_STATE = re.compile(r"([^、（）：；]+)（([^（）]*)）")


def _clean(text: str) -> str:
    return " ".join(text.translate(_DELIMITERS).split())


@dataclass
class Tally:
    """What a summary says: prompts, panels (the last few named), the latest states."""

    prompts: int = 0
    panels: int = 0
    recent: list[tuple[str, str]] = field(default_factory=list)
    states: dict[str, dict[str, str]] = field(default_factory=dict)

    def add_panel(self, image_id: str, prompt: str) -> None:
        self.panels += 1
        self.recent = [*self.recent, (image_id, prompt)][-SUMMARY_PANELS:]

    def set_state(self, character: str, fields: dict[str, Any]) -> None:
        current = self.states.setdefault(character, {})
        for key in ("buff", "skill", "mood"):
            if isinstance(fields.get(key), str):
                current[key] = fields[key]

    def text(self) -> str:
        parts = [f"用户提示 {self.prompts} 条"]
        shown = "、".join(
            f"{_clean(image)}「{short(_clean(prompt), 16)}」" for image, prompt in self.recent
        )
        parts.append(f"分镜 {self.panels} 格" + (f"：{shown}" if shown else ""))
        if self.states:
            people = "、".join(
                f"{_clean(name)}（"
                + "，".join(f"{k}={_clean(v)}" for k, v in fields.items())
                + "）"
                for name, fields in self.states.items()
            )
            parts.append(f"角色状态：{people}")
        return SUMMARY_PREFIX + "；".join(parts) + "。"

    def carry_over(self, summary: str) -> None:
        """Fold an earlier summary of this director's into the tally (others are ignored)."""
        if not summary.startswith(SUMMARY_PREFIX):
            return
        body = summary[len(SUMMARY_PREFIX) :].rstrip("。")
        found = SUMMARY_PROMPTS.search(body)
        self.prompts += int(found.group(1)) if found else 0
        for section in body.split("；"):
            count = SUMMARY_PANEL_COUNT.match(section)
            if count:
                listed = [(m.group(1), m.group(2)) for m in SUMMARY_PANEL.finditer(section)]
                self.panels += int(count.group(1))
                self.recent = [*self.recent, *listed][-SUMMARY_PANELS:]
            elif section.startswith("角色状态："):
                for m in SUMMARY_STATE.finditer(section[len("角色状态：") :]):
                    pairs = (pair.partition("=") for pair in m.group(2).split("，"))
                    self.set_state(m.group(1).strip(), {k: v for k, _, v in pairs})
