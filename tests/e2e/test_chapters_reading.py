"""Chapters, unread dots and "back to where I was" in Chromium (issue 30).

The story (the offline director, narration only, nothing charged): 猪猪侠 steps into the
ring; he bows; he eats a lollipop. Back to after the first turn, and he takes a laxative
instead: turn 1 forks, the lollipop branch left behind. The owner marks two chapters on
the tree, two staff members look at the session (each with a dot on the branch they have
not opened, gone for the one who opens it only), and the owner goes back to where they
were, in one click. The database is read only to know when a run is over and what ids
the turns have.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Error as PlaywrightError

from tests.support.browser import (
    PASSWORD,
    SESSION_URL,
    branch_entry_ids,
    login,
    send_prompt,
    shot,
    signup,
    unique,
    user_for_the_studio,
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

RING = "/say 猪猪侠 steps into the ring"
BOW = "/say 猪猪侠 bows to the crowd"
LOLLIPOP = "/say 猪猪侠 eats a super lollipop"
LAXATIVE = "/say 猪猪侠 takes a laxative by mistake"


def node(page, entry_id: str):
    return page.locator(f'#tree .node[data-entry-id="{entry_id}"]')


def item(page, entry_id: str):
    return node(page, entry_id).locator("xpath=ancestor::li[1]")


def leaf_of(page) -> str:
    return page.locator("#tree").get_attribute("data-leaf-id") or ""


def say(page, session_id: str, text: str) -> list[str]:
    """One turn; its new entry ids on the active branch."""
    before = branch_entry_ids(session_id)
    send_prompt(page, text)
    wait_until(lambda: branch_entry_ids(session_id) != before, 10, "the prompt accepted")
    wait_run_finished(session_id)
    after = branch_entry_ids(session_id)
    wait_tree_has(page, after)
    wait_until(lambda: leaf_of(page) == after[-1], 10, "the tree at the new leaf")
    shared = next(
        (i for i, (a, b) in enumerate(zip(before, after, strict=False)) if a != b), len(before)
    )
    return after[shared:]


def start_chapter(page, session_id: str, entry_id: str, title: str) -> None:
    before = leaf_of(page)
    mark = item(page, entry_id).locator(":scope > .card details.chapter-mark")
    mark.locator("summary").click()
    mark.locator('input[name="title"]').fill(title)
    mark.locator('[data-action="chapter-save"]').click()
    wait_until(lambda: leaf_of(page) != before, 10, "the chapter's app_state entry")


def scrolled_to(locator) -> bool:
    """Scroll ``locator`` into view; False when the element it found was replaced meanwhile."""
    try:
        locator.scroll_into_view_if_needed(timeout=2000)
    except PlaywrightError:
        return False
    return True


def headings(page) -> list[tuple[str, str]]:
    found = page.locator("#tree h3.chapter-heading").evaluate_all(
        "els => els.map(e => [e.dataset.chapter, e.querySelector('.chapter-title').textContent])"
    )
    return [tuple(h) for h in found]


def unread_items(page) -> list[str]:
    return page.locator('#tree li.item[data-unread="true"] > .card .node').evaluate_all(
        "els => els.map(e => e.dataset.entryId)"
    )


def test_chapters_unread_dots_and_back(shared_studio, new_page):
    base = shared_studio.url
    owner = new_page()
    signup(owner, base, unique("chap_"))
    owner.locator('input[name="title"]').fill("猪猪侠 <i>chapters</i>")
    owner.locator('[data-action="create-session"]').click()
    owner.wait_for_url(SESSION_URL)
    session_id = SESSION_URL.search(owner.url).group(1)
    wait_ws_open(owner)

    ring = say(owner, session_id, RING)
    bow = say(owner, session_id, BOW)
    lollipop = say(owner, session_id, LOLLIPOP)
    # continue from after the first turn: the bow and the lollipop stay on their branch
    item(owner, ring[-1]).locator(':scope > .card [data-action="continue-turn"]').click()
    wait_until(lambda: leaf_of(owner) not in ("", lollipop[-1]), 10, "the rewind")
    laxative = say(owner, session_id, LAXATIVE)

    # two chapters on the active branch: headings on the tree, in path order
    start_chapter(owner, session_id, laxative[-1], "The <script>laxative</script>")
    start_chapter(owner, session_id, ring[-1], "The ring")
    wait_until(lambda: len(headings(owner)) == 2, 10, "two chapter headings")
    assert headings(owner) == [("1", "The ring"), ("2", "The <script>laxative</script>")]
    assert owner.locator("#tree h3.chapter-heading script").count() == 0  # text, not markup
    # the marks are one state turn at the leaf, which says what changed
    assert "chapters changed" in node(owner, leaf_of(owner)).inner_text()
    first = item(owner, ring[-1]).locator(":scope > h3.chapter-heading")
    assert first.is_visible()
    # the tree may be drawn again under the locator (a live update): scroll the new one
    wait_until(lambda: scrolled_to(first), 10, "the first chapter heading in view")
    shot(owner, "tree-chapters")

    # the owner saw both branches when each was active: nothing unread for them
    next_unread = owner.locator('[data-action="next-unread"]')
    wait_until(lambda: next_unread.get_attribute("data-unread") == "0", 10, "no unread")
    assert next_unread.is_disabled()

    # two staff members may read the session; the lollipop branch is unread for both
    readers = []
    for name in ("staff_a", "staff_b"):
        username = unique(name)
        user_for_the_studio(username, PASSWORD, is_staff=True)
        page = new_page()
        login(page, base, username)
        page.goto(f"{base}/sessions/{session_id}/")
        wait_ws_open(page)
        readers.append(page)
    for page in readers:
        wait_until(lambda p=page: unread_items(p) == [bow[-1]], 10, "the unread dot on the bow")
        assert page.locator('[data-action="next-unread"] [data-unread-count]').inner_text() == "1"
    dot = item(readers[0], bow[-1]).locator("[data-unread-dot]")
    assert dot.is_visible()
    dot.scroll_into_view_if_needed()
    shot(readers[0], "tree-unread-dot")

    # the first opens it by "next unread": the inspector opens on it, and the dot goes
    readers[0].locator('[data-action="next-unread"]').click()
    readers[0].locator(f'#inspector [data-step-entry="{bow[0]}"]').wait_for()
    wait_until(lambda: unread_items(readers[0]) == [], 10, "the dot gone for the reader")
    assert readers[0].locator('[data-action="next-unread"]').is_disabled()
    shot(readers[0], "tree-unread-read")
    # ... only for them: the other still has it, after a reload too
    readers[1].reload()
    wait_ws_open(readers[1])
    wait_until(lambda: unread_items(readers[1]) == [bow[-1]], 10, "the other reader's dot")

    # back to where I was: previewed above the tree, one click to the lollipop's end
    back = owner.locator("#tree .back-bar")
    assert back.get_attribute("data-back-target") == lollipop[-1]
    back.locator(".back-preview > summary").click()  # what it rolls back, before the click
    preview = back.locator('[data-preview="back"]')
    preview.wait_for()
    assert "“Back to where I was” rolls back:" in preview.inner_text()
    assert "0 credits stay spent" in preview.inner_text()
    # the chapters were marked on this branch's state: going back rolls them back
    chapters = preview.locator('[data-change="chapters"]').inner_text()
    assert chapters == "Chapters: The <script>laxative</script> · The ring → none", chapters
    owner.locator("#tree").evaluate("t => t.scrollTop = 0")
    shot(owner, "tree-back-to-where-i-was")
    chapters_leaf = leaf_of(owner)
    back.locator('[data-action="back"]').click()
    wait_until(lambda: leaf_of(owner) not in (chapters_leaf, ""), 10, "the rewind back")
    assert node(owner, lollipop[-1]).get_attribute("data-leaf") == "true"
    active = owner.locator('#tree .node[data-active="true"]').evaluate_all(
        "els => els.map(e => e.dataset.entryId)"
    )
    assert active == [ring[-1], bow[-1], lollipop[-1]]
    assert headings(owner) == []  # the chapters were marked on the other branch's state
    # and back again, to where the chapters are
    owner.locator('#tree .back-bar [data-action="back"]').click()
    wait_until(lambda: len(headings(owner)) == 2, 10, "the chapters back with the branch")
    shot(owner, "tree-back-again")
