"""The offline director plays the model through the article's story, deterministically, and
answers chat in words: only a prompt that asks for a panel spends credits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jaiweb.agent.providers.base import (
    Provider,
    StreamEnd,
    TextDelta,
    ToolCallDelta,
    ToolSpec,
    assemble,
)
from jaiweb.agent.providers.offline import RULES, OfflineDirector, grammar
from jaiweb.agent.providers.offline.limits import FIELD_LIMITS
from jaiweb.agent.tools.character import CharacterStateArgs
from jaiweb.render.panel.script import parse
from journal.cast import new_cast
from journal.entries import (
    AssistantMessage,
    SummaryMessage,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from tests.support.stories import FINISHER, LAXATIVE, LOLLIPOP

TOOL_NAMES = ("set_character_state", "generate_image", "publish_panel", "list_panels")
TOOLS = [ToolSpec(name, f"the {name} tool", {"type": "object"}) for name in TOOL_NAMES]

KUNG_FU = {
    "character": "猪猪侠",
    "buff": "超级棒棒糖(功夫大师)",
    "skill": "降龙十巴掌",
    "mood": "得意",
}


@pytest.fixture
def director() -> OfflineDirector:
    return OfflineDirector()


def run(director, messages, tools=TOOLS, **context):
    return assemble(director.stream(messages, tools, **context))


def names_of(reply):
    return [call.name for call in reply.tool_calls]


def calls_of(reply):
    return [(call.id, call.name, json.loads(call.arguments)) for call in reply.tool_calls]


def as_assistant(reply) -> AssistantMessage:
    return AssistantMessage(
        content=reply.text,
        tool_calls=[
            ToolCall(id=c.id, name=c.name, arguments=json.loads(c.arguments))
            for c in reply.tool_calls
        ],
        stop_reason=reply.stop_reason,
        usage=reply.usage,
    )


def drawn(call_id: str, image_id: str) -> ToolResultMessage:
    return ToolResultMessage(
        tool_call_id=call_id,
        tool_name="generate_image",
        content="panel rendered",
        details={"image_id": image_id, "cost": 10},
    )


def state_set(call_id: str, state: dict) -> ToolResultMessage:
    character = state["character"]
    fields = {k: v for k, v in state.items() if k != "character"}
    return ToolResultMessage(
        tool_call_id=call_id,
        tool_name="set_character_state",
        content=f"state set — {character}",
        details={"character": character, "state": fields},
    )


def lollipop_turn(director):
    """The article's first round: the prompt, the reply, and both tools' results."""
    prompt = UserMessage(content=LOLLIPOP)
    reply = run(director, [prompt])
    return [prompt, as_assistant(reply), state_set("call_1", KUNG_FU), drawn("call_2", "img_01")]


def closed(director, history):
    """The history with the director's closing words after its tools ran."""
    return [*history, as_assistant(run(director, history))]


def turn(director, history, prompt, *results):
    """One more round: the prompt, the director's reply to it, and the given results."""
    history = [*history, UserMessage(content=prompt)]
    return closed(director, [*history, as_assistant(run(director, history)), *results])


def test_is_a_labelled_offline_provider(director):
    provider: Provider = director  # the protocol is structural
    assert callable(provider.stream) and callable(provider.summarize)
    assert director.name == "offline-director"
    assert director.offline is True


# --- the table of prompts → tools --------------------------------------------------------

# What the history is before the prompt: nothing, or the article's first round (the
# lollipop state set and its panel img_01 drawn).
FRESH, STORY = "fresh", "story"
STATE, DRAW, PUBLISH, LIST = (
    "set_character_state",
    "generate_image",
    "publish_panel",
    "list_panels",
)

