"""The tree's tools in Chromium: what each turn charged and each branch spent, a label put
on a node from the inspector that stays through a rewind, a search of the whole tree whose
hit opens its node, and the filters that hide cards and bring them back.

The story (the offline director; drawing asks for approval, 10 credits): 猪猪侠 steps into
the ring; he takes a laxative (a panel); a stomach ache; back to after the laxative, and
he runs for the bathroom (a panel); back to after the first turn, the super lollipop (a
panel), and his skill set to 功夫大师 by hand. So turn 1 forks: the laxative branch
(laxative → stomach ache, and folded behind "+1" the bathroom) and the lollipop branch,
the active one. The database is read only to know when a run is over and what ids the
turns have.
"""

from __future__ import annotations

import pytest

from tests.support.browser import (
    SESSION_URL,
    branch_entry_ids,
    open_new_session,
    run_with_approval,
    send_prompt,
    shot,
    signup,
    unique,
    wait_run_finished,
    wait_tree_has,
    wait_until,
    wait_ws_open,
)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.one_pass("postgres"),  # on the deployment's stack (docs/TESTING.md)
]

RING = "/say 猪猪侠 steps into the ring"
LAXATIVE = "Draw a panel: the hero grabs the wrong bottle and takes a laxative"
ACHE = "/say the hero doubles over with a stomach ache"
BATHROOM = "/draw the hero runs for the bathroom"
LOLLIPOP = "Draw a panel: the hero eats a super lollipop and steps into the ring"
LABEL = "肚子疼 gut check"


def node(page, entry_id: str):
    return page.locator(f'#tree .node[data-entry-id="{entry_id}"]')


def item(page, entry_id: str):
    return node(page, entry_id).locator("xpath=ancestor::li[1]")


def turn_of(page, session_id: str, run) -> list[str]:
    """Run one turn; its entry ids (the active branch's new ones)."""
    before = branch_entry_ids(session_id)
    run()
    wait_until(lambda: branch_entry_ids(session_id) != before, 10, "the prompt accepted")
    wait_run_finished(session_id)
    after = branch_entry_ids(session_id)
    wait_tree_has(page, after)
    shared = next(
        (i for i, (a, b) in enumerate(zip(before, after, strict=False)) if a != b), len(before)
    )
    return after[shared:]


def say(page, session_id: str, text: str) -> list[str]:
    return turn_of(page, session_id, lambda: send_prompt(page, text))


def draw(page, session_id: str, text: str) -> list[str]:
    return turn_of(page, session_id, lambda: run_with_approval(page, session_id, text))


def caught_up(page, session_id: str) -> None:
    """The page shows the session's leaf as it is now: the write's answer is swapped in.
    No catch-up of the socket's from before the write follows it: the socket holds its
    regions back while the page's write is under way, and the page tells it what the
    answer brought."""
    from jaiweb.store.models import ComicSession

    leaf = ComicSession.objects.get(pk=session_id).leaf_id
    wait_until(lambda: page.locator("#prompt-leaf").input_value() == leaf, 10, "the answer's leaf")


def continue_after(page, session_id: str, entry_id: str) -> None:
    leaf = page.locator("#tree").get_attribute("data-leaf-id")
    item(page, entry_id).locator(':scope > .card [data-action="continue-turn"]').click()
    wait_until(
        lambda: page.locator("#tree").get_attribute("data-leaf-id") != leaf, 10, "the rewind"
    )
    caught_up(page, session_id)


SPENT_BADGE = """([entryId, where]) => {
    const node = document.querySelector(`#tree .node[data-entry-id="${entryId}"]`);
    const item = node && node.closest("li.item");
    const badge = !item ? null : where === "branch"
        ? item.closest("li.branch").querySelector(":scope > .spent")
        : item.querySelector(":scope > button.forks > .spent");
    if (!badge) return null;
    if (badge.dataset.spent !== undefined) return [badge.dataset.spent, badge.textContent];
    badge.scrollIntoView({block: "nearest"});
    return null;
}"""


def spent_of(page, entry_id: str, where: str) -> tuple[int, str]:
    """The spent badge of the branch that holds a turn (``branch``) or of the folded fork
    off it (``fold``), once in view and loaded (it loads when scrolled into view; the tree
    may be redrawn meanwhile, so it is looked up afresh each time)."""
    found = wait_until(
        lambda: page.evaluate(SPENT_BADGE, [entry_id, where]), 10, f"the {where} spent badge"
    )
    return int(found[0]), found[1]


