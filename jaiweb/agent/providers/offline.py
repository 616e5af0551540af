"""The offline director: a deterministic stand-in for the model, so the studio works with no key.

No network, no randomness, no clock: the same messages and tools give the same events. It
speaks only through a labelled narration (``[离线导演] `` in Chinese, ``[offline director] ``
when the prompt has no CJK character) and through the studio's tools. It never calls a tool
that is not in the ``tools`` list it is given; it says so instead.

What it does with the last message
----------------------------------

* a **user** prompt: the tool calls come from the prompt's text, by the GRAMMAR below when
  the prompt has a command line, otherwise by the KEYWORD TABLE. All calls go in one reply
  (ids ``call_1``, ``call_2``, …; stop reason ``tool_use``), after a short narration saying
  what the director will do. A reply without calls stops (``stop``).
* **tool results** (the tools ran): a short closing narration of what happened, no tool
  calls, stop reason ``stop``. A failed result (denied by the user, not enough credits, not
  run on this branch, …) is said plainly and never retried.
* anything else: a one-line narration asking for the next prompt.

GRAMMAR (one command per line, any number of lines, in order)
-------------------------------------------------------------

A line is a command when it starts with ``/`` and a word. Other lines are scene text.

``/state <character> [buff=<text>] [skill=<text>] [mood=<text>]``
    set_character_state. A value runs until the next `` buff=`` / `` skill=`` / `` mood=``
    or the end of the line, so it may hold spaces; a key given twice keeps the last value.
    Without a character, or without any key, nothing is called (the narration says why).
    Lengths are cut to the tool's limits (character 40, buff 80, skill 80, mood 40).
``/draw [scene]``
    generate_image with that scene (at most 200 characters). A bare ``/draw`` draws the
    prompt's scene text (its non-command lines).
``/publish [caption]``
    publish_panel with the most recent image id found in an earlier, successful
    tool result's ``details["image_id"]`` (or, after a compaction, the last ``img_…`` id
    the summary names). The caption defaults to that panel's prompt. With no image yet,
    or when a ``/draw`` of the same prompt comes first (its id is not known yet), no call:
    the narration says so.
``/panels``
    list_panels.
``/say <text>``
    narrate the text; no tool.
any other ``/word``
    ignored, with a note listing the commands.

KEYWORD TABLE (``RULES``; prompts without a command line)
---------------------------------------------------------

Checked in order; the first rule whose keywords the prompt contains (ignoring case), and
none of its exclusions, decides. *C* is the character: one of 猪猪侠, 超人强, 菲菲, 小呆呆,
波比, 迷糊老师 — the one named right before an eating word (吃 / 吞 / eats / ate /
swallows / takes), else the first one named, else 猪猪侠. *scene* is the prompt itself,
trimmed, at most 200 characters.

=========  ==========================================  ===============================
rule       keywords (exclusions)                       tool calls
=========  ==========================================  ===============================
laxative   泻药 · 过期 · 拿错 · laxative                set_character_state(C,
                                                       buff="拉肚子虚脱(捂肚子冒冷汗)",
                                                       skill="无", mood="狼狈"),
                                                       generate_image(scene)
lollipop   棒棒糖 · lollipop (not 过期 · 泻药 · 拿错)   set_character_state(C,
                                                       buff="超级棒棒糖(功夫大师)",
                                                       skill="降龙十巴掌", mood="得意"),
                                                       generate_image(scene)
finishing  降龙十巴掌 · 绝招 · finishing move           generate_image(scene) only: the
                                                       state is whatever the branch says
publish    发布 · publish                              publish_panel, as for /publish
panels     分镜列表 · list panels                       list_panels
(other)    —                                           generate_image(scene)
=========  ==========================================  ===============================

Streaming and usage
-------------------

The narration comes in ``TextDelta`` chunks of 3 characters. Each tool call comes as 2–3
``ToolCallDelta`` pieces of its ``json.dumps(arguments, ensure_ascii=False)`` text; the
first piece carries the index (0, 1, …), the id and the name. ``StreamEnd.usage`` is an
estimate of 1 token per 2 characters, rounded up: input = the characters of every
message (content, plus each tool call's name and JSON arguments), output = the
narration plus each call's name and JSON arguments.

``summarize`` gives ``[离线导演] 剧情摘要：`` followed by the number of user prompts, the
panels drawn (image ids with the start of their prompts; the last 5 shown) and the latest
state set per character. An earlier summary of its own among the messages is carried over.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from jaiweb.agent.providers.base import StreamEnd, StreamEvent, TextDelta, ToolCallDelta, ToolSpec
from journal.entries import (
    AssistantMessage,
    ContextMessage,
    SummaryMessage,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)

LABEL_ZH = "[离线导演] "
LABEL_EN = "[offline director] "
SUMMARY_PREFIX = "[离线导演] 剧情摘要："

CHARACTERS = ("猪猪侠", "超人强", "菲菲", "小呆呆", "波比", "迷糊老师")
DEFAULT_CHARACTER = "猪猪侠"
SCENE_LIMIT = 200
CHUNK = 3  # characters per TextDelta
LIMITS = {"character": 40, "buff": 80, "skill": 80, "mood": 40}
SUMMARY_PANELS = 5
SENTENCE_ENDS = tuple('。！？!?.…」）)"')

SET_STATE = "set_character_state"
GENERATE = "generate_image"
PUBLISH = "publish_panel"
LIST = "list_panels"


@dataclass(frozen=True)
class Rule:
    """One row of the keyword table: when it applies, what it calls, how it is announced."""

    name: str
    keywords: tuple[str, ...]
    excludes: tuple[str, ...] = ()
    state: tuple[tuple[str, str], ...] = ()  # set_character_state fields, in order
    actions: tuple[str, ...] = ("draw",)  # "state" | "draw" | "publish" | "panels"
    intro_zh: str = ""  # {c}: the character
    intro_en: str = ""

    def matches(self, folded: str) -> bool:
        return any(k in folded for k in self.keywords) and not any(
            x in folded for x in self.excludes
        )


RULES: tuple[Rule, ...] = (
    Rule(
        "laxative",
        ("泻药", "过期", "拿错", "laxative"),
        state=(("buff", "拉肚子虚脱(捂肚子冒冷汗)"), ("skill", "无"), ("mood", "狼狈")),
        actions=("state", "draw"),
        intro_zh="糟糕，{c}吃下的是过期泻药丸：拉肚子虚脱，招式全没了！",
        intro_en="Oops, {c} got an expired laxative pill: weak, sweating, no skill left!",
    ),
    Rule(
        "lollipop",
        ("棒棒糖", "lollipop"),
        excludes=("过期", "泻药", "拿错"),
        state=(("buff", "超级棒棒糖(功夫大师)"), ("skill", "降龙十巴掌"), ("mood", "得意")),
        actions=("state", "draw"),
        intro_zh="{c}吃下超级棒棒糖，变身功夫大师，学会了降龙十巴掌！",
        intro_en="{c} eats the super lollipop and becomes a kung-fu master (降龙十巴掌)!",
    ),
    Rule(
        "finishing",
        ("降龙十巴掌", "绝招", "finishing move"),
        actions=("draw",),
        intro_zh="绝招时刻！角色就按这条分支上现在的状态来画，不改状态。",
        intro_en="Finishing move! The characters are drawn as this branch says; no state change.",
    ),
    Rule("publish", ("发布", "publish"), actions=("publish",)),
    Rule("panels", ("分镜列表", "list panels"), actions=("panels",)),
)
DEFAULT_RULE = Rule("scene", (), actions=("draw",))

COMMAND_LINE = re.compile(r"^\s*/([A-Za-z]+)(?=\s|$)(.*)$")
COMMANDS = ("state", "draw", "publish", "panels", "say")
STATE_KEY = re.compile(r"\s(buff|skill|mood)=", re.IGNORECASE)
CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]")
_NAMES = "|".join(CHARACTERS)
EATER = re.compile(
    rf"({_NAMES})(?:[^\s，。！？、,.!?；;：:]{{0,2}}?[吃吞]"
    r"|\s*(?:eats|ate|eat|swallows|swallowed|takes|took)\b)",
    re.IGNORECASE,
)
IMAGE_IN_SUMMARY = re.compile(r"img_[A-Za-z0-9_-]+")

# Phrases, by language.
TEXT = {
    "zh": {
        "state": "更新{c}的状态：{fields}。",
        "field": "{k}「{v}」",
        "sep": "、",
        "keys": {"buff": "buff", "skill": "招式", "mood": "心情"},
        "draw": "画一格分镜：「{scene}」。",
        "publish": "把分镜 {image} 发布到剧集，配文「{caption}」。",
        "no_image": "还没有可以发布的分镜，先画一格吧。",
        "deferred": "新的这一格还没画好，画完后再发 /publish 发布。",
        "panels": "先看看这条分支上已经画了哪些分镜。",
        "missing_tool": "这里没有提供 {tool} 工具，这一步跳过。",
        "state_no_char": "/state 需要角色名，例如：/state 猪猪侠 buff=… skill=… mood=…。",
        "state_no_fields": "/state {c} 没有给出 buff/skill/mood，什么也不改。",
        "draw_empty": "/draw 后面要写场景。",
        "unknown": "不认识的命令 /{cmd}，已忽略（可用：/state /draw /publish /panels /say）。",
        "empty": "提示是空的，我没什么可画的。",
        "idle": "等你的下一条指令。",
        "caption": "新的一格分镜",
        "join": "",
        # closing narration
        "ok_state": "{c}的新状态已记下。",
        "ok_draw": "分镜画好了（{image}）。",
        "ok_draw_noid": "分镜画好了。",
        "ok_publish": "分镜已发布到剧集。",
        "ok_panels": "这条分支上共有 {n} 格分镜。",
        "ok_panels_text": "这条分支上的分镜：{text}。",
        "ok_other": "{tool} 完成了。",
        "err_denied": "你拒绝了这一步（{tool}），所以没有执行。",
        "err_credits": "点券不够，{tool} 没有执行：{text}。",
        "err_not_run": "{tool} 没有在这条分支上执行。",
        "err_other": "{tool} 出错了：{text}。",
        "no_retry": "我不会自动重试；需要的话请再下指令。",
        "done": "这一步完成了，接下来画什么？",
    },
    "en": {
        "state": "Setting {c}'s state: {fields}.",
        "field": '{k} "{v}"',
        "sep": ", ",
        "keys": {"buff": "buff", "skill": "skill", "mood": "mood"},
        "draw": 'Drawing a panel: "{scene}".',
        "publish": 'Publishing panel {image} with the caption "{caption}".',
        "no_image": "There is no panel to publish yet: draw one first.",
        "deferred": "The new panel is not drawn yet: send /publish once it is.",
        "panels": "Checking the panels on this branch.",
        "missing_tool": "The {tool} tool is not available here, so I skip that step.",
        "state_no_char": "/state needs a character, e.g. /state 猪猪侠 buff=… skill=… mood=….",
        "state_no_fields": "/state {c} gives no buff/skill/mood: nothing to change.",
        "draw_empty": "/draw needs a scene.",
        "unknown": "Unknown command /{cmd}, ignored (try /state /draw /publish /panels /say).",
        "empty": "The prompt is empty: nothing to draw.",
        "idle": "Waiting for your next prompt.",
        "caption": "A new panel",
        "join": " ",
        "ok_state": "{c}'s new state is set.",
        "ok_draw": "The panel is drawn ({image}).",
        "ok_draw_noid": "The panel is drawn.",
        "ok_publish": "The panel is published to the episode.",
        "ok_panels": "This branch has {n} panel(s).",
        "ok_panels_text": "Panels on this branch: {text}.",
        "ok_other": "{tool} is done.",
        "err_denied": "You denied this step ({tool}), so it did not run.",
        "err_credits": "Not enough credits: {tool} did not run: {text}.",
        "err_not_run": "{tool} did not run on this branch.",
        "err_other": "{tool} failed: {text}.",
        "no_retry": "I will not retry by myself; tell me if you want to try again.",
        "done": "Done. What next?",
    },
}


@dataclass
class Plan:
    """What one reply will say and call."""

    lang: str
    lines: list[str] = field(default_factory=list)
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


class OfflineDirector:
    """The ``Provider`` used when no model is configured (see the module docstring)."""

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
        tally = Tally()
        for message in messages:
            if isinstance(message, SummaryMessage):
                tally.carry_over(message.content)
            elif isinstance(message, UserMessage):
                tally.prompts += 1
        calls = _calls_by_id(messages)
        for message in messages:
            if not isinstance(message, ToolResultMessage) or message.is_error:
                continue
            call = calls.get(message.tool_call_id)
            args = call.arguments if call else {}
            if message.tool_name == GENERATE and isinstance(message.details.get("image_id"), str):
                tally.add_panel(message.details["image_id"], str(args.get("prompt", "")))
            elif message.tool_name == SET_STATE:
                character = message.details.get("character") or args.get("character")
                fields = message.details.get("state")
                if isinstance(character, str) and character:
                    tally.set_state(character, fields if isinstance(fields, dict) else args)
        return tally.text()


# --- a new prompt ------------------------------------------------------------------------


def _plan_prompt(text: str, earlier: list[ContextMessage], offered: set[str]) -> Plan:
    if not text.strip():  # no language of its own: the conversation's
        plan = Plan(_language_of(earlier))
        plan.lines.append(TEXT[plan.lang]["empty"])
        return plan
    plan = Plan("zh" if CJK.search(text) else "en")
    lines = text.splitlines()
    if any(COMMAND_LINE.match(line) for line in lines):
        _plan_commands(plan, lines, earlier, offered)
    else:
        _plan_keywords(plan, text, earlier, offered)
    return plan


def _plan_commands(
    plan: Plan, lines: list[str], earlier: list[ContextMessage], offered: set[str]
) -> None:
    words = TEXT[plan.lang]
    scene_text = " ".join(
        line.strip() for line in lines if line.strip() and not COMMAND_LINE.match(line)
    )
    for line in lines:
        match = COMMAND_LINE.match(line)
        if not match:
            continue
        command, rest = match.group(1).lower(), match.group(2)
        if command == "state":
            character, fields = _parse_state(rest)
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
    character = _character_in(text)
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


def _parse_state(rest: str) -> tuple[str, dict[str, str]]:
    """``<character> buff=… skill=… mood=…``: each value runs until the next key or the end."""
    rest = " " + rest
    keys = list(STATE_KEY.finditer(rest))
    end = keys[0].start() if keys else len(rest)
    character = rest[:end].strip()[: LIMITS["character"]]
    fields: dict[str, str] = {}
    for i, key in enumerate(keys):
        stop = keys[i + 1].start() if i + 1 < len(keys) else len(rest)
        name = key.group(1).lower()
        fields.pop(name, None)  # a repeated key moves to where it was last given
        fields[name] = rest[key.end() : stop].strip()[: LIMITS[name]]
    return character, {k: fields[k] for k in ("buff", "skill", "mood") if k in fields}


def _character_in(text: str) -> str:
    eater = EATER.search(text)
    if eater:
        return eater.group(1)
    named = [(text.find(name), name) for name in CHARACTERS if name in text]
    return min(named)[1] if named else DEFAULT_CHARACTER


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
    line = TEXT[plan.lang]["draw"].format(scene=_short(scene, 40))
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
    caption = (caption or _short(prompt, 100) or words["caption"])[:SCENE_LIMIT]
    line = words["publish"].format(image=image_id, caption=_short(caption, 40))
    _add_call(plan, PUBLISH, {"image_id": image_id, "caption": caption}, line, offered)


def _latest_image(messages: list[ContextMessage]) -> tuple[str, str] | None:
    """The last successful result's image id (and its prompt), else one a summary names."""
    calls = _calls_by_id(messages)
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
            plan.lines.append(words["ok_panels_text"].format(text=_short(result.content, 80)))
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
        return words["err_credits"].format(tool=tool, text=_short(content, 80))
    return words["err_other"].format(tool=tool, text=_short(content, 80) or "?")


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


def _calls_by_id(messages: list[ContextMessage]) -> dict[str, ToolCall]:
    calls: dict[str, ToolCall] = {}
    for message in messages:
        if isinstance(message, AssistantMessage):
            for call in message.tool_calls:
                calls[call.id] = call
    return calls


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --- summaries ---------------------------------------------------------------------------

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
            f"{_clean(image)}「{_short(_clean(prompt), 16)}」" for image, prompt in self.recent
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
