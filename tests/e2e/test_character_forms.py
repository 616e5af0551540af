"""The character forms in Chromium while the session moves on in another tab.

#character-state names no leaf (its HTML is kept by what it shows), so an entry that
changes none of it is not sent to the page again: what the artist is typing in a
character's field stays. The form sends the leaf the page shows when it is saved, so a
save on a page that is current goes through, and one on a page left behind is refused.
"""

from __future__ import annotations

import pytest

from jaiweb.store.selectors import app_state_at, session_get
from tests.support.browser import (
    branch_entry_ids,
    open_new_session,
    prompt_and_wait,
    shot,
    tree_leaf,
    wait_until,
    wait_ws_open,
)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.one_pass("sqlite"),  # the embedded studio (docs/TESTING.md)
]


def buff_of(session_id: str, name: str) -> str | None:
    state = app_state_at(session=session_get(session_id=session_id))
    return state["characters"][name].get("buff")


def test_a_field_being_typed_stays_while_another_tab_writes(shared_studio, new_page):
    page = new_page()
    session_id = open_new_session(page, shared_studio.url, "cast", characters="Pig-Man")
    prompt_and_wait(page, session_id, "/say the hero waves")
    form = page.locator('#character-state form.character[data-character="Pig-Man"]')
    form.locator('input[name="buff"]').fill("lollipop")

    # another tab of the same artist starts a chapter on the turn: a new leaf
    other = new_page(page.context)
    other.goto(page.url)
    wait_ws_open(other)
    before = tree_leaf(page)
    turn = other.locator(f'#tree .node[data-entry-id="{before}"]').locator("xpath=ancestor::li[1]")
    mark = turn.locator(":scope > .card details.chapter-mark")
    mark.locator("summary").click()
    mark.locator('input[name="title"]').fill("Opening")
    mark.locator('[data-action="chapter-save"]').click()
    wait_until(lambda: tree_leaf(page) not in ("", before), 10, "this tab at the chapter's leaf")
    page.locator("#tree h3.chapter-heading").wait_for(state="attached")

    # the chapter changed nothing the character forms show: the text being typed is there
    # (back on this tab: Chromium gives a tab behind another almost no animation frames)
    page.bring_to_front()
    assert form.locator('input[name="buff"]').input_value() == "lollipop"
    form.locator('button[type="submit"]').click()
    wait_until(lambda: buff_of(session_id, "Pig-Man") == "lollipop", 10, "the buff saved")
    assert page.locator("#form-error").inner_text().strip() == ""
    shot(page, "character-typed-kept")


def test_a_character_saved_on_a_page_left_behind_is_refused(shared_studio, page):
    session_id = open_new_session(page, shared_studio.url, "cast", characters="Pig-Man")
    prompt_and_wait(page, session_id, "/say the hero waves")
    before = branch_entry_ids(session_id)
    form = page.locator('#character-state form.character[data-character="Pig-Man"]')
    assert form.locator('input[name="expected_leaf_id"]').input_value() == ""

    page.locator("#tree").evaluate("(e, leaf) => { e.dataset.leafId = leaf; }", before[-2])
    form.locator('input[name="buff"]').fill("lollipop")
    form.locator('button[type="submit"]').click()
    error = page.locator("#form-error")
    wait_until(lambda: error.inner_text().strip() != "", 10, "the stale save's refusal")
    assert branch_entry_ids(session_id) == before
    assert buff_of(session_id, "Pig-Man") != "lollipop"
