"""journal.pages: the panels of a path, laid out as pages, their lettering broken into lines."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from journal.branches import cherry_pick_entries
from journal.entries import AssistantMessage, MessageEntry, ToolCall, ToolResultMessage
from journal.pages import (
    DEFAULT_LAYOUT,
    ELLIPSIS,
    LAYOUTS,
    PAGE_HEIGHT,
    PAGE_WIDTH,
    Box,
    ComicPanel,
    Lettering,
    bubbles_over,
    layout_named,
    paginate,
    panels_on,
    tail_points,
    wrap,
)
from tests.support.factories import at, panel, user


def mono(text: str, size: int) -> float:
    """A measure where every character is half the size wide, and a CJK one the size."""
    return sum(size if ord(c) > 0x2E80 else size / 2 for c in text)


def call(id: str, parent: str, prompt: str, *, result: str) -> MessageEntry:
    """An assistant message calling generate_image, answered by the panel ``result``."""
    message = AssistantMessage(
        content="Drawing it now: that is 10 credits.",
        tool_calls=[
            ToolCall(id=f"c_{result}", name="generate_image", arguments={"prompt": prompt})
        ],
        stop_reason="tool_use",
    )
    return MessageEntry(id=id, parent_id=parent, timestamp=at(1), message=message)


def drawn(n: int) -> list[ComicPanel]:
    return [ComicPanel(f"img_{i}", Lettering(f"panel {i}")) for i in range(n)]


def test_panels_on_a_path_keep_their_order_and_prompt_and_nothing_of_the_narration():
    path = [
        user("u1", None, "draw two"),
        call("p1", "u1", "a pig\nCaption: the pig eats", result="p1r"),
        panel("p1r", "p1"),
        call("p2", "p1r", "a ring", result="p2r"),
        panel("p2r", "p2", error=True),  # a failed draw is no panel
        call("p3", "p2r", "a ring, again", result="p3r"),
        panel("p3r", "p3"),
    ]
    found = panels_on(path)
    assert [(p.entry_id, p.image_id, p.prompt) for p in found] == [
        ("p1r", "img_p1r", "a pig\nCaption: the pig eats"),
        ("p3r", "img_p3r", "a ring, again"),
    ]
    assert all("credits" not in p.prompt for p in found)


def test_a_placed_panel_names_where_it_came_from():
    source = panel("p1r", "u1")
    placed = cherry_pick_entries(source, leaf_id="u9", ids=("k1", "k2", "k3"), now=at(5))
    found = panels_on([user("u9", None), *placed])
    assert [(p.image_id, p.prompt, p.from_entry_id) for p in found] == [("img_p1r", "", "p1r")]


def test_a_result_without_an_image_or_of_another_tool_is_no_panel():
    other = MessageEntry(
        id="x",
        parent_id=None,
        timestamp=at(0),
        message=ToolResultMessage(
            tool_call_id="c", tool_name="publish_panel", content="ok", details={"image_id": "i"}
        ),
    )
    no_image = panel("p", "x").model_copy(
        update={"message": panel("p", "x").message.model_copy(update={"details": {"cost": 0}})}
    )
    assert panels_on([other, no_image]) == []


@pytest.mark.parametrize(
    ("layout", "per_page"), [("2x2", 4), ("3-tier", 6), ("strip", 2), ("splash", 1)]
)
def test_each_layout_holds_its_number_of_panels_a_page(layout, per_page):
    pages = paginate(drawn(13), layout, mono)
    assert [len(p.frames) for p in pages[:-1]] == [per_page] * (len(pages) - 1)
    assert sum(len(p.frames) for p in pages) == 13
    assert len(pages) == -(-13 // per_page)
    assert [f.number for p in pages for f in p.frames] == list(range(1, 14))
    assert [f.panel.image_id for p in pages for f in p.frames] == [f"img_{i}" for i in range(13)]


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_frames_stay_on_the_page_and_never_overlap(layout):
    frames = paginate(drawn(LAYOUTS[layout].per_page), layout, mono)[0].frames
    boxes = [b for f in frames for b in (f.art, f.caption)]
    for box in boxes:
        assert box.x >= 0 and box.x + box.width <= PAGE_WIDTH
        assert box.y >= 0 and box.y + box.height <= PAGE_HEIGHT
        assert box.width > 0 and box.height > 0
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            apart = (
                a.x + a.width <= b.x
                or b.x + b.width <= a.x
                or a.y + a.height <= b.y
                or b.y + b.height <= a.y
            )
            assert apart, (a, b)
    for frame in frames:  # the lettering sits under its own art
        assert frame.caption.y >= frame.art.y + frame.art.height
        assert frame.caption.x == frame.art.x


def test_frames_read_left_to_right_then_down():
    frames = paginate(drawn(4), "2x2", mono)[0].frames
    (a, b, c, d) = (f.art for f in frames)
    assert a.y == b.y < c.y == d.y and a.x == c.x < b.x == d.x


def test_no_panel_is_one_empty_page_and_an_unknown_layout_is_refused():
    pages = paginate([], DEFAULT_LAYOUT, mono)
    assert len(pages) == 1 and pages[0].frames == ()
    with pytest.raises(ValueError, match="2x2"):
        layout_named("3x3")


def test_the_caption_goes_under_the_frame_and_each_speech_line_in_a_bubble_over_it():
    lettering = Lettering("猪猪侠吃下超级棒棒糖！", (("猪猪侠", "能量满满！"), ("", "嘿")))
    assert lettering.paragraphs() == ["猪猪侠吃下超级棒棒糖！"]
    assert lettering.bubble_texts() == ["猪猪侠: 能量满满！", "嘿"]
    assert Lettering("  ", ()).paragraphs() == []
    frame = paginate([ComicPanel("img", lettering)], "2x2", mono)[0].frames[0]
    assert frame.lines == ("猪猪侠吃下超级棒棒糖！",)
    assert [b.lines for b in frame.bubbles] == [("猪猪侠: 能量满满！",), ("嘿",)]
    art = frame.art
    first, second = (b.box for b in frame.bubbles)
    for box in (first, second):  # over the picture, inside it
        assert art.x <= box.x and box.x + box.width <= art.x + art.width
        assert art.y <= box.y and box.y + box.height <= art.y + art.height
    assert first.x + first.width <= second.x  # side by side in the speakers' order


@pytest.mark.parametrize("place", [(0.0, 0.0), (0.5, 0.5), (1.0, 1.0), (0.9, 0.2)])
def test_a_moved_bubble_sits_at_its_place_and_never_leaves_the_picture(place):
    lettering = Lettering("", (("猪猪侠", "word " * 60),), (place,))
    bubble = bubbles_over(lettering, Box(100, 50, 640, 400), 20, mono)[0]
    box = bubble.box
    assert box.x >= 100 and box.x + box.width <= 740 and box.y >= 50
    assert box.y + box.height <= 450 and bubble.lines[-1].endswith(ELLIPSIS)
    if place == (0.5, 0.5):
        assert box.x + box.width // 2 in (419, 420, 421) and box.y == 250
    tail = tail_points(bubble)
    assert not tail or all(50 <= y <= 450 for _x, y in tail)


def test_english_breaks_between_words():
    assert wrap("the pig eats the lollipop", width=60, size=10, measure=mono) == [
        "the pig eats",
        "the lollipop",
    ]


def test_chinese_breaks_between_characters_but_not_before_closing_punctuation():
    lines = wrap("猪猪侠吃下超级棒棒糖，变身！", width=50, size=10, measure=mono)
    assert lines == ["猪猪侠吃下", "超级棒棒", "糖，变身！"]


def test_a_word_wider_than_the_line_is_cut():
    assert wrap("abcdefghij", width=20, size=10, measure=mono) == ["abcd", "efgh", "ij"]


def test_lettering_past_its_box_ends_with_an_ellipsis():
    long = ComicPanel("img", Lettering("word " * 400))
    frame = paginate([long], "3-tier", mono)[0].frames[0]
    assert len(frame.lines) == frame.caption.height // frame.line_height
    assert frame.lines[-1].endswith(ELLIPSIS)
    assert all(mono(line, frame.font_size) <= frame.caption.width for line in frame.lines)


@given(
    st.text(alphabet=st.sampled_from("ab 猪侠，。!"), max_size=80),
    st.integers(min_value=10, max_value=200),
)
def test_wrapping_keeps_every_character_and_each_line_fits(text, width):
    lines = wrap(text, width=width, size=10, measure=mono)
    assert "".join(lines).replace(" ", "") == text.replace(" ", "")
    assert all(mono(line, 10) <= width for line in lines)
    assert all(line == line.strip() and line for line in lines)


def test_the_same_panels_give_the_same_pages():
    assert paginate(drawn(9), "2x2", mono) == paginate(drawn(9), "2x2", mono)