TABLE = [
    # chat: answered in words, no tool, nothing charged
    ("Hi! Can you help me make a comic?", FRESH, []),
    ("hi", FRESH, []),
    ("你好", FRESH, []),
    ("你好！你能帮我做一集漫画吗？", FRESH, []),
    ("What's Pig-Man's state?", STORY, []),
    ("猪猪侠现在什么状态？", STORY, []),
    ("What should I draw next?", STORY, []),
    ("How do I publish a panel?", STORY, []),
    ("Undo the last panel", STORY, []),
    ("go back", STORY, []),
    ("撤销上一格", STORY, []),
    ("返回", STORY, []),
    ("Is Pig-Man sad?", STORY, []),
    ("How does Pig-Man feel?", STORY, []),
    ("Can you help me draw a comic?", FRESH, []),  # draw what? it asks
    ("the hero wins", FRESH, []),  # unsure: it offers /draw
    ("画一格", FRESH, []),  # a panel of what? it asks
    # a state change, no render
    ("Make Pig-Man sad", FRESH, [STATE]),
    ("让猪猪侠难过", FRESH, [STATE]),
    ("Can you make Feifei happy?", FRESH, [STATE]),
    # the story's rules, in both languages
    ("The teacher accidentally gives him expired medicine", STORY, [STATE, DRAW]),
    (LAXATIVE, STORY, [STATE, DRAW]),
    (LOLLIPOP, FRESH, [STATE, DRAW]),
    ("He eats a super lollipop before the fight", FRESH, [STATE, DRAW]),
    ("菲菲吃了一根棒棒糖", FRESH, [STATE, DRAW]),
    ("猪猪侠使出最后的大招", STORY, [DRAW]),
    (FINISHER, STORY, [DRAW]),
    ("Time for the finishing move!", STORY, [DRAW]),
    # publish wins over drawing
    ("Publish the finishing move panel to the episode", STORY, [PUBLISH]),
    ("把这一格发布到剧集", STORY, [PUBLISH]),
    # the panel list (a free read)
    ("列出分镜", STORY, [LIST]),
    ("分镜列表", STORY, [LIST]),
    ("list panels please", STORY, [LIST]),
    ("Show me the panels", STORY, [LIST]),
    # drawing asked for, or a scene with the cast in it
    ("Draw a panel: the hero wins the bout with one slap", FRESH, [DRAW]),
    ("Can you draw Pig-Man eating noodles?", FRESH, [DRAW]),
    ("画一格：观众席上的菲菲在欢呼", FRESH, [DRAW]),
    ("下一格：超人强反击", FRESH, [DRAW]),
    ("猪猪侠和超人强在擂台上对视", FRESH, [DRAW]),
    # the grammar, with its Chinese command words
    ("/draw 擂台对决", FRESH, [DRAW]),
    ("/画 擂台对决", FRESH, [DRAW]),
    ("/state 猪猪侠 mood=开心", FRESH, [STATE]),
    ("/状态 猪猪侠 心情=开心", FRESH, [STATE]),
    ("/publish 第一格", STORY, [PUBLISH]),
    ("/发布", STORY, [PUBLISH]),
    ("/panels", STORY, [LIST]),
    ("/分镜", STORY, [LIST]),
    ("/say 好戏开场了", FRESH, []),
    ("/说 好戏开场了", FRESH, []),
    ("/help", FRESH, []),
    ("/帮助", FRESH, []),
    ("/drwa 猪猪侠", FRESH, []),
    ("/state 超人强 mood=生气\n/draw 超人强被一掌拍飞", FRESH, [STATE, DRAW]),
]


@pytest.mark.parametrize(("prompt", "before", "tools"), TABLE)
def test_prompts_to_tools(director, prompt, before, tools):
    history = closed(director, lollipop_turn(director)) if before == STORY else []
    reply = run(director, [*history, UserMessage(content=prompt)])

    assert names_of(reply) == tools
    assert reply.stop_reason == ("tool_use" if tools else "stop")
    # a drawing says what it costs (the narration streams before the call it announces)
    if DRAW in tools:
        assert "10 credits" in reply.text or "10 积分" in reply.text
    assert "img_" not in reply.text  # no internal ids in what the user reads


def test_chat_prompts_never_ask_for_a_paid_panel(director):
    """Every row of the table without a drawing, with or without a story before it."""
    chat = [prompt for prompt, _, tools in TABLE if DRAW not in tools]
    history = closed(director, lollipop_turn(director))
    for prompt in chat:
        for messages in ([UserMessage(content=prompt)], [*history, UserMessage(content=prompt)]):
            assert DRAW not in names_of(run(director, messages)), prompt


def test_greeting_says_what_it_can_do_with_examples(director):
    for prompt, marks in (
        ("Hi! Can you help me make a comic?", ("/draw", "Make Pig-Man sad", "list panels")),
        ("你好", ("/draw", "让猪猪侠难过", "列出分镜")),
    ):
        text = run(director, [UserMessage(content=prompt)]).text
        assert all(mark in text for mark in marks), text


def test_a_question_about_the_state_answers_from_the_branch(director):
    history = closed(director, lollipop_turn(director))
    reply = run(director, [*history, UserMessage(content="What's Pig-Man's state?")])
    assert "超级棒棒糖(功夫大师)" in reply.text and "降龙十巴掌" in reply.text
    assert "得意" in reply.text

    # the caller's app state is the truth (a hand edit the messages never saw included)
    state = {
        "characters": {"猪猪侠": {"buff": "隐身斗篷", "skill": "无", "mood": "害羞"}},
        "permission_mode": "ask",
    }
    reply = run(
        director, [*history, UserMessage(content="What's Pig-Man's state?")], app_state=state
    )
    assert "隐身斗篷" in reply.text and "害羞" in reply.text and "降龙十巴掌" not in reply.text
    assert reply.tool_calls == []


