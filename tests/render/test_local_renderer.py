"""The local renderer: deterministic, escaped, and fast."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from jaiweb.render.renderers import LocalRenderer

STATE = {"猪猪侠": {"buff": "超级棒棒糖(功夫大师)", "skill": "降龙十巴掌", "mood": "得意"}}


def test_deterministic_svg_with_the_characters_state():
    a = LocalRenderer().render({"prompt": "擂台对决", "characters": STATE})
    b = LocalRenderer().render({"prompt": "擂台对决", "characters": STATE})
    assert a == b and a.content_type == "image/svg+xml"
    text = a.data.decode()
    for word in ("猪猪侠", "超级棒棒糖(功夫大师)", "降龙十巴掌", "擂台对决", "offline"):
        assert word in text
    ET.fromstring(a.data)  # well-formed XML


def test_everything_typed_is_escaped():
    evil = '"><script>alert(1)</script><img src=x onerror=alert(2)>'
    out = LocalRenderer().render({"prompt": evil, "characters": {evil: {"buff": evil}}})
    text = out.data.decode()
    assert "<script" not in text and "<img" not in text
    root = ET.fromstring(out.data)  # still one well-formed document
    assert root.tag.endswith("svg")


def test_the_state_changes_the_picture():
    calm = LocalRenderer().render({"prompt": "p", "characters": {"猪猪侠": {"mood": "得意"}}})
    sick = LocalRenderer().render(
        {"prompt": "p", "characters": {"猪猪侠": {"mood": "狼狈", "buff": "拉肚子虚脱"}}}
    )
    assert calm.data != sick.data and b"#7cc4ff" in sick.data  # the sweat drop
