"""Plans the offline director's reply: prompt and conversation in, narration and tool calls out.

No network, no randomness, no clock: the same messages, tools, language and state give
the same events. It speaks only through a labelled narration and through the studio's
tools, never calls a tool that is not in the ``tools`` list it is given (it says so
instead), and says what a step costs before the step's approval is asked. What it
understands is documented for users in ``docs/DIRECTOR.md``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from jaiweb.agent.providers.base import StreamEnd, StreamEvent, TextDelta, ToolCallDelta, ToolSpec
from jaiweb.agent.providers.offline import grammar, keywords, variants
from jaiweb.agent.providers.offline.limits import CAPTION_LIMIT, FIELD_LIMITS, PROMPT_LIMIT
from jaiweb.agent.providers.offline.memory import (
    Memory,
    Panel,
    conversation_language,
    remember,
)
from jaiweb.agent.providers.offline.narration import (
    DIALOGUE,
    LABELS,
    SENTENCE_ENDS,
    STORY,
    name_in,
    short,
    tool_label,
    words,
)
from jaiweb.agent.providers.offline.summary import GENERATE, SET_STATE, summarize
from jaiweb.render.panel import vocabulary
from jaiweb.render.panel.script import compose, parse
from jaiweb.render.services import PANEL_COST
from journal.cast import Ambiguous, has_pronoun
from journal.entries import (
    AssistantMessage,
    ContextMessage,
    ToolResultMessage,
    Usage,
    UserMessage,
)

PUBLISH = "publish_panel"
LIST = "list_panels"
CHUNK = 3  # characters per TextDelta
SCENE_LIMIT = 200  # a scene, in characters (a panel script adds its caption and speech)
SPEECH_LIMIT = 100
NOTHING = ("", "无", "none")
# A character's state before anything happened to it, in the session's language.
DEFAULTS = {
    "zh": {"buff": "无", "skill": "无", "mood": "平静"},
    "en": {"buff": "none", "skill": "none", "mood": "calm"},
}


@dataclass
class Plan:
    """What one reply will say and call."""

    lang: str
    lines: list[str] = field(default_factory=list)
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    @property
    def words(self) -> dict[str, str]:
        return words(self.lang)

    def say(self, key: str, **values: Any) -> None:
        self.lines.append(self.words[key].format(**values))


class OfflineDirector:
    """The ``Provider`` used when no model is configured (see ``docs/DIRECTOR.md``).

    ``language``: the UI language of whoever sent the prompt (``en``, ``zh-hans``, …);
    without it the narration is in the conversation's language. ``app_state``: the app
    state at the leaf (as the journal holds it); without it the director knows only the
    states its own tool results and summaries recorded.
    """

    name = "offline-director"
    offline = True

    def stream(
        self,
        messages: list[ContextMessage],
        tools: list[ToolSpec],
        *,
        language: str | None = None,
        app_state: Mapping[str, Any] | None = None,
    ) -> Iterator[StreamEvent]:
        offered = {tool.name for tool in tools}
        lang = language_for(language, messages)
        last = messages[-1] if messages else None
        if isinstance(last, UserMessage):
            plan = _plan_prompt(last.content, remember(messages[:-1], app_state), offered, lang)
        elif isinstance(last, ToolResultMessage):
            plan = _plan_closing(messages, lang)
        else:
            plan = Plan(lang)
            plan.say("idle")
        yield from _events(plan, messages)

    def summarize(self, messages: list[ContextMessage]) -> str:
        return summarize(messages)


def language_for(language: str | None, messages: list[ContextMessage]) -> str:
    """``zh`` or ``en``: the UI language when given (``zh-hans`` → ``zh``; any language
    but Chinese → ``en``), else the conversation's."""
    if language:
        return "zh" if language.lower().startswith("zh") else "en"
    return conversation_language(messages)


# --- a new prompt ------------------------------------------------------------------------


