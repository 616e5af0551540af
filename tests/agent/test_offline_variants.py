"""The offline director reads a request for variants in English and Chinese: the panel it
would draw, drawn as one set of 2 to 4 calls; any other count draws nothing."""

from __future__ import annotations

import json

import pytest

from jaiweb.agent.providers.base import ToolSpec, assemble
from jaiweb.agent.providers.offline import OfflineDirector
from jaiweb.agent.providers.offline.variants import requested
from journal.entries import UserMessage

TOOLS = [
    ToolSpec(name, f"the {name} tool", {"type": "object"})
    for name in ("set_character_state", "generate_image", "publish_panel", "list_panels")
]


def reply_to(text: str, lang: str = "en"):
    return assemble(OfflineDirector().stream([UserMessage(content=text)], TOOLS, language=lang))


def draws(reply) -> list[dict]:
    return [json.loads(c.arguments) for c in reply.tool_calls if c.name == "generate_image"]


@pytest.mark.parametrize(
    ("text", "count"),
    [
        ("draw 3 variants of Pig-Man eating the lollipop", 3),
        ("Draw two versions of the hero wins the bout with one slap", 2),
        ("/draw 4 variants of Pig-Man faces Super Strong in the ring", 4),
        ("画3个版本：猪猪侠吃下超级棒棒糖，上擂台对决超人强！", 3),
        ("猪猪侠使出最后的大招，画两个版本", 2),
        ("/画 四个版本 猪猪侠在擂台上对决超人强", 4),
        ("Draw 3 variants of this panel: 吃下超级棒棒糖，上擂台对决超人强！", 3),
        ("画4个版本：the hero wins the bout with one slap", 4),
    ],
)
def test_a_variants_request_draws_one_set(text, count):
    reply = reply_to(text)
    drawn = draws(reply)
    assert len(drawn) == count
    assert {d["variants"] for d in drawn} == {count}
    assert len({d["prompt"] for d in drawn}) == 1  # one panel, drawn count times
    assert f"‹ 1/{count} ›" in reply.text and f"{count * 10} credits" in reply.text


def test_the_request_is_not_the_panels_words():
    [drawn, *_] = draws(reply_to("/draw 3 variants of the hero takes a bow"))
    assert "variant" not in drawn["prompt"] and "the hero takes a bow" in drawn["prompt"]


@pytest.mark.parametrize(
    "text",
    ["draw 5 variants of the hero wins", "draw 1 variant of the hero wins", "画十个版本：猪猪侠"],
)
def test_a_count_out_of_range_draws_nothing_and_says_so(text):
    reply = reply_to(text)
    assert reply.tool_calls == []
    assert "2" in reply.text and "4" in reply.text


def test_a_state_change_with_variants_is_made_once():
    reply = reply_to("画3个版本：猪猪侠吃下超级棒棒糖，上擂台对决超人强！", "zh")
    names = [c.name for c in reply.tool_calls]
    assert names == ["set_character_state"] + ["generate_image"] * 3
    assert "3 个版本" in reply.text and "30 积分" in reply.text


def test_prompts_without_a_count_are_read_as_before():
    assert requested("the hero wins three rounds") == (None, "the hero wins three rounds")
    assert requested("吃下超级棒棒糖") == (None, "吃下超级棒棒糖")
    assert len(draws(reply_to("Draw a panel: the hero wins the bout with one slap"))) == 1
