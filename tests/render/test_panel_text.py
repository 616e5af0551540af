"""Text for panels: wrapped on word and CJK boundaries, shrunk to fit, never cut."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from jaiweb.render.panel.script import Script, compose, parse
from jaiweb.render.panel.text import fit, tokens, width, wrap


def test_words_stay_whole_and_cjk_breaks_between_characters():
    lines = wrap("Pig-Man steps into the tournament ring before the final", 160, 16)
    assert len(lines) > 1
    assert " ".join(lines) == "Pig-Man steps into the tournament ring before the final"
    assert all(width(line, 16) <= 160 for line in lines)

    lines = wrap("猪猪侠吃下超级棒棒糖，变身功夫大师！", 100, 16)
    assert "".join(lines) == "猪猪侠吃下超级棒棒糖，变身功夫大师！"
    assert not any(line.startswith(("，", "！")) for line in lines)


def test_closing_punctuation_stays_with_its_word_and_brackets_with_theirs():
    pieces = [t.text for t in tokens("使出「降龙十巴掌」！ ok, go")]
    assert "「降" in pieces and "掌」！" in pieces and "ok," in pieces


def test_fit_shrinks_the_font_before_it_needs_more_lines():
    short = fit("Hi!", 200, 40, largest=18, smallest=9)
    assert short.size == 18 and short.lines == ["Hi!"]
    long = fit("word " * 40, 200, 40, largest=18, smallest=9)
    assert long.size < 18
    # too long for the box even at the smallest size: all of it, taller than the box
    huge = fit("word " * 400, 200, 40, largest=18, smallest=9)
    assert huge.size == 9 and huge.height > 40
    assert " ".join(huge.lines) == " ".join(("word " * 400).split())


def test_only_a_word_wider_than_a_whole_line_is_broken():
    url = "https://example.com/" + "x" * 80
    got = fit(url, 120, 30, largest=14, smallest=9)
    assert "".join(got.lines) == url  # broken (nothing else fits), every character kept
    assert all(width(line, got.size) <= 120 for line in got.lines)


@given(
    st.lists(
        st.sampled_from(["猪猪侠", "lollipop", "擂台", "Super", "！", "，", "kung-fu"]), max_size=60
    )
)
def test_wrapping_keeps_every_character_in_order(parts):
    text = " ".join(parts)
    got = fit(text, 180, 60, largest=16, smallest=9)
    assert "".join(got.lines).replace(" ", "") == text.replace(" ", "")


def test_the_script_round_trips_in_both_languages():
    for lang in ("en", "zh"):
        script = Script("擂台上", "猪猪侠登场！", (("猪猪侠", "看招！"), ("超人强", "来吧")))
        assert parse(compose(script.scene, script.caption, script.speech, lang=lang)) == script
    assert parse("just a scene") == Script("just a scene")
    assert parse("just a scene").shown_caption == "just a scene"
    assert parse("GG Bond says: hi there\nCaption: x").speech == (("GG Bond", "hi there"),)


def test_the_script_names_who_acts_and_who_it_is_done_to_in_both_languages():
    for lang in ("en", "zh"):
        script = Script("in the ring", actor="Pig-Man", target="Super-Strong-Man")
        prompt = compose(script.scene, lang=lang, actor=script.actor, target=script.target)
        assert parse(prompt) == script
    assert parse("Target:   Teacher   Muddle").target == "Teacher Muddle"
    assert parse("Target:").scene == "Target:"  # an empty role line is scene text
    assert compose("a hill") == "a hill"  # no roles, no lines