def test_undo_suggests_the_node_to_continue_from(director):
    first = closed(director, lollipop_turn(director))
    second = turn(
        director,
        first,
        LAXATIVE,
        state_set("call_1", {"character": "猪猪侠", "buff": "拉肚子虚脱(捂肚子冒冷汗)"}),
        drawn("call_2", "img_02"),
    )
    for prompt in ("Undo the last panel", "go back"):
        reply = run(director, [*second, UserMessage(content=prompt)], language="en")
        assert reply.tool_calls == []
        assert '"Continue from here"' in reply.text
        assert LOLLIPOP[:20] in reply.text  # the prompt of the turn before the last panel
        assert "Oh no" in reply.text or "糟糕" in reply.text  # which panel it would undo
    reply = run(director, [*second, UserMessage(content="撤销")], language="zh-hans")
    assert "「从这里继续」" in reply.text and LOLLIPOP[:20] in reply.text

    # with one panel only, it was the first turn: continue from that prompt
    reply = run(director, [*first, UserMessage(content="返回")])
    assert "第一轮" in reply.text and reply.tool_calls == []


def test_make_someone_sad_sets_the_mood_and_offers_the_panel(director):
    reply = run(director, [UserMessage(content="Make Pig-Man sad")])
    assert calls_of(reply) == [
        ("call_1", "set_character_state", {"character": "猪猪侠", "mood": "sad"})
    ]
    assert "/draw" in reply.text and "no credits" in reply.text

    reply = run(director, [UserMessage(content="让菲菲很伤心")])
    assert calls_of(reply) == [
        ("call_1", "set_character_state", {"character": "菲菲", "mood": "难过"})
    ]

    reply = run(director, [UserMessage(content="Draw Pig-Man looking sad in the rain")])
    assert names_of(reply) == ["set_character_state", "generate_image"]


def test_english_and_chinese_synonyms_reach_the_same_rule(director):
    history = closed(director, lollipop_turn(director))
    for prompt in ("The teacher accidentally gives him expired medicine", LAXATIVE):
        reply = run(director, [*history, UserMessage(content=prompt)])
        (_, name, state), (_, draw, _) = calls_of(reply)
        assert (name, draw) == ("set_character_state", "generate_image")
        assert state == {
            "character": "猪猪侠",  # the one who took it, not the teacher who gave it
            "buff": "拉肚子虚脱(捂肚子冒冷汗)",
            "skill": "无",
            "mood": "狼狈",
        }


def test_publish_wins_over_drawing_and_picks_the_panel_it_names(director):
    history = closed(director, lollipop_turn(director))
    history = turn(director, history, FINISHER, drawn("call_1", "img_02"))
    history = turn(director, history, "/draw 观众欢呼", drawn("call_1", "img_03"))

    reply = run(
        director,
        [*history, UserMessage(content="Publish the finishing move panel to the episode")],
        language="en",
    )
    assert [(n, a["image_id"]) for _, n, a in calls_of(reply)] == [("publish_panel", "img_02")]
    assert "降龙十巴掌" in calls_of(reply)[0][2]["caption"]  # the panel's own caption
    assert "free" in reply.text  # publishing costs nothing but is asked

    reply = run(director, [*history, UserMessage(content="publish panel 1")])
    assert calls_of(reply)[0][2]["image_id"] == "img_01"
    reply = run(director, [*history, UserMessage(content="发布")])
    assert calls_of(reply)[0][2]["image_id"] == "img_03"


def test_the_narration_follows_the_ui_language(director):
    english_ui = run(director, [UserMessage(content=LOLLIPOP)], language="en")
    assert english_ui.text.startswith("[offline director] ")
    assert "This panel costs 10 credits." in english_ui.text
    assert names_of(english_ui) == ["set_character_state", "generate_image"]
    chinese_ui = run(director, [UserMessage(content="Make Pig-Man sad")], language="zh-hans")
    assert chinese_ui.text.startswith("[离线导演] ")
    assert calls_of(chinese_ui)[0][2]["mood"] == "难过"
    # the panel's caption is in the UI language too
    prompt = calls_of(english_ui)[1][2]["prompt"]
    assert parse(prompt).caption.startswith("Pig-Man eats the super lollipop")

    # without a language: the conversation's, not each prompt's script
    history = [*closed(director, lollipop_turn(director)), UserMessage(content="Make 猪猪侠 sad")]
    assert run(director, history).text.startswith("[离线导演] ")
    reply = run(director, [UserMessage(content="Make 猪猪侠 sad")])
    assert reply.text.startswith("[offline director] ")


