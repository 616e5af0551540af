"""The panel vocabulary: every setting, prop and action is read from words in both
languages, stated on the script's own lines, and drawn by the local renderer."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from jaiweb.render.backends.local import LocalRenderer
from jaiweb.render.panel import vocabulary
from jaiweb.render.panel.script import compose, parse
from jaiweb.render.panel.vocabulary import Staging

SVG = "{http://www.w3.org/2000/svg}"
HEROES = {"猪猪侠": {}, "超人强": {}}


def drawn(prompt: str, seed: int = 5, characters: dict | None = None) -> ET.Element:
    params = {"prompt": prompt, "characters": HEROES if characters is None else characters}
    return ET.fromstring(LocalRenderer().render({**params, "seed": seed}).data)


def group(root: ET.Element, attribute: str, value: str) -> ET.Element | None:
    return next((g for g in root.iter(f"{SVG}g") if g.get(attribute) == value), None)


def test_the_vocabulary_has_what_the_issue_asks_for():
    settings = set(vocabulary.ids("setting"))
    assert len(settings) >= 15
    ten = {"beach", "city", "park", "road", "rain", "rooftop", "fireworks", "hotpot"}
    assert ten | {"handshake", "group-photo", "classroom", "ring"} <= settings
    things = set(vocabulary.ids("props")) | set(vocabulary.ids("actions"))
    assert len(things) >= 20
    assert {"kite", "car", "lollipop", "pill", "punch", "fly", "fall", "hug", "bow", "wave",
            "hide", "run", "cry", "laugh", "eat", "sleep", "read", "dance", "jump",
            "shout"} <= things  # fmt: skip
    assert {"close-up", "wide", "two-shot"} <= set(vocabulary.ids("framing"))
    assert {"night", "day"} <= set(vocabulary.ids("time"))
    assert {"rain", "snow"} <= set(vocabulary.ids("weather"))


@pytest.mark.parametrize("setting", vocabulary.SETTINGS, ids=lambda w: w.id)
def test_each_setting_is_read_in_both_languages_and_drawn(setting):
    english = next(w for w in setting.words if w.isascii())
    assert vocabulary.read(f"Pig-Man, {english}").setting == setting.id
    assert vocabulary.read(f"猪猪侠{setting.zh}").setting == setting.id
    root = drawn(compose("猪猪侠", staging=Staging(setting=setting.id)))
    assert root.get("data-scene") == setting.id
    place = group(root, "data-setting", setting.id)
    assert place is not None and len(place) >= 3  # a drawing, not a marker


def test_no_two_settings_are_drawn_alike():
    places = {
        w.id: ET.tostring(
            group(drawn(compose("p", staging=Staging(setting=w.id))), "data-setting", w.id),
            encoding="unicode",
        )
        for w in vocabulary.SETTINGS
    }
    plain = drawn("猪猪侠站着")
    assert plain.get("data-scene") == "default" and group(plain, "data-setting", "default")
    shapes = {re.sub(r'data-setting="[^"]*"', "", svg) for svg in places.values()}
    assert len(shapes) == len(places)


@pytest.mark.parametrize("prop", vocabulary.PROPS, ids=lambda w: w.id)
def test_each_prop_is_read_in_both_languages_and_drawn(prop):
    english = next(w for w in prop.words if w.isascii())
    assert prop.id in vocabulary.read(f"Pig-Man with the {english}").props
    assert prop.id in vocabulary.read(f"猪猪侠拿着{prop.zh}").props
    plain = drawn("猪猪侠站着")
    assert group(plain, "data-prop", prop.id) is None
    root = drawn(compose("猪猪侠站着", staging=Staging(props=(prop.id,))))
    held = group(root, "data-prop", prop.id)
    assert held is not None and len(list(held.iter())) >= 3  # a drawing, not a marker


@pytest.mark.parametrize("action", vocabulary.ACTIONS, ids=lambda w: w.id)
def test_each_action_is_read_in_both_languages_and_drawn(action):
    english = next(w for w in action.words if w.isascii())
    assert action.id in vocabulary.read(f"Pig-Man {english} now").actions
    assert action.id in vocabulary.read(f"猪猪侠{action.zh}").actions
    assert group(drawn("猪猪侠站着"), "data-act", action.id) is None
    root = drawn(compose("猪猪侠和超人强", staging=Staging(actions=(action.id,))))
    mark = group(root, "data-act", action.id)
    assert mark is not None and len(mark) >= 1


def test_actions_move_the_one_who_does_them():
    def place(act: str) -> str:
        root = drawn(compose("猪猪侠", staging=Staging(actions=(act,))), characters={})
        return group(root, "data-character", "猪猪侠").get("transform")

    still = place("wave")
    assert "rotate(-90)" in place("sleep")  # lying down
    for act in ("jump", "fly", "bow", "fall"):
        assert place(act) != still, act
    hug = drawn(compose("猪猪侠和超人强", staging=Staging(actions=("hug",))))
    xs = [float(re.match(r"translate\(([\d.]+)", g.get("transform")).group(1))
          for g in hug.iter(f"{SVG}g") if g.get("data-character")]  # fmt: skip
    assert abs(xs[0] - xs[1]) <= 62  # side by side, arms round each other


def test_the_one_hit_flies_not_the_one_who_hits():
    root = drawn("Pig-Man punches Super Strong and knocks him flying")
    assert {"punch", "fly"} <= set(vocabulary.read("punches … flying").actions)
    where = {
        g.get("data-character"): g.get("transform")
        for g in root.iter(f"{SVG}g")
        if g.get("data-character")
    }
    feet = [float(re.match(r"translate\([\d.]+,([\d.]+)\)", t).group(1)) for t in where.values()]
    hero, hit = where["猪猪侠"], where["超人强"]
    assert "rotate(" not in hero and "rotate(28)" in hit
    assert feet[0] > feet[1]  # 超人强 is off the ground, 猪猪侠 stands on it


def test_a_handshake_clasps_the_two_figures_hands():
    root = drawn("猪猪侠和超人强握手言和")
    assert root.get("data-scene") == "handshake"
    assert group(root, "data-act", "handshake") is not None


def test_time_weather_and_the_framing_asked_for():
    night = drawn(compose("猪猪侠", staging=Staging(setting="city", time="night")))
    assert night.get("data-time") == "night" and "#ffe082" in ET.tostring(night, "unicode")
    day = drawn(compose("猪猪侠", staging=Staging(setting="city")))
    assert day.get("data-time") == "day" and day.get("data-weather") == "clear"
    for weather in ("rain", "snow", "wind"):
        root = drawn(compose("猪猪侠", staging=Staging(weather=weather)))
        assert root.get("data-weather") == weather
        assert group(root, "data-weather", weather) is not None
    indoors = drawn(compose("猪猪侠", staging=Staging(setting="hotpot", weather="rain")))
    assert group(indoors, "data-weather", "rain") is None  # no rain falls on the table
    for framing, zoom in (("close-up", 1.6), ("two-shot", 1.3)):
        for seed in range(6):
            root = drawn(compose("猪猪侠和超人强", staging=Staging(framing=framing)), seed)
            stage = next(g for g in root.iter(f"{SVG}g") if g.get("data-framing"))
            assert stage.get("data-framing") == framing
            assert 1.0 < float(re.search(r"scale\(([\d.]+)\)", stage.get("transform"))[1]) <= zoom
    wide = drawn(compose("猪猪侠和超人强", staging=Staging(framing="wide")))
    stage = next(g for g in wide.iter(f"{SVG}g") if g.get("data-framing"))
    assert stage.get("data-framing") == "wide" and stage.get("transform") is None


def test_the_scripts_own_lines_win_over_the_scene_and_round_trip():
    staging = Staging("beach", "night", "rain", "close-up", ("kite", "car"), ("run", "shout"))
    for lang in ("en", "zh"):
        prompt = compose("Pig-Man in the city", "a caption", lang=lang, staging=staging)
        script = parse(prompt)
        assert script.staging == staging and script.scene == "Pig-Man in the city"
        assert drawn(prompt).get("data-scene") == "beach"
    assert "场景：海滩" in compose("x", lang="zh", staging=staging)
    assert "Setting: beach" in compose("x", staging=staging)
    # a line that names nothing the vocabulary knows stays part of the scene
    script = parse("Time: the hero wakes up\n猪猪侠")
    assert script.staging == Staging() and script.scene == "Time: the hero wakes up 猪猪侠"


def test_free_text_reads_like_the_lines():
    assert vocabulary.read("Pig-Man on the rooftop at night, close-up") == Staging(
        "rooftop", "night", "", "close-up", (), ()
    )
    assert vocabulary.read("猪猪侠放风筝") == Staging("park", "", "", "", ("kite",), ())
    assert "fly" not in vocabulary.read("Pig-Man flies a kite").actions  # the kite flies
    assert vocabulary.read("A quiet morning by the lake").setting == ""  # the plain outdoors
    assert vocabulary.read("He brings a ring").setting == "ring"  # whole words: not "bring"
    assert vocabulary.read("He brings string").setting == ""


def test_a_held_lollipop_is_not_drawn_twice():
    root = drawn(compose("猪猪侠吃下超级棒棒糖", staging=Staging(props=("lollipop",))))
    assert group(root, "data-prop", "lollipop") is None  # in his hand, as the pose draws it
    assert "#ff4081" in ET.tostring(root, "unicode")