def _plan_prompt(text: str, memory: Memory, offered: set[str], lang: str) -> Plan:
    plan = Plan(lang)
    if not text.strip():
        plan.say("empty")
        return plan
    count, text = variants.requested(text)  # "draw 3 variants of …", "画3个版本：…"
    if count is not None and not variants.in_range(count):
        plan.lines.append(variants.out_of_range(count, lang))
        return plan
    commands, scene = grammar.parse(text)
    if commands:
        _plan_commands(plan, commands, scene, memory, offered)
    else:
        _plan_keywords(plan, text, memory, offered)
    if count is not None:
        _plan_variants(plan, count)
    _say_costs(plan, memory)
    return plan


def _plan_variants(plan: Plan, count: int) -> None:
    """Each panel the plan draws, drawn as ``count`` variants of one set."""
    if any(name == GENERATE for name, _ in plan.calls):
        plan.calls = variants.expand(plan.calls, count)
        plan.lines.append(variants.announce(plan.lang, count))


def _plan_commands(
    plan: Plan,
    commands: list[grammar.Command],
    scene_text: str,
    memory: Memory,
    offered: set[str],
) -> None:
    for command in commands:
        if command.name == "state":
            character, fields = grammar.parse_state(command.rest)
            try:
                character = memory.cast.resolve(character) or character
            except Ambiguous as exc:
                _ask_who(plan, exc)
                continue
            if not character:
                plan.say("state_no_char")
            elif not fields:
                plan.say("state_no_fields", c=character)
            else:
                _add_state(plan, character, fields, offered)
        elif command.name == "draw":
            scene = (command.rest or scene_text)[:SCENE_LIMIT].strip()
            if scene:  # the user's own words are the scene and the caption
                who = keywords.read(scene, plan.lang, memory.cast, memory.recent, memory.states)
                # who acts and who it is done to, as far as the user's words say it
                said = [*memory.cast.named(scene), *([who.target] if has_pronoun(scene) else [])]
                actor, target = (n if n in said else "" for n in (who.actor, who.target))
                if who.unsure is None and (actor or target):
                    scene = compose(scene, lang=plan.lang, actor=actor, target=target)
                _add_draw(plan, scene, parse(scene).scene, offered)
            else:
                plan.say("draw_empty")
        elif command.name == "publish":
            _add_publish(plan, command.rest, "", memory, offered)
        elif command.name == "panels":
            _add_call(plan, LIST, {}, plan.words["panels"], offered)
        elif command.name == "say":
            if command.rest:
                plan.lines.append(command.rest)
        elif command.name == "help":
            plan.say("hello")
            plan.say("help", cost=PANEL_COST)
        else:
            plan.say("unknown", cmd=command.word)


def _plan_keywords(plan: Plan, text: str, memory: Memory, offered: set[str]) -> None:
    reading = keywords.read(text, plan.lang, memory.cast, memory.recent, memory.states)
    rule, c = reading.rule, reading.character
    story = STORY[plan.lang].get(rule.name)
    if reading.unsure is not None and {"state", "mood", "draw"} & set(rule.actions):
        _ask_who(plan, reading.unsure)
        return
    for action in rule.actions:
        if action == "undo":
            _say_undo(plan, memory)
        elif action == "help":
            plan.say("hello")
            plan.say("help", cost=PANEL_COST)
        elif action == "publish":
            _add_publish(plan, "", text, memory, offered)
        elif action == "panels":
            _add_call(plan, LIST, {}, plan.words["panels"], offered)
        elif action == "answer_state":
            _say_states(plan, text, memory)
        elif action == "state":
            if story:
                plan.lines.append(story["intro"].format(c=name_in(c, plan.lang)))
            _add_state(plan, c, dict(keywords.STATES[memory.state_language][rule.state]), offered)
        elif action == "mood":
            mood = (reading.mood or "")[: FIELD_LIMITS["mood"]]
            line = plan.words["mood"].format(c=name_in(c, plan.lang), mood=mood)
            _add_call(plan, SET_STATE, {"character": c, "mood": mood}, line, offered)
            if reading.draws_too and reading.scene:
                _draw_scene(plan, reading, memory, offered, mood=mood)
            else:
                shown = name_in(c, plan.lang, panel=True)
                scene = plan.words["mood_scene"].format(c=shown, mood=mood)
                plan.say("mood_offer", scene=scene)
        elif action == "draw":
            if story:
                _draw_story(plan, reading, story, text, memory, offered)
            else:
                _draw_scene(plan, reading, memory, offered)
        elif action == "answer":
            plan.say("answer")
            plan.say("help", cost=PANEL_COST)
        elif action == "offer":
            plan.say("offer", cost=PANEL_COST, text=" ".join(text.split())[:SCENE_LIMIT])


