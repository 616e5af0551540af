"""What the artist is doing in a live region survives the region being drawn again
(static/studio/keep.js): a chapter title half typed in the tree, with its fold open and
the caret in it, while another tab's turn redraws the tree; a character's field being
edited while a run starts and ends; a panel's open "director's notes" while a new panel
arrives. A form whose own write is answered is drawn as the answer has it.

The offline director answers and draws.
"""

from __future__ import annotations

import pytest
from django.utils import timezone

from jaiweb.store.appends import append_entries
from jaiweb.store.ids import new_id
from jaiweb.store.selectors import app_state_at, session_get
from jaiweb.store.services import rewind_append
from jaiweb.studio.tree import CHAIN_PAGE, OPEN_BUDGET, PAGE, PATH_HEAD, PATH_TAIL
from journal.entries import MessageEntry, UserMessage
from tests.support.browser import (
    branch_entry_ids,
    drawn_entry_ids,
    node_of,
    open_new_session,
    panels,
    prompt_and_wait,
    run_with_approval,
    send_prompt,
    shot,
    wait_run_finished,
    wait_tree_has,
    wait_until,
    wait_ws_open,
)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.one_pass("sqlite"),  # the embedded studio (docs/TESTING.md)
]


def another_tab_prompts(page, new_page, session_id: str, text: str) -> None:
    """A second tab of the same person sends ``text`` and waits for its run; returns once
    ``page``'s tree has been redrawn (the element replaced) and shows the new turn. (The
    second tab's own tree may keep a long path folded, so only the run is waited for.)"""
    other = new_page(page.context)
    other.goto(page.url)
    wait_ws_open(other)
    tree_before = page.locator("#tree").element_handle()
    send_prompt(other, text)
    wait_run_finished(session_id)
    wait_until(lambda: not tree_before.evaluate("e => e.isConnected"), 10, "the tree redrawn")
    wait_tree_has(page, branch_entry_ids(session_id))


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

    another_tab_prompts(page, new_page, session_id, "/say the hero waves")

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

    another_tab_prompts(page, new_page, session_id, "/say the hero waves")
    assert page.evaluate("document.activeElement.closest('#tree') === null")


def test_a_forks_branches_opened_stay_open_while_another_tab_writes(shared_studio, new_page):
    """A fork whose side branches are too many to draw open (``tree.OPEN_BUDGET`` turns
    on the page) sits behind "+N"; opened, it is opened again after each redraw."""
    page = new_page()
    session_id = open_new_session(page, shared_studio.url, "forks")
    fork_at, firsts = folded_fork(page, session_id)
    node_of(page, fork_at).locator("xpath=ancestor::li[1]").locator(":scope > button.forks").click()
    wait_tree_has(page, firsts)

    another_tab_prompts(page, new_page, session_id, "/say the hero waves")
    wait_tree_has(page, firsts)  # the branches, fetched again
    assert page.locator("#tree button.forks").count() == 0
    shot(page, "forks-kept")


def test_a_fork_opened_as_the_tree_is_redrawn_is_opened_in_the_new_tree(shared_studio, new_page):
    """The "+N" click's answer comes after a redraw replaced the tree it was asked from
    (it lands in the old tree): the branches are asked for again in the new one."""
    page = new_page()
    session_id = open_new_session(page, shared_studio.url, "forks race")
    fork_at, firsts = folded_fork(page, session_id)
    held = []

    def hold_the_first(route) -> None:
        if held:
            route.continue_()
        else:
            held.append(route)  # answered below, once the tree has been redrawn

    page.route("**/tree?forks=*", hold_the_first)
    node_of(page, fork_at).locator("xpath=ancestor::li[1]").locator(":scope > button.forks").click()
    wait_until(lambda: held, 10, "the branches asked for")
    another_tab_prompts(page, new_page, session_id, "/say the hero waves")
    held[0].continue_()
    wait_tree_has(page, firsts)
    assert page.locator("#tree button.forks").count() == 0


def test_a_long_paths_more_turns_opened_stay_open_while_another_tab_writes(shared_studio, new_page):
    """A path longer than ``PATH_HEAD`` + ``PATH_TAIL`` turns folds its middle behind
    "… N more"; opened, it is opened again after each redraw."""
    page = new_page()
    session_id = open_new_session(page, shared_studio.url, "long path")
    prompt_and_wait(page, session_id, "/say the hero walks in")
    middle = PAGE // 4  # turns in the fold: fewer than one page of it
    turns = side_branch(
        session_id, session_get(session_id=session_id).leaf_id, PATH_HEAD + middle + PATH_TAIL
    )
    folded = turns[PATH_HEAD - 1 : PATH_HEAD - 1 + middle]  # after the first prompt's turn
    page.reload()
    wait_ws_open(page)
    fold = page.locator("#tree li.more > button.fold")
    wait_until(lambda: fold.count() == 1, 10, 'the middle folded behind "… N more"')
    assert not drawn_entry_ids(page) & set(folded)
    fold.click()
    wait_tree_has(page, folded)

    another_tab_prompts(page, new_page, session_id, "/say the hero waves")
    wait_tree_has(page, folded)  # the fold, asked for again
    assert page.locator("#tree li.more").count() == 0
    shot(page, "more-turns-kept")


def folded_fork(page, session_id: str) -> tuple[str, list[str]]:
    """A turn with more side branches than are drawn open (``tree.OPEN_BUDGET`` turns on
    the page), so the fork sits behind "+N"; the page reloaded and showing it folded.
    Returns the turn's last entry and each branch's first."""
    prompt_and_wait(page, session_id, "/say the hero walks in")
    fork_at = session_get(session_id=session_id).leaf_id
    branches = OPEN_BUDGET // CHAIN_PAGE + 1  # each draws CHAIN_PAGE turns when open
    firsts = [side_branch(session_id, fork_at, CHAIN_PAGE)[0] for _ in range(branches)]
    rewind_append(
        session_id=session_id,
        target_id=fork_at,
        expected_leaf_id=session_get(session_id=session_id).leaf_id,
    )
    page.reload()
    wait_ws_open(page)
    folded = (
        node_of(page, fork_at).locator("xpath=ancestor::li[1]").locator(":scope > button.forks")
    )
    wait_until(lambda: folded.count() == 1, 10, 'the fork folded behind "+N"')
    return fork_at, firsts


def side_branch(session_id: str, parent_id: str, turns: int) -> list[str]:
    """``turns`` prompts in a row after ``parent_id``, written as a run writes entries;
    the session's leaf moves to the last of them."""
    entries, parent = [], parent_id
    for n in range(turns):
        entry = MessageEntry(
            id=new_id("e"),
            parent_id=parent,
            timestamp=timezone.now(),
            message=UserMessage(content=f"a road not taken, step {n + 1}"),
        )
        entries.append(entry)
        parent = entry.id
    leaf = session_get(session_id=session_id).leaf_id
    append_entries(session_id, entries, expected_leaf_id=leaf, now=timezone.now())
    return [e.id for e in entries]