def test_the_cost_is_said_before_the_approval_with_the_mode(director):
    ask = {"characters": {}, "permission_mode": "ask"}
    auto = {"characters": {}, "permission_mode": "auto"}
    reply = run(director, [UserMessage(content="/draw 擂台")], language="en", app_state=ask)
    assert "This panel costs 10 credits." in reply.text and "approve" in reply.text
    reply = run(
        director, [UserMessage(content="/draw 一\n/draw 二")], language="en", app_state=auto
    )
    assert "These 2 panels cost 20 credits." in reply.text and "Auto mode" in reply.text
    events = list(director.stream([UserMessage(content="/draw 擂台")], TOOLS))
    first_call = next(i for i, e in enumerate(events) if isinstance(e, ToolCallDelta))
    said = "".join(e.text for e in events[:first_call] if isinstance(e, TextDelta))
    assert "10 积分" in said  # the cost streams before the call that is then approved


def test_the_panel_says_the_directors_words_not_the_instruction(director):
    reply = run(director, [UserMessage(content=LOLLIPOP)])
    script = parse(calls_of(reply)[1][2]["prompt"])
    assert not script.scene.startswith("画一张")  # the instruction is not the scene
    assert script.caption == "猪猪侠吃下超级棒棒糖，变身功夫大师！"
    assert script.speech == (("猪猪侠", "超级棒棒糖，能量满满！"),)

    reply = run(
        director, [UserMessage(content="Draw a panel: the hero wins the bout with one slap")]
    )
    prompt = calls_of(reply)[0][2]["prompt"]
    # the scene in the user's words, then what the vocabulary read in them
    assert prompt == "The hero wins the bout with one slap\nSetting: ring\nActions: punch"

    history = closed(director, lollipop_turn(director))
    reply = run(director, [*history, UserMessage(content=FINISHER)])
    script = parse(calls_of(reply)[0][2]["prompt"])
    assert script.caption == "猪猪侠使出绝招「降龙十巴掌」，一掌拍飞超人强！"
    assert script.speech == (("猪猪侠", "降龙十巴掌！"),)


def test_state_values_are_cut_to_the_tools_own_limits(director):
    limits = {
        name: next(
            m.max_length
            for m in CharacterStateArgs.model_fields[name].metadata
            if getattr(m, "max_length", None)
        )
        for name in ("character", "buff", "skill", "mood")
    }
    assert limits == FIELD_LIMITS
    prompt = f"/state {'猪' * 60} buff={'b' * 99} skill={'s' * 99} mood={'m' * 99}"
    ((_, _, args),) = calls_of(run(director, [UserMessage(content=prompt)]))
    assert {k: len(v) for k, v in args.items()} == limits
    CharacterStateArgs(**args)  # the tool takes what the director sends


# --- the article's story -----------------------------------------------------------------


def test_super_lollipop_makes_a_kung_fu_master_and_draws_the_panel(director):
    reply = run(director, [UserMessage(content=LOLLIPOP)])

    assert reply.complete and reply.stop_reason == "tool_use"
    assert reply.text.startswith("[离线导演] ")
    assert "降龙十巴掌" in reply.text
    (first, second) = calls_of(reply)
    assert first == ("call_1", "set_character_state", KUNG_FU)
    assert second[:2] == ("call_2", "generate_image")
    assert parse(second[2]["prompt"]).scene == LOLLIPOP.removeprefix("画一张")


def test_expired_laxative_side_story_leaves_him_weak_without_a_skill(director):
    reply = run(director, [*lollipop_turn(director), UserMessage(content=LAXATIVE)])

    assert reply.stop_reason == "tool_use"
    (_, name, state), (_, draw, scene) = calls_of(reply)
    assert name == "set_character_state"
    assert state == {
        "character": "猪猪侠",  # the one who ate it, not 迷糊老师 who is named first
        "buff": "拉肚子虚脱(捂肚子冒冷汗)",
        "skill": "无",
        "mood": "狼狈",
    }
    assert draw == "generate_image" and parse(scene["prompt"]).scene == LAXATIVE
    assert "拉肚子虚脱" in reply.text
    # the teacher who gave it speaks too
    assert [who for who, _ in parse(scene["prompt"]).speech] == ["猪猪侠", "迷糊老师"]


def test_finishing_move_after_the_rewind_only_draws(director):
    # After the rewind the branch is the lollipop turn again: the state is the branch's.
    reply = run(director, [*lollipop_turn(director), UserMessage(content=FINISHER)])

    assert reply.stop_reason == "tool_use"
    ((call_id, name, args),) = calls_of(reply)
    assert (call_id, name) == ("call_1", "generate_image")
    assert parse(args["prompt"]).scene == FINISHER
    assert reply.text.startswith("[离线导演] ")