def _ask_who(plan: Plan, unsure: Ambiguous) -> None:
    """A mention that could be two characters: ask which, and do nothing yet."""
    names = plan.words["or"].join(name_in(n, plan.lang) for n in unsure.names)
    plan.say("ask_who", mention=unsure.mention, names=names)


def _draw_story(
    plan: Plan,
    reading: keywords.Reading,
    story: dict,
    text: str,
    memory: Memory,
    offered: set[str],
) -> None:
    """A panel of one of the story's rules: its caption and speech from the narration."""
    if "intro" in story and "state" not in reading.rule.actions:
        plan.lines.append(story["intro"].format(c=name_in(reading.character, plan.lang)))
    c = reading.character
    o = reading.opponent
    skill = memory.states.get(c, {}).get("skill", "")
    if skill.casefold() in NOTHING:
        skill = "降龙十巴掌" if "降龙十巴掌" in text else story.get("skill", "")
    plain = skill == story.get("skill")  # no skill of its own: "uses the finishing move!"
    key = "caption" + ("_plain" if plain and "caption_plain" in story else "")
    key += "_o" if o and key + "_o" in story else ""
    values = {
        "c": name_in(c, plan.lang, panel=True),
        "o": name_in(o, plan.lang, panel=True) if o else "",
        "skill": skill,
    }
    caption = story[key].format(**values)
    named = memory.cast.named(text)
    speech = []
    for who, line in story["speech"]:
        member = memory.cast.role(who) if who not in ("c", "o") else None
        speaker = c if who == "c" else (o if who == "o" else (member.name if member else ""))
        if speaker and (who in ("c", "o") or (speaker in (*named, o) and speaker != c)):
            speech.append((speaker, line.format(**values)[:SPEECH_LIMIT]))
    scene = (reading.scene or " ".join(text.split()))[:SCENE_LIMIT]
    script = compose(
        scene,
        caption,
        tuple(speech),
        lang=plan.lang,
        actor=reading.actor,
        target=reading.target,
        staging=vocabulary.read(scene),  # the setting, props and actions the user asked for
    )
    _add_draw(plan, script, caption, offered)


def _draw_scene(
    plan: Plan,
    reading: keywords.Reading,
    memory: Memory,
    offered: set[str],
    mood: str | None = None,
) -> None:
    """A panel of the scene the prompt describes; a named character speaks by its mood."""
    scene = reading.scene[:SCENE_LIMIT]
    if keywords.is_trivial_scene(scene):
        plan.say("ask_scene")
        return
    if reading.rule.name == "scene":
        plan.say("scene_guess")
    c = reading.character
    speech: tuple[tuple[str, str], ...] = ()
    if c in memory.cast.named(scene):
        state = memory.states.get(c, {})
        kind = keywords.mood_kind(mood or state.get("mood", ""))
        if any(w in state.get("buff", "") for w in ("拉肚子", "虚脱")):
            kind = "sick"
        line = DIALOGUE[plan.lang].get(kind or "")
        if line:
            speech = ((c, line),)
    script = compose(
        scene,
        "",
        speech,
        lang=plan.lang,
        actor=reading.actor,
        target=reading.target,
        staging=vocabulary.read(scene),
    )
    _add_draw(plan, script, scene, offered)


