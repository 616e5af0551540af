"""The offline director plays the model through the article's story, deterministically."""

from __future__ import annotations

import json

import pytest

from jaiweb.agent.providers.base import (
    Provider,
    StreamEnd,
    TextDelta,
    ToolCallDelta,
    ToolSpec,
    assemble,
)
from jaiweb.agent.providers.offline import RULES, OfflineDirector
from journal.entries import (
    AssistantMessage,
    SummaryMessage,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)

TOOL_NAMES = ("set_character_state", "generate_image", "publish_panel", "list_panels")
TOOLS = [ToolSpec(name, f"the {name} tool", {"type": "object"}) for name in TOOL_NAMES]

LOLLIPOP = "画一张猪猪侠在武林大会擂台上对决超人强，掏出超级棒棒糖吃下！"
LAXATIVE = "先别正经打，画一格搞笑支线：迷糊老师不小心把棒棒糖拿错了，给猪猪侠吃了一颗过期泻药丸！"
FINISHER = "使出绝招降龙十巴掌，一掌拍飞超人强！"
KUNG_FU = {
    "character": "猪猪侠",
    "buff": "超级棒棒糖(功夫大师)",
    "skill": "降龙十巴掌",
    "mood": "得意",
}


@pytest.fixture
def director() -> OfflineDirector:
    return OfflineDirector()


def run(director, messages, tools=TOOLS):
    return assemble(director.stream(messages, tools))


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


def test_is_a_labelled_offline_provider(director):
    provider: Provider = director  # the protocol is structural
    assert callable(provider.stream) and callable(provider.summarize)
    assert director.name == "offline-director"
    assert director.offline is True


# --- the article's story -----------------------------------------------------------------


def test_super_lollipop_makes_a_kung_fu_master_and_draws_the_panel(director):
    reply = run(director, [UserMessage(content=LOLLIPOP)])

    assert reply.complete and reply.stop_reason == "tool_use"
    assert reply.text.startswith("[离线导演] ")
    assert "降龙十巴掌" in reply.text
    assert calls_of(reply) == [
        ("call_1", "set_character_state", KUNG_FU),
        ("call_2", "generate_image", {"prompt": LOLLIPOP}),
    ]


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
    assert (draw, scene) == ("generate_image", {"prompt": LAXATIVE})
    assert "拉肚子虚脱" in reply.text


def test_finishing_move_after_the_rewind_only_draws(director):
    # After the rewind the branch is the lollipop turn again: the state is the branch's.
    reply = run(director, [*lollipop_turn(director), UserMessage(content=FINISHER)])

    assert reply.stop_reason == "tool_use"
    assert calls_of(reply) == [("call_1", "generate_image", {"prompt": FINISHER})]
    assert reply.text.startswith("[离线导演] ")


def test_after_the_tools_ran_it_closes_the_turn(director):
    reply = run(director, lollipop_turn(director))

    assert reply.complete
    assert reply.stop_reason == "stop"
    assert reply.tool_calls == []
    assert reply.text.startswith("[离线导演] ")
    assert "猪猪侠" in reply.text and "img_01" in reply.text


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
            "点券不够",
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
    assert "generate_image" in reply.text
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
    assert calls_of(reply) == [
        ("call_1", "set_character_state", {"character": "GG Bond", "mood": "angry"})
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
        ("call_2", "generate_image", {"prompt": "超人强 被一掌拍飞出擂台"}),
        ("call_3", "generate_image", {"prompt": "观众欢呼"}),
    ]
    assert reply.stop_reason == "tool_use"


def test_bare_draw_draws_the_scene_text_and_scenes_are_capped(director):
    reply = run(director, [UserMessage(content="擂台上尘土飞扬\n/draw")])
    assert calls_of(reply) == [("call_1", "generate_image", {"prompt": "擂台上尘土飞扬"})]

    reply = run(director, [UserMessage(content="/draw " + "打" * 500)])
    assert calls_of(reply)[0][2]["prompt"] == "打" * 200


def test_publish_command_uses_the_latest_image(director):
    history = lollipop_turn(director)
    history += [as_assistant(run(director, history))]
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
    assert calls_of(reply) == [
        ("call_1", "publish_panel", {"image_id": "img_02", "caption": LAXATIVE})
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
    assert reply.tool_calls == [] and "/drwa" in reply.text


# --- the keyword table -------------------------------------------------------------------


def test_keyword_table_is_data():
    assert isinstance(RULES, tuple)
    assert [rule.name for rule in RULES] == [
        "laxative",
        "lollipop",
        "finishing",
        "publish",
        "panels",
    ]


@pytest.mark.parametrize(
    ("prompt", "names"),
    [
        ("菲菲吃了一根棒棒糖", ["set_character_state", "generate_image"]),
        ("分镜列表", ["list_panels"]),
        ("猪猪侠和超人强在擂台上对视", ["generate_image"]),
    ],
)
def test_keyword_rules(director, prompt, names):
    reply = run(director, [UserMessage(content=prompt)])
    assert [name for _, name, _ in calls_of(reply)] == names


def test_the_character_is_the_one_who_eats(director):
    reply = run(director, [UserMessage(content="超人强看着，菲菲吃下超级棒棒糖")])
    assert calls_of(reply)[0][2]["character"] == "菲菲"
    reply = run(director, [UserMessage(content="擂台上，小呆呆掏出超级棒棒糖吃下")])
    assert calls_of(reply)[0][2]["character"] == "小呆呆"


def test_english_prompt_gets_english_narration(director):
    reply = run(director, [UserMessage(content="He eats a super lollipop before the fight")])
    assert reply.text.startswith("[offline director] ")
    assert "Setting" in reply.text and "Drawing" in reply.text
    assert calls_of(reply)[0] == ("call_1", "set_character_state", KUNG_FU)

    reply = run(director, [UserMessage(content="Time for the finishing move!")])
    assert calls_of(reply) == [
        ("call_1", "generate_image", {"prompt": "Time for the finishing move!"})
    ]

    reply = run(director, [UserMessage(content="list panels please")])
    assert calls_of(reply) == [("call_1", "list_panels", {})]

    history = [
        UserMessage(content="/draw a ring"),
        as_assistant(run(director, [])),
        drawn("c", "i"),
    ]
    reply = run(director, history)
    assert reply.text.startswith("[offline director] ") and "i)" in reply.text


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
    assert "set_character_state" in reply.text  # it says what it skipped

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