def test_after_the_tools_ran_it_closes_the_turn(director):
    reply = run(director, lollipop_turn(director))

    assert reply.complete
    assert reply.stop_reason == "stop"
    assert reply.tool_calls == []
    assert reply.text.startswith("[离线导演] ")
    assert "猪猪侠" in reply.text and "变身功夫大师" in reply.text  # the panel, by its caption
    assert "img_01" not in reply.text


@pytest.mark.parametrize(
    ("result", "said"),
    [
        (
            ToolResultMessage(
                tool_call_id="call_2",
                tool_name="generate_image",
                content="denied by the user",
                is_error=True,
            ),
            "拒绝",
        ),
        (
            ToolResultMessage(
                tool_call_id="call_2",
                tool_name="generate_image",
                content="not enough credits: a panel costs 10, the balance is 0",
                is_error=True,
                details={"code": "insufficient_credits"},
            ),
            "积分不够",
        ),
        (
            ToolResultMessage(
                tool_call_id="call_2",
                tool_name="generate_image",
                content="not run on this branch",
                is_error=True,
            ),
            "没有在这条分支上执行",
        ),
        (
            ToolResultMessage(
                tool_call_id="call_2",
                tool_name="generate_image",
                content="the render failed: GPU on fire",
                is_error=True,
            ),
            "GPU on fire",
        ),
    ],
)
def test_a_failed_tool_is_said_plainly_and_not_retried(director, result, said):
    prompt, assistant, state, _ = lollipop_turn(director)
    reply = run(director, [prompt, assistant, state, result])

    assert reply.stop_reason == "stop" and reply.tool_calls == []
    assert said in reply.text
    assert "画这一格" in reply.text  # the step, in words (not the tool's internal name)
    assert "不会自动重试" in reply.text


# --- the grammar -------------------------------------------------------------------------


def test_state_command_takes_multi_word_values(director):
    prompt = "/state 猪猪侠 buff=super lollipop (kung fu) skill=降龙 十巴掌 mood=very  smug "
    reply = run(director, [UserMessage(content=prompt)])

    assert reply.stop_reason == "tool_use"
    assert calls_of(reply) == [
        (
            "call_1",
            "set_character_state",
            {
                "character": "猪猪侠",
                "buff": "super lollipop (kung fu)",
                "skill": "降龙 十巴掌",
                "mood": "very  smug",
            },
        )
    ]


def test_state_command_with_some_keys_a_multi_word_character_and_a_repeat(director):
    reply = run(director, [UserMessage(content="/state GG Bond mood=happy mood=angry")])
    assert calls_of(reply) == [  # GG Bond is one of the hero's names: the one cast's
        ("call_1", "set_character_state", {"character": "猪猪侠", "mood": "angry"})
    ]
    reply = run(director, [UserMessage(content="/state Mr Wolf mood=happy mood=angry")])
    assert calls_of(reply) == [
        ("call_1", "set_character_state", {"character": "Mr Wolf", "mood": "angry"})
    ]
    reply = run(director, [UserMessage(content="/状态 菲菲 招式=旋风腿 心情=开心")])
    assert calls_of(reply) == [
        ("call_1", "set_character_state", {"character": "菲菲", "skill": "旋风腿", "mood": "开心"})
    ]


@pytest.mark.parametrize("prompt", ["/state buff=x", "/state 猪猪侠", "/state"])
def test_state_command_without_character_or_fields_calls_nothing(director, prompt):
    reply = run(director, [UserMessage(content=prompt)])
    assert reply.tool_calls == [] and reply.stop_reason == "stop"
    assert "/state" in reply.text


def test_draw_command_draws_its_scene_and_several_commands_go_in_one_reply(director):
    prompt = "/state 超人强 mood=生气\n/draw 超人强 被一掌拍飞出擂台\n/draw 观众欢呼"
    reply = run(director, [UserMessage(content=prompt)])

    assert calls_of(reply) == [
        ("call_1", "set_character_state", {"character": "超人强", "mood": "生气"}),
        ("call_2", "generate_image", {"prompt": "超人强 被一掌拍飞出擂台\n对象：超人强"}),
        ("call_3", "generate_image", {"prompt": "观众欢呼"}),
    ]
    assert reply.stop_reason == "tool_use"
    assert "20 积分" in reply.text


def test_bare_draw_draws_the_scene_text_and_scenes_are_capped(director):
    reply = run(director, [UserMessage(content="擂台上尘土飞扬\n/draw")])
    assert calls_of(reply) == [("call_1", "generate_image", {"prompt": "擂台上尘土飞扬"})]

    reply = run(director, [UserMessage(content="/draw " + "打" * 500)])
    assert calls_of(reply)[0][2]["prompt"] == "打" * 200

    reply = run(director, [UserMessage(content="/draw")])
    assert reply.tool_calls == [] and "/draw" in reply.text