def _say_states(plan: Plan, text: str, memory: Memory) -> None:
    """Answer "what is X's state?" from the state the director knows (no tool, no cost)."""
    asked = memory.cast.named(text) + [n for n in memory.states if n and n in text]
    asked = list(dict.fromkeys(asked))
    if not asked and memory.last_character and keywords.mentions_someone(text):
        asked = [memory.last_character]
    if not asked:
        asked = list(memory.states)[:4]
    if not asked:
        plan.say("state_nobody")
    source = plan.words["source_app" if memory.from_app_state else "source_conv"]
    defaults = DEFAULTS[memory.state_language]
    for name in asked:
        state = memory.states.get(name)
        shown = name_in(name, plan.lang)
        if state is None:
            plan.say("state_unknown", c=shown)
            continue
        plan.say(
            "state_answer",
            c=shown,
            source=source,
            buff=state.get("buff", defaults["buff"]),
            skill=state.get("skill", defaults["skill"]),
            mood=state.get("mood", defaults["mood"]),
        )
    plan.say("state_how")


def _say_undo(plan: Plan, memory: Memory) -> None:
    """How to take the last panel back: the node to continue from, in words (a rewind is
    the user's click, never the director's)."""
    if not memory.panels:
        plan.say("undo_none")
        return
    last = memory.panels[-1]
    panel = short(last.caption, 40)
    if last.before is not None:
        plan.say("undo_last", panel=panel, before=short(last.before, 40))
    elif memory.summarized:
        plan.say("undo_summarized", panel=panel, turn=short(last.turn, 40))
    else:
        plan.say("undo_first", panel=panel, turn=short(last.turn, 40))
    plan.say("undo_after")


def _add_call(plan: Plan, tool: str, args: dict[str, Any], line: str, offered: set[str]) -> None:
    if tool in offered:
        if line:
            plan.lines.append(line)
        plan.calls.append((tool, args))
    else:
        plan.say("missing_tool", tool=tool_label(tool, plan.lang))


def _add_state(plan: Plan, character: str, fields: dict[str, str], offered: set[str]) -> None:
    w = plan.words
    shown = w["sep"].join(w["field"].format(k=w["key_" + k], v=v) for k, v in fields.items())
    line = w["state"].format(c=name_in(character, plan.lang), fields=shown)
    _add_call(plan, SET_STATE, {"character": character, **fields}, line, offered)


def _add_draw(plan: Plan, prompt: str, caption: str, offered: set[str]) -> None:
    line = plan.words["draw"].format(caption=short(caption, 60))
    _add_call(plan, GENERATE, {"prompt": prompt[:PROMPT_LIMIT]}, line, offered)


def _add_publish(plan: Plan, caption: str, hint: str, memory: Memory, offered: set[str]) -> None:
    if any(name == GENERATE for name, _ in plan.calls):
        plan.say("deferred")
        return
    panel = _pick_panel(hint, memory)
    if panel is None:
        plan.say("no_image")
        return
    caption = (caption or panel.caption or plan.words["caption"])[:CAPTION_LIMIT]
    key = "publish_same" if caption == panel.caption else "publish"
    line = plan.words[key].format(
        panel=short(panel.caption or plan.words["caption"], 40), caption=short(caption, 60)
    )
    before = len(plan.calls)
    _add_call(plan, PUBLISH, {"image_id": panel.image_id, "caption": caption}, line, offered)
    if len(plan.calls) > before:
        plan.say("publish_free")


PANEL_NUMBER = re.compile(
    r"(?:panel|no\.?|#)\s*(\d+)|第\s*(\d+)\s*格|(\d+)(?:st|nd|rd|th)?\s+panel", re.I
)


