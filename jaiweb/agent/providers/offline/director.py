"""Plans the offline director's reply: prompt and conversation in, narration and tool calls out.

No network, no randomness, no clock: the same messages and tools give the same events.
It speaks only through a labelled narration and through the studio's tools, and never
calls a tool that is not in the ``tools`` list it is given (it says so instead). What it
understands is documented for users in ``docs/DIRECTOR.md``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from jaiweb.agent.providers.base import StreamEnd, StreamEvent, TextDelta, ToolCallDelta, ToolSpec
from jaiweb.agent.providers.offline.grammar import COMMAND_LINE, is_command_line, parse_state
from jaiweb.agent.providers.offline.keywords import DEFAULT_RULE, RULES, character_in
from jaiweb.agent.providers.offline.narration import (
    CJK,
    LABEL_EN,
    LABEL_ZH,
    SENTENCE_ENDS,
    TEXT,
    short,
)
from jaiweb.agent.providers.offline.summary import calls_by_id, summarize
from journal.entries import (
    AssistantMessage,
    ContextMessage,
    SummaryMessage,
    ToolResultMessage,
    Usage,
    UserMessage,
)

SCENE_LIMIT = 200
CHUNK = 3  # characters per TextDelta

SET_STATE = "set_character_state"
GENERATE = "generate_image"
PUBLISH = "publish_panel"
LIST = "list_panels"
IMAGE_IN_SUMMARY = re.compile(r"img_[A-Za-z0-9_-]+")


@dataclass
class Plan:
    """What one reply will say and call."""

    lang: str
    lines: list[str] = field(default_factory=list)
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


class OfflineDirector:
    """The ``Provider`` used when no model is configured (see ``docs/DIRECTOR.md``)."""

    name = "offline-director"
    offline = True

    def stream(
        self, messages: list[ContextMessage], tools: list[ToolSpec]
    ) -> Iterator[StreamEvent]:
        offered = {tool.name for tool in tools}
        last = messages[-1] if messages else None
        if isinstance(last, UserMessage):
            plan = _plan_prompt(last.content, messages[:-1], offered)
        elif isinstance(last, ToolResultMessage):
            plan = _plan_closing(messages)
        else:
            plan = Plan(_language_of(messages))
            plan.lines.append(TEXT[plan.lang]["idle"])
        yield from _events(plan, messages)

    def summarize(self, messages: list[ContextMessage]) -> str:
        return summarize(messages)


# --- a new prompt ------------------------------------------------------------------------


def _plan_prompt(text: str, earlier: list[ContextMessage], offered: set[str]) -> Plan:
    if not text.strip():  # no language of its own: the conversation's
        plan = Plan(_language_of(earlier))
        plan.lines.append(TEXT[plan.lang]["empty"])
        return plan
    plan = Plan("zh" if CJK.search(text) else "en")
    lines = text.splitlines()
    if any(is_command_line(line) for line in lines):
        _plan_commands(plan, lines, earlier, offered)
    else:
        _plan_keywords(plan, text, earlier, offered)
    return plan


def _plan_commands(
    plan: Plan, lines: list[str], earlier: list[ContextMessage], offered: set[str]
) -> None:
    words = TEXT[plan.lang]
    scene_text = " ".join(
        line.strip() for line in lines if line.strip() and not is_command_line(line)
    )
    for line in lines:
        match = COMMAND_LINE.match(line)
        if not match:
            continue
        command, rest = match.group(1).lower(), match.group(2)
        if command == "state":
            character, fields = parse_state(rest)
            if not character:
                plan.lines.append(words["state_no_char"])
            elif not fields:
                plan.lines.append(words["state_no_fields"].format(c=character))
            else:
                _add_state(plan, character, fields, offered)
        elif command == "draw":
            scene = rest.strip() or scene_text
            if scene:
                _add_draw(plan, scene, offered)
            else:
                plan.lines.append(words["draw_empty"])
        elif command == "publish":
            _add_publish(plan, rest.strip(), earlier, offered)
        elif command == "panels":
            _add_call(plan, LIST, {}, words["panels"], offered)
        elif command == "say":
            if rest.strip():
                plan.lines.append(rest.strip())
        else:
            plan.lines.append(words["unknown"].format(cmd=match.group(1)))


def _plan_keywords(plan: Plan, text: str, earlier: list[ContextMessage], offered: set[str]) -> None:
    folded = text.casefold()
    rule = next((r for r in RULES if r.matches(folded)), DEFAULT_RULE)
    character = character_in(text)
    intro = rule.intro_zh if plan.lang == "zh" else rule.intro_en
    if intro:
        plan.lines.append(intro.format(c=character))
    for action in rule.actions:
        if action == "state":
            _add_state(plan, character, dict(rule.state), offered)
        elif action == "draw":
            _add_draw(plan, text, offered)
        elif action == "publish":
            _add_publish(plan, "", earlier, offered)
        elif action == "panels":
            _add_call(plan, LIST, {}, TEXT[plan.lang]["panels"], offered)


def _add_call(plan: Plan, tool: str, args: dict[str, Any], line: str, offered: set[str]) -> None:
    if tool in offered:
        plan.lines.append(line)
        plan.calls.append((tool, args))
    else:
        plan.lines.append(TEXT[plan.lang]["missing_tool"].format(tool=tool))


def _add_state(plan: Plan, character: str, fields: dict[str, str], offered: set[str]) -> None:
    words = TEXT[plan.lang]
    shown = words["sep"].join(
        words["field"].format(k=words["keys"][k], v=v) for k, v in fields.items()
    )
    line = words["state"].format(c=character, fields=shown)
    _add_call(plan, SET_STATE, {"character": character, **fields}, line, offered)


def _add_draw(plan: Plan, scene: str, offered: set[str]) -> None:
    scene = scene.strip()[:SCENE_LIMIT]
    line = TEXT[plan.lang]["draw"].format(scene=short(scene, 40))
    _add_call(plan, GENERATE, {"prompt": scene}, line, offered)


def _add_publish(
    plan: Plan, caption: str, earlier: list[ContextMessage], offered: set[str]
) -> None:
    words = TEXT[plan.lang]
    if any(name == GENERATE for name, _ in plan.calls):
        plan.lines.append(words["deferred"])
        return
    latest = _latest_image(earlier)
    if latest is None:
        plan.lines.append(words["no_image"])
        return
    image_id, prompt = latest
    caption = (caption or short(prompt, 100) or words["caption"])[:SCENE_LIMIT]
    line = words["publish"].format(image=image_id, caption=short(caption, 40))
    _add_call(plan, PUBLISH, {"image_id": image_id, "caption": caption}, line, offered)


def _latest_image(messages: list[ContextMessage]) -> tuple[str, str] | None:
    """The last successful result's image id (and its prompt), else one a summary names."""
    calls = calls_by_id(messages)
    for message in reversed(messages):
        if isinstance(message, ToolResultMessage) and not message.is_error:
            image_id = message.details.get("image_id")
            if isinstance(image_id, str) and image_id:
                call = calls.get(message.tool_call_id)
                prompt = call.arguments.get("prompt", "") if call else ""
                return image_id, prompt if isinstance(prompt, str) else ""
    for message in reversed(messages):
        if isinstance(message, SummaryMessage):
            found = IMAGE_IN_SUMMARY.findall(message.content)
            if found:
                return found[-1], ""
    return None