def test_publish_command_uses_the_latest_image(director):
    history = closed(director, lollipop_turn(director))
    history += [UserMessage(content=LAXATIVE)]
    history += [as_assistant(run(director, history))]
    history += [
        state_set("call_1", {"character": "猪猪侠", "skill": "无"}),
        drawn("call_2", "img_02"),
    ]

    reply = run(director, [*history, UserMessage(content="/publish 猪猪侠拉肚子了")])
    assert calls_of(reply) == [
        ("call_1", "publish_panel", {"image_id": "img_02", "caption": "猪猪侠拉肚子了"})
    ]

    reply = run(director, [*history, UserMessage(content="/publish")])
    caption = "糟糕！猪猪侠吃下的是过期泻药丸，肚子疼得直冒冷汗……"  # the panel's own caption
    assert calls_of(reply) == [
        ("call_1", "publish_panel", {"image_id": "img_02", "caption": caption})
    ]


def test_publish_without_an_earlier_image_only_says_so(director):
    failed = ToolResultMessage(
        tool_call_id="call_1",
        tool_name="generate_image",
        content="denied by the user",
        is_error=True,
        details={"image_id": "img_never"},
    )
    for messages in (
        [UserMessage(content="/publish 第一格")],
        [failed, UserMessage(content="发布")],
    ):
        reply = run(director, messages)
        assert reply.tool_calls == [] and reply.stop_reason == "stop"
        assert "还没有可以发布的分镜" in reply.text


def test_publish_after_a_draw_in_the_same_prompt_waits_for_the_new_panel(director):
    reply = run(director, [*lollipop_turn(director), UserMessage(content="/draw 决战\n/publish")])
    assert [name for _, name, _ in calls_of(reply)] == ["generate_image"]
    assert "/publish" in reply.text


def test_publish_after_a_compaction_finds_the_image_in_the_summary(director):
    summary = director.summarize(lollipop_turn(director))
    reply = run(director, [SummaryMessage(content=summary), UserMessage(content="/publish 第一格")])
    assert calls_of(reply) == [
        ("call_1", "publish_panel", {"image_id": "img_01", "caption": "第一格"})
    ]


def test_panels_and_say_commands(director):
    reply = run(director, [UserMessage(content="/panels")])
    assert calls_of(reply) == [("call_1", "list_panels", {})]
    assert reply.stop_reason == "tool_use"

    reply = run(director, [UserMessage(content="/say 好戏开场了")])
    assert reply.tool_calls == [] and reply.stop_reason == "stop"
    assert reply.text.startswith("[离线导演] ") and "好戏开场了" in reply.text


def test_unknown_command_is_noted_not_drawn(director):
    reply = run(director, [UserMessage(content="/drwa 猪猪侠")])
    assert reply.tool_calls == [] and "/drwa" in reply.text and "/help" in reply.text


def test_the_panel_list_is_read_back_by_caption(director):
    history = [
        UserMessage(content="列出分镜"),
        AssistantMessage(
            content="",
            tool_calls=[ToolCall(id="call_1", name="list_panels", arguments={})],
            stop_reason="tool_use",
        ),
        ToolResultMessage(
            tool_call_id="call_1",
            tool_name="list_panels",
            content="1. img_01: …",
            details={
                "panels": [{"image_id": "img_01", "prompt": "擂台\n旁白：开场了", "entry_id": "r"}]
            },
        ),
    ]
    reply = run(director, history)
    assert "1 格" in reply.text and "开场了" in reply.text and "img_01" not in reply.text


# --- the keyword table -------------------------------------------------------------------


def test_keyword_table_is_data():
    assert isinstance(RULES, tuple)
    assert [rule.name for rule in RULES] == [
        "undo",
        "howto",
        "publish",
        "panels",
        "state_question",
        "laxative",
        "lollipop",
        "finishing",
        "finishing",
        "mood",
        "help",
        "question",
        "draw",
        "scene",
        "scene",
    ]


def test_every_rule_and_command_is_in_the_user_documentation():
    docs = (Path(__file__).parents[2] / "docs" / "DIRECTOR.md").read_text(encoding="utf-8")
    for rule in RULES:
        assert f"`{rule.name}`" in docs, rule.name
    for command in grammar.COMMANDS:
        assert f"`/{command}" in docs, command
    for chinese in grammar.CHINESE:
        assert f"`/{chinese}" in docs, chinese