def _pick_panel(hint: str, memory: Memory) -> Panel | None:
    """The panel a publish prompt means: the one it numbers ("panel 2", "第2格"), else the
    latest one drawn for the story beat it names ("the finishing move panel"), else the
    latest one (or, after a compaction, the last one its summary names)."""
    panels = memory.panels
    if not panels:
        return Panel(memory.summary_image, "", "", None) if memory.summary_image else None
    number = PANEL_NUMBER.search(hint)
    if number:
        n = int(next(g for g in number.groups() if g))
        if 1 <= n <= len(panels):
            return panels[n - 1]
    for rule in keywords.RULES:
        if rule.name in STORY["zh"] and keywords.has_words(hint, rule.words):
            for panel in reversed(panels):
                if keywords.has_words(f"{panel.prompt} {panel.turn}", rule.words):
                    return panel
    return panels[-1]


def _say_costs(plan: Plan, memory: Memory) -> None:
    """Whatever will spend credits says so, with the cost, before the approval is asked."""
    draws = sum(1 for name, _ in plan.calls if name == GENERATE)
    if not draws:
        return
    if draws == 1:
        plan.say("cost_one", cost=PANEL_COST)
    else:
        plan.say("cost_many", n=draws, cost=draws * PANEL_COST)
    if memory.permission_mode == "ask":
        plan.say("cost_ask")
    elif memory.permission_mode == "auto":
        plan.say("cost_auto")


# --- after the tools ran -----------------------------------------------------------------


def _plan_closing(messages: list[ContextMessage], lang: str) -> Plan:
    plan = Plan(lang)
    w = plan.words
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
            plan.lines.append(_failure(plan, result))
        elif result.tool_name == SET_STATE:
            character = result.details.get("character") or args.get("character") or "?"
            plan.say("ok_state", c=name_in(str(character), lang))
        elif result.tool_name == GENERATE:
            caption = parse(str(args.get("prompt", ""))).shown_caption
            plan.say("ok_draw", caption=short(caption, 60) or w["caption"])
        elif result.tool_name == PUBLISH:
            plan.say("ok_publish")
        elif result.tool_name == LIST and isinstance(result.details.get("panels"), list):
            panels = [p for p in result.details["panels"] if isinstance(p, dict)]
            if not panels:
                plan.say("ok_panels_none")
            else:
                items = w["list_sep"].join(
                    w["list_item"].format(
                        n=i, caption=short(parse(str(p.get("prompt", ""))).shown_caption, 24)
                    )
                    for i, p in enumerate(panels, 1)
                )
                plan.say("ok_panels", n=len(panels), list=items)
        elif result.tool_name == LIST:
            plan.say("ok_panels_text", text=short(result.content, 80))
        else:
            plan.say("ok_other", tool=tool_label(result.tool_name, lang))
    plan.say("no_retry" if failed else "done")
    return plan


def _failure(plan: Plan, result: ToolResultMessage) -> str:
    w = plan.words
    content = result.content.strip()
    folded = content.casefold()
    tool = tool_label(result.tool_name, plan.lang)
    if folded.startswith("not run on this branch"):
        return w["err_not_run"].format(tool=tool)
    if "denied" in folded or "deny" in folded or "拒绝" in content:
        return w["err_denied"].format(tool=tool)
    if (
        result.details.get("code") == "insufficient_credits"
        or "credit" in folded
        or "积分" in content
        or "点券" in content
    ):
        return w["err_credits"].format(tool=tool, text=short(content, 80))
    return w["err_other"].format(tool=tool, text=short(content, 80) or "?")


# --- streaming ---------------------------------------------------------------------------


def _events(plan: Plan, messages: list[ContextMessage]) -> Iterator[StreamEvent]:
    end = "。" if plan.lang == "zh" else "."
    lines = [line if line.endswith(SENTENCE_ENDS) else line + end for line in plan.lines]
    text = LABELS[plan.lang] + plan.words["join"].join(lines)
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