# --- after the tools ran -----------------------------------------------------------------


def _plan_closing(messages: list[ContextMessage]) -> Plan:
    plan = Plan(_language_of(messages))
    words = TEXT[plan.lang]
    start = len(messages)
    while start > 0 and isinstance(messages[start - 1], ToolResultMessage):
        start -= 1
    assistant = messages[start - 1] if start > 0 else None
    calls = (
        {c.id: c for c in assistant.tool_calls} if isinstance(assistant, AssistantMessage) else {}
    )
    failed = False
    for result in messages[start:]:
        if not isinstance(result, ToolResultMessage):
            continue
        call = calls.get(result.tool_call_id)
        args = call.arguments if call else {}
        if result.is_error:
            failed = True
            plan.lines.append(_failure(words, result))
        elif result.tool_name == SET_STATE:
            character = result.details.get("character") or args.get("character") or "?"
            plan.lines.append(words["ok_state"].format(c=character))
        elif result.tool_name == GENERATE:
            image_id = result.details.get("image_id")
            key = "ok_draw" if isinstance(image_id, str) and image_id else "ok_draw_noid"
            plan.lines.append(words[key].format(image=image_id))
        elif result.tool_name == PUBLISH:
            plan.lines.append(words["ok_publish"])
        elif result.tool_name == LIST and isinstance(result.details.get("panels"), list):
            plan.lines.append(words["ok_panels"].format(n=len(result.details["panels"])))
        elif result.tool_name == LIST:
            plan.lines.append(words["ok_panels_text"].format(text=short(result.content, 80)))
        else:
            plan.lines.append(words["ok_other"].format(tool=result.tool_name))
    plan.lines.append(words["no_retry"] if failed else words["done"])
    return plan


