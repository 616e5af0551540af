"""journal.chapters: chapter marks in the app state, numbered and spanned along a path;
journal.navigation's "back to where I was" and "story only" (docs/ARCHITECTURE.md §5)."""

from __future__ import annotations

import pytest

from journal.appstate import AppState, UnreadableAppState
from journal.chapters import (
    TITLE_MAX,
    BadChapter,
    chapter_numbered,
    chapters_on,
    marks_of,
    state_with_chapter,
    state_without_chapter,
    title_check,
)
from journal.navigation import state_keeping_characters, where_i_was
from tests.support.factories import assistant, branch, user

PATH = ["e0", "e1", "e2", "e3", "e4", "e5"]


def test_chapters_are_numbered_in_path_order_and_run_to_the_next_start():
    state = state_with_chapter({"characters": {}}, "e4", "Round two")
    state = state_with_chapter(state, "e1", "The lollipop")  # marked later, earlier on the path
    chapters = chapters_on(PATH, state)
    assert [(c.number, c.entry_id, c.title, c.start, c.stop) for c in chapters] == [
        (1, "e1", "The lollipop", 1, 4),
        (2, "e4", "Round two", 4, 6),
    ]
    assert chapter_numbered(chapters, 2).title == "Round two"
    assert chapter_numbered(chapters, 3) is None and chapter_numbered(chapters, 0) is None


def test_a_mark_off_the_path_is_no_chapter_of_it():
    state = state_with_chapter({}, "elsewhere", "Another branch")
    state = state_with_chapter(state, "e2", "Here")
    assert [c.entry_id for c in chapters_on(PATH, state)] == ["e2"]


def test_marking_a_node_again_renames_and_clearing_removes():
    state = state_with_chapter({"permission_mode": "auto"}, "e2", "Old")
    state = state_with_chapter(state, "e2", "  New  ")
    assert [(m.entry_id, m.title) for m in marks_of(state)] == [("e2", "New")]
    assert state["permission_mode"] == "auto"  # the rest of the state is kept
    cleared = state_without_chapter(state, "e2")
    assert cleared == {"permission_mode": "auto", "chapters": []}
    assert state_without_chapter(cleared, "e2") is None  # nothing to clear


@pytest.mark.parametrize(
    "title", ["", "   ", "x" * (TITLE_MAX + 1), "nul\x00", "lone \udc00 surrogate", 7, None]
)
def test_a_bad_title_is_refused(title):
    with pytest.raises(BadChapter):
        title_check(title)
    with pytest.raises(BadChapter):
        state_with_chapter({}, "e1", title)


def test_markup_is_kept_as_text():
    assert title_check("<script>alert(1)</script>") == "<script>alert(1)</script>"


def test_the_app_state_refuses_chapters_that_do_not_read():
    AppState.of({"chapters": [{"entry_id": "e1", "title": "One"}]})  # reads
    for bad in (
        "not a list",
        [{"entry_id": "e1"}],
        [{"entry_id": "e1", "title": ""}],
        [{"entry_id": "e1", "title": "a"}, {"entry_id": "e1", "title": "b"}],
        [{"entry_id": "e1", "title": "t", "extra": 1}],
    ):
        with pytest.raises(UnreadableAppState, match="chapters"):
            AppState.of({"chapters": bad})
    assert "chapters" not in AppState.of({}).as_json()  # a state without marks stays so


def test_a_hand_written_state_never_breaks_the_projection():
    marks = [{"entry_id": "e1", "title": ""}, "junk", {"entry_id": "e3", "title": "ok"}]
    state = {"chapters": marks}
    assert [c.entry_id for c in chapters_on(PATH, state)] == ["e3"]
    assert chapters_on(PATH, {"chapters": "junk"}) == [] and chapters_on(PATH, None) == []


def test_where_i_was_is_the_latest_rewinds_from_id():
    path = [user("u0", None), assistant("a0", "u0"), branch("b1", "a0", "x9"), user("u1", "b1")]
    assert where_i_was(path) == "x9"
    later = [*path, assistant("a1", "u1"), branch("b2", "a1", "y7"), user("u2", "b2")]
    assert where_i_was(later) == "y7"
    assert where_i_was(path[:2]) is None


def test_story_only_keeps_todays_characters_and_the_targets_rest():
    target = {"characters": {"Pig": {"buff": "lollipop"}}, "permission_mode": "ask", "x": 1}
    now = {"characters": {"Pig": {"buff": "stomach ache"}}, "permission_mode": "auto", "x": 2}
    assert state_keeping_characters(target, now) == {
        "characters": {"Pig": {"buff": "stomach ache"}},
        "permission_mode": "ask",
        "x": 1,
    }
    assert state_keeping_characters(now, now) is None  # the same characters: nothing to write