def test_the_character_is_the_one_who_eats(director):
    reply = run(director, [UserMessage(content="超人强看着，菲菲吃下超级棒棒糖")])
    assert calls_of(reply)[0][2]["character"] == "菲菲"
    reply = run(director, [UserMessage(content="擂台上，小呆呆掏出超级棒棒糖吃下")])
    assert calls_of(reply)[0][2]["character"] == "小呆呆"
    reply = run(director, [UserMessage(content="Feifei eats a lollipop while Bobby watches")])
    assert calls_of(reply)[0][2]["character"] == "菲菲"


def test_english_prompt_gets_english_narration(director):
    reply = run(director, [UserMessage(content="He eats a super lollipop before the fight")])
    assert reply.text.startswith("[offline director] ")
    assert "Setting" in reply.text and "Drawing" in reply.text
    assert calls_of(reply)[0] == ("call_1", "set_character_state", KUNG_FU)

    reply = run(director, [UserMessage(content="Time for the finishing move!")])
    ((_, name, args),) = calls_of(reply)
    assert name == "generate_image"
    assert parse(args["prompt"]).scene == "Time for the finishing move!"

    reply = run(director, [UserMessage(content="list panels please")])
    assert calls_of(reply) == [("call_1", "list_panels", {})]

    history = [
        UserMessage(content="/draw a ring"),
        as_assistant(run(director, [UserMessage(content="/draw a ring")])),
        drawn("call_1", "i"),
    ]
    reply = run(director, history)
    assert reply.text.startswith("[offline director] ") and '"a ring"' in reply.text


# --- streaming ---------------------------------------------------------------------------


def test_deltas_are_small_and_tool_calls_come_in_pieces(director):
    events = list(director.stream([UserMessage(content=LOLLIPOP)], TOOLS))
    texts = [e for e in events if isinstance(e, TextDelta)]
    pieces = [e for e in events if isinstance(e, ToolCallDelta)]

    assert len(texts) > 10 and all(1 <= len(e.text) <= 4 for e in texts)
    assert isinstance(events[-1], StreamEnd) and sum(isinstance(e, StreamEnd) for e in events) == 1
    first_call = events.index(pieces[0])
    assert all(isinstance(e, TextDelta) for e in events[:first_call])  # narration first
    for index, call_id, name in (
        (0, "call_1", "set_character_state"),
        (1, "call_2", "generate_image"),
    ):
        mine = [p for p in pieces if p.index == index]
        assert 2 <= len(mine) <= 3
        assert (mine[0].id, mine[0].name) == (call_id, name)
        assert all(p.id is None and p.name is None for p in mine[1:])
        assert all(p.arguments for p in mine)
    assert events[-1].stop_reason == "tool_use"


def test_usage_is_a_deterministic_estimate(director):
    messages = lollipop_turn(director)
    reply = run(director, messages)
    chars = sum(len(m.content) for m in messages) + sum(
        len(c.name) + len(json.dumps(c.arguments, ensure_ascii=False))
        for c in messages[1].tool_calls
    )
    assert reply.usage == Usage(
        input_tokens=(chars + 1) // 2, output_tokens=(len(reply.text) + 1) // 2
    )


def test_same_input_same_events(director):
    history = [*lollipop_turn(director), UserMessage(content=LAXATIVE)]
    first = list(director.stream(history, TOOLS))
    assert first == list(director.stream(history, TOOLS))
    assert first == list(OfflineDirector().stream(list(history), list(TOOLS)))


def test_tools_not_offered_are_not_called(director):
    only_draw = [t for t in TOOLS if t.name == "generate_image"]
    reply = run(director, [UserMessage(content=LOLLIPOP)], only_draw)
    assert [name for _, name, _ in calls_of(reply)] == ["generate_image"]
    assert "改角色状态" in reply.text  # it says what it skipped

    reply = run(director, [UserMessage(content="/panels\n/draw 擂台")], [])
    assert reply.tool_calls == [] and reply.stop_reason == "stop"


def test_nothing_to_answer(director):
    for messages in ([], [SummaryMessage(content="earlier")], [UserMessage(content="  ")]):
        reply = run(director, messages)
        assert reply.complete and reply.stop_reason == "stop" and reply.tool_calls == []
        assert reply.text.startswith("[离线导演] ")


# --- summaries ---------------------------------------------------------------------------


def test_summarize_counts_prompts_panels_and_latest_states(director):
    history = lollipop_turn(director)
    history += [as_assistant(run(director, history)), UserMessage(content=LAXATIVE)]
    history += [as_assistant(run(director, history))]
    laxative = {
        "character": "猪猪侠",
        "buff": "拉肚子虚脱(捂肚子冒冷汗)",
        "skill": "无",
        "mood": "狼狈",
    }
    history += [state_set("call_1", laxative), drawn("call_2", "img_02")]

    summary = director.summarize(history)
    assert summary.startswith("[离线导演] 剧情摘要：")
    assert "用户提示 2 条" in summary
    assert "分镜 2 格" in summary and "img_01" in summary and "img_02" in summary
    assert "buff=拉肚子虚脱(捂肚子冒冷汗)" in summary and "skill=无" in summary
    assert "降龙十巴掌" not in summary.split("角色状态")[1]
    assert len(summary) < 200
    assert summary == director.summarize(list(history))