def search(page, query: str):
    box = page.locator('.tree-search input[name="q"]')
    box.fill(query)
    page.locator('.tree-search [data-action="search"]').click()
    results = page.locator("#tree-search-results")
    message = results.locator(".search-message")
    wait_until(
        lambda: message.count() == 1 and message.get_attribute("data-query") == query.strip(),
        10,
        f"the results for {query!r}",
    )
    return results


def shown_cards(page) -> list[str]:
    return page.locator("#tree .node:visible").evaluate_all(
        "els => els.map(e => e.dataset.entryId)"
    )


def test_costs_labels_search_and_filters(shared_studio, page):
    base = shared_studio.url
    signup(page, base, unique("tree_"))
    page.locator('input[name="title"]').fill("猪猪侠 and the laxative")
    page.locator('textarea[name="characters"]').fill("猪猪侠")
    page.locator('[data-action="create-session"]').click()
    page.wait_for_url(SESSION_URL)
    session_id = SESSION_URL.search(page.url).group(1)
    wait_ws_open(page)

    ring = say(page, session_id, RING)
    laxative = draw(page, session_id, LAXATIVE)
    ache = say(page, session_id, ACHE)
    continue_after(page, session_id, laxative[-1])
    bathroom = draw(page, session_id, BATHROOM)

    # the stomach ache is off the active path now, drawn open: label it from the inspector
    node(page, ache[-1]).click()
    page.locator(f'#inspector [data-step-entry="{ache[0]}"]').wait_for()
    form = page.locator("#inspector .node-labels form.label-add")
    form.locator('input[name="text"]').fill(LABEL)
    form.locator('[data-action="add-label"]').click()
    page.locator(f'#inspector .node-labels .label-chip[data-label="{LABEL}"]').wait_for()
    chip = node(page, ache[-1]).locator(f'.label-chip[data-label="{LABEL}"]')
    chip.wait_for()

    continue_after(page, session_id, ring[-1])
    lollipop = draw(page, session_id, LOLLIPOP)
    hero = page.locator('#character-state form.character[data-character="猪猪侠"]')
    hero.locator('input[name="skill"]').fill("功夫大师")
    hero.locator('button[type="submit"]').click()
    state_turn = wait_until(
        lambda: (leaf := branch_entry_ids(session_id)[-1]) != lollipop[-1] and leaf,
        10,
        "the state edit",
    )
    node(page, state_turn).wait_for()
    caught_up(page, session_id)

    # the label survived two rewinds: still on its node, drawn on the abandoned branch
    chip.wait_for()
    assert node(page, ache[-1]).get_attribute("data-active") is None

    # each turn says what it charged; the stomach ache and the first turn charged nothing
    for turn in (laxative, lollipop):
        badge = node(page, turn[-1]).locator('[data-badge="charged"]')
        assert badge.get_attribute("data-credits") == "10"
        assert "10 credits" in badge.inner_text()
    for turn in (ring, ache):
        assert node(page, turn[-1]).locator('[data-badge="charged"]').count() == 0
    # the laxative branch spent 20 (its panel and the bathroom's, folded below it)…
    assert spent_of(page, laxative[-1], "branch") == (20, "20 credits spent")
    # …and its folded "+1" (the bathroom) 10, before it is opened
    assert node(page, bathroom[-1]).count() == 0
    assert spent_of(page, laxative[-1], "fold") == (10, "10 credits spent")
    shot(page, "tree-costs-and-labels")

    # search the label: one hit, a click opens its node in the inspector and marks it
    results = search(page, "GUT check")
    hit = results.locator('.search-hit[data-where="label"]')
    assert hit.count() == 1 and hit.locator("mark").inner_text() == "gut check"
    hit.click()
    page.locator(f'#inspector [data-step-entry="{ache[0]}"]').wait_for()
    wait_until(lambda: node(page, ache[-1]).get_attribute("data-jumped") == "true", 10, "mark")

    # a prompt word of the abandoned branch, and one of the folded part (not drawn)
    results = search(page, "stomach")
    hit = results.locator(f'.search-hit[data-hit-entry="{ache[0]}"]')
    assert "stomach" in hit.locator("mark").inner_text()
    node(page, ring[-1]).click()  # the inspector elsewhere first
    page.locator(f'#inspector [data-step-entry="{ring[0]}"]').wait_for()
    hit.click()
    page.locator(f'#inspector [data-step-entry="{ache[0]}"]').wait_for()
    wait_until(lambda: node(page, ache[-1]).get_attribute("data-jumped") == "true", 10, "mark")
    results = search(page, "bathroom")
    results.locator(f'.search-hit[data-hit-entry="{bathroom[0]}"]').click()
    page.locator(f'#inspector [data-step-entry="{bathroom[0]}"]').wait_for()
    note = page.locator("[data-jump-note]")
    assert note.is_visible() and "folded" in note.inner_text()
    assert "stomach" not in page.locator("#inspector ol.steps").inner_text()

    assert "Type a word" in search(page, "   ").inner_text()
    assert "Nothing in this tree matches" in search(page, "no such thing here").inner_text()
    assert page.locator('.tree-search input[name="q"]').get_attribute("maxlength") == "200"

    # filters: the cards that do not match hide, the count says how many, "show all"
    everything = shown_cards(page)
    assert set(everything) == {ring[-1], laxative[-1], ache[-1], lollipop[-1], state_turn}
    filters = page.locator(".tree-filters")
    count = filters.locator("[data-filter-count]")
    filters.locator('[data-filter="labelled"]').click()
    assert shown_cards(page) == [ache[-1]]
    assert count.inner_text() == "4 of the 5 turns drawn are hidden"
    filters.locator('[data-filter="panels"]').click()
    assert sorted(shown_cards(page)) == sorted([laxative[-1], lollipop[-1]])
    assert count.inner_text() == "3 of the 5 turns drawn are hidden"
    filters.locator('[data-filter="prompts"]').click()
    assert state_turn not in shown_cards(page) and len(shown_cards(page)) == 4
    shot(page, "tree-filtered")
    filters.locator('[data-filter="all"]').click()
    assert shown_cards(page) == everything and not count.is_visible()
    assert not filters.locator('[data-filter="all"]').is_visible()

    # a filter holds through a redraw of the tree: a prompt after the state edit makes one
    # turn of both (the edit led up to it), a new card, judged too
    filters.locator('[data-filter="panels"]').click()
    newest = say(page, session_id, "/say the bell rings")
    assert node(page, state_turn).count() == 0 and node(page, newest[-1]).count() == 1
    wait_until(lambda: node(page, newest[-1]).is_hidden(), 10, "the new card filtered")
    assert count.inner_text() == "3 of the 5 turns drawn are hidden"

    # the arrow keys step over the cards a filter hid: ↑ from the labelled stomach ache
    # passes the hidden laxative turn and lands on the first turn, labelled too
    def focused() -> str | None:
        return page.evaluate("() => document.activeElement.dataset.entryId || null")

    filters.locator('[data-filter="all"]').click()
    node(page, ring[-1]).click()
    page.locator(f'#inspector [data-step-entry="{ring[0]}"]').wait_for()
    form.locator('input[name="text"]').fill("opening")
    form.locator('[data-action="add-label"]').click()
    node(page, ring[-1]).locator('.label-chip[data-label="opening"]').wait_for()
    filters.locator('[data-filter="labelled"]').click()
    assert sorted(shown_cards(page)) == sorted([ring[-1], ache[-1]])
    node(page, ache[-1]).focus()
    page.keyboard.press("ArrowUp")
    assert focused() == ring[-1]


def test_a_tree_redrawn_by_another_tab_keeps_the_keyboard_focus(shared_studio, page):
    """A keyboard user on a node of the tree stays on it while live updates redraw the
    tree: another tab's turn here, which redraws it several times."""
    base = shared_studio.url
    session_id = open_new_session(page, base, "focus")
    first = say(page, session_id, "/say one")
    second = say(page, session_id, "/say two")
    node(page, first[-1]).focus()
    page.evaluate("window.treeBefore = document.getElementById('tree')")

    other = page.context.new_page()
    other.goto(f"{base}/sessions/{session_id}/")
    wait_ws_open(other)
    third = say(other, session_id, "/say three")
    wait_tree_has(page, third)
    assert page.evaluate("document.getElementById('tree') !== window.treeBefore")
    focused = "() => document.activeElement.dataset.entryId || null"
    assert page.evaluate(focused) == first[-1]
    page.keyboard.press("ArrowDown")
    assert page.evaluate(focused) == second[-1]
