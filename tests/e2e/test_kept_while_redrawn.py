"""What the artist is doing in a live region survives the region being drawn again
(static/studio/keep.js): a chapter title half typed in the tree, with its fold open and
the caret in it, while another tab's turn redraws the tree; a character's field being
edited while a run starts and ends; a panel's open "director's notes" while a new panel
arrives. A form whose own write is answered is drawn as the answer has it.

The offline director answers and draws.
"""

from __future__ import annotations

import pytest

from jaiweb.store.selectors import app_state_at, session_get
from tests.support.browser import (
    branch_entry_ids,
    open_new_session,
    panels,
    prompt_and_wait,
    run_with_approval,
    shot,
    wait_tree_has,
    wait_until,
    wait_ws_open,
)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.one_pass("sqlite"),  # the embedded studio (docs/TESTING.md)
]


def chapter_fold(page, entry_id: str):
    item = page.locator(f'#tree li.item[data-item="{entry_id}"]')
    return item.locator(":scope > .card details.chapter-mark")


def test_a_chapter_title_being_typed_stays_while_another_tab_writes(shared_studio, new_page):
    page = new_page()
    session_id = open_new_session(page, shared_studio.url, "chapters")
    prompt_and_wait(page, session_id, "/say the hero walks in")
    first_turn = page.locator("#tree li.item").first.get_attribute("data-item")
    fold = chapter_fold(page, first_turn)
    fold.locator("summary").click()
    title = fold.locator('input[name="title"]')
    title.fill("The opening")
    title.press("Home")  # the caret at the start of what is typed

    other = new_page(page.context)
    other.goto(page.url)
    wait_ws_open(other)
    tree_before = page.locator("#tree").element_handle()
    prompt_and_wait(other, session_id, "/say the hero waves")
    wait_until(lambda: not tree_before.evaluate("e => e.isConnected"), 10, "the tree redrawn")
    wait_tree_has(page, branch_entry_ids(session_id))

    fold = chapter_fold(page, first_turn)
    assert fold.evaluate("d => d.open")
    assert fold.locator('input[name="title"]').input_value() == "The opening"
    assert page.evaluate("document.activeElement.name") == "title"
    assert page.evaluate("document.activeElement.selectionStart") == 0
    shot(page, "chapter-title-kept")

    # saved: the answer draws the chapter, its fold closed and its field as the server has it
    fold.locator('[data-action="chapter-save"]').click()
    heading = page.locator("#tree h3.chapter-heading .chapter-title")
    wait_until(lambda: heading.count() == 1, 10, "the chapter's heading")
    assert heading.inner_text() == "The opening"
    assert not chapter_fold(page, first_turn).evaluate("d => d.open")


def test_a_character_field_and_open_notes_stay_through_a_run(shared_studio, page):
    session_id = open_new_session(page, shared_studio.url, "cast", characters="Pig-Man")
    run_with_approval(page, session_id, "/draw the hero in the ring")
    notes = panels(page).first.locator("details.narration-fold")
    notes.locator("summary").click()
    form = page.locator('#character-state form.character[data-character="Pig-Man"]')
    form.locator('input[name="mood"]').fill("sleepy")

    # a run starts and ends: #character-state is drawn again twice (its buttons), the
    # strip once more
    state_before = page.locator("#character-state").element_handle()
    prompt_and_wait(page, session_id, "/say the hero yawns")
    wait_until(lambda: not state_before.evaluate("e => e.isConnected"), 10, "a redraw")
    assert form.locator('input[name="mood"]').input_value() == "sleepy"
    assert panels(page).first.locator("details.narration-fold").evaluate("d => d.open")

    form.locator('button[type="submit"]').click()
    wait_until(
        lambda: (
            app_state_at(session=session_get(session_id=session_id))["characters"]["Pig-Man"].get(
                "mood"
            )
            == "sleepy"
        ),
        10,
        "the mood saved",
    )
    shot(page, "character-field-kept")


def test_a_button_keeps_no_focus_through_a_redraw(shared_studio, new_page):
    # after a redraw the same place may hold another button (the next approval's): a
    # second keypress must not press it, so only a field gets its focus back
    page = new_page()
    session_id = open_new_session(page, shared_studio.url, "buttons")
    prompt_and_wait(page, session_id, "/say the hero walks in")
    prompt_and_wait(page, session_id, "/say the hero sits down")
    first_turn = page.locator("#tree li.item").first.get_attribute("data-item")
    button = page.locator(f'#tree li.item[data-item="{first_turn}"] [data-action="continue-turn"]')
    button.focus()
    assert page.evaluate("document.activeElement.dataset.action") == "continue-turn"

    other = new_page(page.context)
    other.goto(page.url)
    wait_ws_open(other)
    tree_before = page.locator("#tree").element_handle()
    prompt_and_wait(other, session_id, "/say the hero waves")
    wait_until(lambda: not tree_before.evaluate("e => e.isConnected"), 10, "the tree redrawn")
    assert page.evaluate("document.activeElement.closest('#tree') === null")
