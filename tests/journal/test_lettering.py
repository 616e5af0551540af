"""journal.lettering: the comic's editable layer kept in the app state, read back, checked."""

from __future__ import annotations

import pytest

from journal.lettering import (
    CAPTION_MAX,
    SPEECH_MAX,
    Bubble,
    ComicChanges,
    LetteringEdit,
    PageChoice,
    PanelLettering,
    UnreadableLettering,
    comic_changes,
    edit_kind,
    in_order,
    lettering_in,
    moved,
    page_choice,
    read,
    with_lettering,
    with_page,
)
from journal.pages import Lettering, PathPanel, lettered


def test_an_edit_replaces_only_what_it_names_and_the_state_keeps_it_by_panel():
    current = PanelLettering(caption="old", speech=(Bubble(character="猪猪侠", text="嘿"),))
    moved = read(
        LetteringEdit, {"speech": [{"character": "猪猪侠", "text": "哈", "x": 0.3, "y": 0.6}]}
    )
    edited = moved.applied_to(current)
    assert edited.caption == "old" and edited.speech[0].text == "哈"
    state = {"characters": {}, "permission_mode": "ask"}
    kept = with_lettering(state, "r_1", edited)
    assert "lettering" not in state  # the state handed in is not changed
    assert lettering_in(kept) == {"r_1": edited}
    assert Lettering.edited(lettering_in(kept)["r_1"]).places == ((0.3, 0.6),)


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        ({}, "say what to change"),
        ({"caption": ""}, "caption"),
        ({"caption": "   "}, "caption"),
        ({"caption": "x" * (CAPTION_MAX + 1)}, "caption"),
        ({"caption": "a\x00b"}, "caption"),
        ({"caption": "a\udcffb"}, "caption"),
        ({"speech": [{"text": ""}]}, "speech.0.text"),
        ({"speech": [{"text": "y" * (SPEECH_MAX + 1)}]}, "speech.0.text"),
        ({"speech": [{"text": "ok", "x": 1.5}]}, "speech.0.x"),
        ({"speech": [{"text": "ok", "x": float("nan")}]}, "speech.0.x"),
        ({"speech": [{"text": "ok", "colour": "red"}]}, "colour"),
        ({"speech": [{"text": "ok"}] * 5}, "speech"),
    ],
)
def test_bad_words_are_refused_naming_the_field(edit, field):
    with pytest.raises((UnreadableLettering, ValueError), match=field):
        read(LetteringEdit, edit).applied_to(PanelLettering())


def test_script_tags_are_kept_as_text_for_the_faces_to_escape():
    edit = read(LetteringEdit, {"caption": "<script>alert(1)</script>"})
    assert edit.applied_to(PanelLettering()).caption == "<script>alert(1)</script>"


def test_the_page_choice_defaults_refuses_unknown_layouts_and_orders_panels():
    assert page_choice({}) == PageChoice(layout="2x2")
    assert page_choice({"page": {"layout": "3x3"}}) == PageChoice()  # unreadable: the default
    with pytest.raises(UnreadableLettering, match="layout"):
        read(PageChoice, {"layout": "3x3"})
    with pytest.raises(UnreadableLettering, match="twice"):
        read(PageChoice, {"order": ["a", "a"]})
    state = with_page({}, PageChoice(layout="splash", order=("c", "zz", "a")))
    assert page_choice(state).layout == "splash"
    assert in_order(["a", "b", "c"], page_choice(state).order, key=str) == ["c", "a", "b"]


def test_lettered_panels_take_the_state_s_words_and_order_else_the_script_s():
    path = [PathPanel("r_1", "img_1", "p1"), PathPanel("r_2", "img_2", "p2")]
    state = with_lettering(
        with_page({}, PageChoice(order=("r_2",))), "r_1", PanelLettering(caption="edited")
    )
    panels = lettered(path, lambda p: Lettering(f"script {p.prompt}"), state)
    assert [(p.entry_id, p.lettering.caption) for p in panels] == [
        ("r_2", "script p2"),
        ("r_1", "edited"),
    ]
    unedited = lettered(path, lambda p: Lettering(f"script {p.prompt}"), None)
    assert [p.lettering.caption for p in unedited] == ["script p1", "script p2"]


def test_an_edit_is_named_by_what_it_changed():
    base = {"characters": {"猪猪侠": {"mood": "平静"}}, "permission_mode": "ask"}
    words = with_lettering(base, "r_1", PanelLettering(caption="new"))
    pages = with_page(words, PageChoice(layout="splash"))
    assert edit_kind(base, words) == "lettering"
    assert edit_kind(words, pages) == "page"
    assert edit_kind(pages, {**pages, "permission_mode": "auto"}) == "characters"
    assert edit_kind(None, base) == "characters"


def test_comic_changes_count_the_panels_of_the_path_whose_words_differ():
    words = {"caption": "old"}
    before = {
        "lettering": {"p1": words, "p2": {"caption": "new"}, "gone": words},
        "page": {"layout": "strip", "order": ["p2", "p1"]},
    }
    after = {"lettering": {"p1": words}, "page": {"layout": "2x2", "order": []}}
    # p2's words go back to its script's; "gone" is no panel of the path: not counted
    got = comic_changes(before, after, ["u", "p1", "a", "p2"], lambda: ["p1", "p2"])
    assert got == ComicChanges(panels=1, layout="2x2", order=True) and got
    assert comic_changes(after, after, ["p1", "p2"], list) == ComicChanges()
    assert not comic_changes(None, {}, ["p1"], list)


def test_an_order_that_reads_the_same_is_no_change():
    path, panels = ["p1", "x", "p2", "p3"], lambda: ["p1", "p2", "p3"]
    # naming the panels in the branch's own order reads as naming none
    same = comic_changes({"page": {"order": ["p1", "p2"]}}, {}, path, panels)
    assert same == ComicChanges()
    moved = comic_changes({"page": {"order": ["p3"]}}, {}, path, panels)
    assert moved == ComicChanges(order=True)

    def unread() -> list[str]:
        raise AssertionError("the panels are read only when the orders differ")

    before, after = {"page": {"order": ["p9", "p1"]}}, {"page": {"order": ["p1"]}}
    assert comic_changes(before, after, path, unread) == ComicChanges()


def test_a_move_goes_one_place_and_never_past_either_end():
    order = ["a", "b", "c"]
    assert moved(order, "b", -1) == ["b", "a", "c"]
    assert moved(order, "b", 1) == ["a", "c", "b"]
    assert moved(order, "a", -1) == order and moved(order, "c", 1) == order
    assert order == ["a", "b", "c"]  # not changed in place
    with pytest.raises(ValueError):
        moved(order, "z", 1)