def test_summarize_carries_an_earlier_summary_over(director):
    earlier = director.summarize(lollipop_turn(director))
    later = [
        SummaryMessage(content=earlier),
        UserMessage(content=FINISHER),
        AssistantMessage(
            content="",
            tool_calls=[ToolCall(id="call_1", name="generate_image", arguments={"prompt": "决战"})],
            stop_reason="tool_use",
        ),
        drawn("call_1", "img_03"),
    ]
    summary = director.summarize(later)
    assert "用户提示 2 条" in summary and "分镜 2 格" in summary
    assert "img_01" in summary and "img_03「决战」" in summary
    assert "猪猪侠（buff=超级棒棒糖(功夫大师)，skill=降龙十巴掌，mood=得意）" in summary


def test_summarize_pairs_each_result_with_its_own_call(director):
    """Every reply numbers its calls from call_1: a panel's prompt is its own call's, not
    that of a later call with the same id."""
    history = closed(director, lollipop_turn(director))
    history = turn(director, history, "/draw 决战", drawn("call_1", "img_02"))
    history = turn(director, history, "/draw 观众欢呼", drawn("call_1", "img_03"))
    summary = director.summarize(history)
    assert "img_02「决战」" in summary and "img_03「观众欢呼」" in summary


# --- the one cast --------------------------------------------------------------------------

USERS_CAST = {
    "characters": new_cast(["Pig-Man", "Super-Strong-Man", "Teacher Muddle"], "en"),
    "permission_mode": "ask",
    "language": "en",
}


def test_the_users_cast_gets_the_states_and_the_script_says_who_acts_on_whom(director):
    """The newcomer's story: every state lands on one of the user's three, never on a
    built-in double; "him" is Pig-Man, then his rival."""
    state = {**USERS_CAST, "characters": {**USERS_CAST["characters"]}}
    first = UserMessage(content="Draw Pig-Man eating the super lollipop in the ring")
    reply = run(director, [first], language="en", app_state=state)
    (_, _, kung_fu), (_, _, draw) = calls_of(reply)
    assert kung_fu["character"] == "Pig-Man" and kung_fu["skill"] == "Ten Dragon Slaps"
    assert parse(draw["prompt"]).actor == "Pig-Man"
    history = [first, as_assistant(reply), state_set("call_1", kung_fu), drawn("call_2", "img_1")]

    state["characters"]["Pig-Man"] = {k: v for k, v in kung_fu.items() if k != "character"}
    pill = UserMessage(content="now Teacher Muddle gives him an expired laxative pill by mistake")
    reply = run(director, [*history, pill], language="en", app_state=state)
    (_, _, sick), (_, _, draw) = calls_of(reply)
    assert sick["character"] == "Pig-Man" and "laxative" in sick["buff"]
    script = parse(draw["prompt"])
    assert (script.actor, script.target) == ("Teacher Muddle", "Pig-Man")
    assert ("Teacher Muddle", "Oops, wrong bottle!") in script.speech

    knock = UserMessage(content="knock him flying with the ten slaps")
    reply = run(director, [*history, knock], language="en", app_state=state)
    [(_, tool, draw)] = calls_of(reply)
    script = parse(draw["prompt"])
    assert tool == "generate_image" and (script.actor, script.target) == (
        "Pig-Man",
        "Super-Strong-Man",
    )
    assert "Super-Strong-Man goes flying" in script.caption


def test_an_alias_in_a_state_command_lands_on_the_users_character(director):
    reply = run(director, [UserMessage(content="/state 猪猪侠 mood=happy")], app_state=USERS_CAST)
    assert calls_of(reply) == [
        ("call_1", "set_character_state", {"character": "Pig-Man", "mood": "happy"})
    ]


def test_a_mention_that_could_be_two_characters_is_asked_about(director):
    state = {
        "characters": {"Pig-Man": {"aliases": ["the twin"]}, "Pig-Girl": {"aliases": ["the twin"]}},
        "language": "en",
    }
    for prompt in ("Draw the twin eating a lollipop", "/state the twin mood=happy"):
        reply = run(director, [UserMessage(content=prompt)], language="en", app_state=state)
        assert reply.tool_calls == [], prompt
        assert "Who do you mean by" in reply.text and "Pig-Man or Pig-Girl" in reply.text
