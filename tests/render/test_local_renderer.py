"""The local renderer: comic panels that are deterministic, escaped, never cut, and fast."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from jaiweb.render.backends.local import LocalRenderer
from jaiweb.render.panel.cast import BOOK
from jaiweb.render.panel.script import compose

KUNG_FU = {"buff": "超级棒棒糖(功夫大师)", "skill": "降龙十巴掌", "mood": "得意"}
STATE = {"猪猪侠": KUNG_FU}
SICK = {"buff": "拉肚子虚脱(捂肚子冒冷汗)", "skill": "无", "mood": "狼狈"}
SVG = "{http://www.w3.org/2000/svg}"


def svg(prompt: str, characters: dict | None = None) -> str:
    return LocalRenderer().render({"prompt": prompt, "characters": characters or {}}).data.decode()


def figures(text: str) -> dict[str, str]:
    """Each drawn character's group, by name."""
    root = ET.fromstring(text)
    return {
        g.get("data-character"): ET.tostring(g, encoding="unicode")
        for g in root.iter(f"{SVG}g")
        if g.get("data-character")
    }


def lines_of(text: str) -> list[list[str]]:
    """The lines of each text block, as drawn."""
    root = ET.fromstring(text)
    return [
        [span.text or "" for span in block.iter(f"{SVG}tspan")]
        for block in root.iter(f"{SVG}text")
        if list(block.iter(f"{SVG}tspan"))
    ]


def test_deterministic_svg_with_the_characters_state():
    a = LocalRenderer().render({"prompt": "擂台对决", "characters": STATE})
    b = LocalRenderer().render({"prompt": "擂台对决", "characters": dict(STATE)})
    assert a == b and a.content_type == "image/svg+xml"
    text = a.data.decode()
    for word in ("猪猪侠", "超级棒棒糖(功夫大师)", "降龙十巴掌", "擂台对决", "offline"):
        assert word in text
    ET.fromstring(a.data)  # well-formed XML


def test_everything_typed_is_escaped():
    evil = '"><script>alert(1)</script><img src=x onerror=alert(2)>\x01\x1b'
    prompt = compose(evil, evil, ((evil, evil),))
    out = LocalRenderer().render(
        {"prompt": prompt, "characters": {evil: {"buff": evil, "skill": evil, "mood": evil}}}
    )
    text = out.data.decode()
    assert "<script" not in text and "<img" not in text and "\x01" not in text
    root = ET.fromstring(out.data)  # still one well-formed document
    assert root.tag.endswith("svg")
    assert "<script>alert(1)</script>" in "".join(root.itertext())  # shown as text, whole


def test_the_state_changes_the_picture():
    calm = svg("p", {"猪猪侠": {"mood": "得意"}})
    sick = svg("p", {"猪猪侠": {"mood": "狼狈", "buff": "拉肚子虚脱"}})
    assert calm != sick and "#7cc4ff" in sick  # the sweat drop


def test_each_known_character_has_a_look_of_its_own():
    drawn = {look.name: figures(svg(look.name, {look.name: {}}))[look.name] for look in BOOK}
    assert set(drawn) == {"猪猪侠", "超人强", "菲菲", "小呆呆", "波比", "迷糊老师"}
    # the figure itself differs, not only the name on it
    bodies = {
        name: re.sub(r"<title>.*?</title>", "", g).replace(name, "") for name, g in drawn.items()
    }
    assert len(set(bodies.values())) == len(BOOK)
    colours = {look.name: look.outfit for look in BOOK}
    assert len(set(colours.values())) == len(BOOK)
    for look in BOOK:
        assert look.outfit in drawn[look.name]


def test_english_names_draw_the_same_characters():
    panel = figures(svg("Pig-Man fights Super Strong while the teacher watches"))
    assert list(panel) == ["猪猪侠", "超人强", "迷糊老师"]