def _failure(words: dict[str, Any], result: ToolResultMessage) -> str:
    content = result.content.strip()
    folded = content.casefold()
    tool = result.tool_name
    if folded.startswith("not run on this branch"):
        return words["err_not_run"].format(tool=tool)
    if "denied" in folded or "deny" in folded or "拒绝" in content:
        return words["err_denied"].format(tool=tool)
    if (
        result.details.get("code") == "insufficient_credits"
        or "credit" in folded
        or "点券" in content
    ):
        return words["err_credits"].format(tool=tool, text=short(content, 80))
    return words["err_other"].format(tool=tool, text=short(content, 80) or "?")


# --- streaming ---------------------------------------------------------------------------


def _events(plan: Plan, messages: list[ContextMessage]) -> Iterator[StreamEvent]:
    label = LABEL_ZH if plan.lang == "zh" else LABEL_EN
    end = "。" if plan.lang == "zh" else "."
    lines = [line if line.endswith(SENTENCE_ENDS) else line + end for line in plan.lines]
    text = label + TEXT[plan.lang]["join"].join(lines)
    for i in range(0, len(text), CHUNK):
        yield TextDelta(text[i : i + CHUNK])
    out_chars = len(text)
    for index, (tool, args) in enumerate(plan.calls):
        arguments = json.dumps(args, ensure_ascii=False)
        out_chars += len(tool) + len(arguments)
        for n, piece in enumerate(_pieces(arguments)):
            if n == 0:
                yield ToolCallDelta(index, id=f"call_{index + 1}", name=tool, arguments=piece)
            else:
                yield ToolCallDelta(index, arguments=piece)
    usage = Usage(input_tokens=_tokens(_chars(messages)), output_tokens=_tokens(out_chars))
    yield StreamEnd("tool_use" if plan.calls else "stop", usage)


def _pieces(text: str) -> list[str]:
    """The text in 2–3 pieces (one piece only when it has a single character)."""
    cuts = sorted({c for c in (len(text) // 3, 2 * len(text) // 3) if 0 < c < len(text)})
    if not cuts and len(text) > 1:
        cuts = [1]
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in pairwise(bounds)]


def _chars(messages: list[ContextMessage]) -> int:
    total = 0
    for message in messages:
        total += len(message.content)
        if isinstance(message, AssistantMessage):
            for call in message.tool_calls:
                total += len(call.name) + len(json.dumps(call.arguments, ensure_ascii=False))
    return total


def _tokens(chars: int) -> int:
    return (chars + 1) // 2


# --- helpers -----------------------------------------------------------------------------


def _language_of(messages: list[ContextMessage]) -> str:
    """The language of the latest user prompt (Chinese when there is none)."""
    for message in reversed(messages):
        if isinstance(message, UserMessage):
            return "zh" if CJK.search(message.content) else "en"
    return "zh"