@pytest.mark.parametrize(
    ("prompt", "state", "mark"),
    [
        ("猪猪侠吃下超级棒棒糖", {}, "#ff4081"),  # the lollipop at his mouth
        ("猪猪侠使出绝招！", KUNG_FU, "降龙十巴掌"),  # the burst with the skill's name
        ("猪猪侠在擂台上", {"buff": "拉肚子虚脱"}, 'fill="#7cb342" fill-opacity'),  # green face
        ("猪猪侠站着", {"mood": "难过"}, "#4fc3f7"),  # sad: a tear
        ("Pig-Man wins the trophy", {}, "M 24 -104 L 44 -84"),  # proud: hands on the hips
    ],
)
def test_pose_and_face_follow_the_scene_and_the_state(prompt, state, mark):
    plain = svg("猪猪侠站着", {"猪猪侠": {}})
    drawn = svg(prompt, {"猪猪侠": state})
    assert mark in figures(drawn)["猪猪侠"] or mark in drawn
    assert mark not in plain


def test_a_named_opponent_is_drawn_and_a_finishing_move_sends_them_flying():
    alone = figures(svg("猪猪侠在擂台上", STATE))
    assert list(alone) == ["猪猪侠"]
    fight = svg("猪猪侠在擂台上对决超人强", STATE)  # 超人强 is not in the state: drawn anyway
    assert list(figures(fight)) == ["猪猪侠", "超人强"]
    assert "scale(-1.12" in fight  # the opponent faces the hero
    finish = svg("使出绝招降龙十巴掌，一掌拍飞超人强！", STATE)
    assert "rotate(28)" in finish  # knocked back
    sick_hero = svg("使出绝招降龙十巴掌，一掌拍飞超人强！", {"猪猪侠": SICK})
    assert "rotate(28)" not in sick_hero  # a sick hero knocks nobody over


def test_caption_and_speech_come_from_the_script_not_the_scene():
    prompt = compose(
        "Draw a panel: the hero steps into the ring",
        "Pig-Man enters the tournament ring.",
        (("猪猪侠", "Here I come!"),),
    )
    text = svg(prompt, STATE)
    shown = " ".join(" ".join(lines) for lines in lines_of(text))
    assert "Pig-Man enters the tournament ring." in shown and "Here I come!" in shown
    assert "Draw a panel" not in shown


def test_text_is_wrapped_on_word_boundaries_and_never_cut():
    words = [
        "tournament", "extraordinary", "lollipop", "kung-fu", "championship", "Super",
        "Strong", "finishing", "unbelievable", "spectacular",
    ]  # fmt: skip
    caption = " ".join(words[i % len(words)] for i in range(90))
    speech = " ".join(reversed(caption.split()))[:300]
    text = svg(compose("ring", caption, (("猪猪侠", speech),)), STATE)
    blocks = lines_of(text)
    for expected in (caption, speech):
        block = next(b for b in blocks if b[0] == expected[: len(b[0])])
        assert " ".join(block) == expected  # every word, in order, none dropped
        for line in block:
            assert all(word in words or word in expected.split() for word in line.split())
        assert not any(line.endswith("…") for line in block)
    assert "tournam" not in {w for b in blocks for line in b for w in line.split()}


def test_long_chinese_text_is_fully_present_and_the_panel_grows_to_hold_it():
    caption = "猪猪侠吃下超级棒棒糖，变身功夫大师，学会了降龙十巴掌，一掌拍飞超人强！" * 25
    text = svg(compose("擂台", caption), STATE)
    block = max(lines_of(text), key=len)
    assert "".join(block) == caption
    assert not any(line.startswith(("，", "！", "。")) for line in block)  # no line starts so
    height = float(ET.fromstring(text).get("height"))
    assert height > 400  # the caption needed more room than the usual panel has
    short = ET.fromstring(svg(compose("擂台", "开场！"), STATE))
    assert float(short.get("height")) == 400
