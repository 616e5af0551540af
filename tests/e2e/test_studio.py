"""The studio page in Chromium: prompt → narration → approval → panel; rewind and fork;
two tabs and Stop; prompts that look like HTML stay text.

The offline director answers (no model configured): a prompt with "lollipop" sets the
hero's state and draws a panel, one with "laxative" sets another state and draws, one
that asks to draw ("Draw a panel: …", "/draw …") draws. Drawing asks for approval (10
credits) while the session is in "ask" mode.
The database is read only to know when a run is over and which entries it wrote.
"""

from __future__ import annotations

import pytest

from tests.support.browser import (
    active_tree_ids,
    branch_entry_ids,
    credits,
    node_of,
    open_new_session,
    panels,
    run_with_approval,
    send_prompt,
    shot,
    tree_ids,
    wait_character_state,
    wait_credits,
    wait_page_at_leaf,
    wait_run_finished,
    wait_stream_has,
    wait_tree_has,
    wait_until,
    wait_ws_open,
)

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

LOLLIPOP = "Draw a panel: the hero eats a super lollipop and steps into the ring"
LAXATIVE = "Draw a panel: the hero grabs the wrong bottle and takes a laxative"
WIN = "Draw a panel: the hero wins the bout with one slap"
LOLLIPOP_BUFF = "Super lollipop"  # the lollipop rule's buff, in the session's language
LAXATIVE_BUFF = "Expired laxative"
IDLE_SECONDS = 7
NARRATION = "[offline director]"  # how the director's narration starts (English prompts)


def test_prompt_streams_asks_draws_and_charges(shared_studio, page):
    base = shared_studio.url
    session_id = open_new_session(page, base, "first episode")
    assert page.url == f"{base}/sessions/{session_id}/"
    before = credits(page)
    assert before == 100, "a new account starts with 100 credits"
    assert panels(page).count() == 0
    # no model is configured: the page says the offline director writes the story
    assert "offline director" in page.locator("#session-notice").inner_text()

    send_prompt(page, LOLLIPOP)
    wait_stream_has(page, NARRATION)  # the narration streamed in
    approve = page.locator('[data-action="approve"]:visible').first
    approve.wait_for()
    assert page.locator('[data-action="deny"]:visible').count() >= 1
    approve.click()

    panel = panels(page).first
    panel.wait_for()
    img = panel.locator("img, svg").first
    img.wait_for()
    if img.evaluate("e => e.tagName") == "IMG":
        wait_until(
            lambda: img.evaluate("e => e.complete && e.naturalWidth > 0"), 10, "the panel image"
        )
    wait_credits(page, before - 10)
    wait_run_finished(session_id)
    wait_tree_has(page, branch_entry_ids(session_id))
    wait_character_state(page, LOLLIPOP_BUFF)

    # what the page shows is the journal's: a reload draws the same
    page.reload()
    wait_ws_open(page)
    assert panels(page).count() == 1
    assert credits(page) == before - 10
    shot(page, "studio")


def test_rewind_to_an_earlier_node_and_fork(shared_studio, page):
    base = shared_studio.url
    session_id = open_new_session(page, base, "forks")
    run_with_approval(page, session_id, LOLLIPOP)
    first_run = branch_entry_ids(session_id)
    run_with_approval(page, session_id, LAXATIVE)
    both_runs = branch_entry_ids(session_id)
    second_run = both_runs[len(first_run) :]
    wait_character_state(page, LAXATIVE_BUFF)
    assert panels(page).count() == 2

    # rewind: the last node of the first run, then "continue here"
    target = first_run[-1]
    page.locator(f'#tree [data-entry-id="{target}"]').first.click()
    inspector = page.locator("#inspector")
    inspector.locator('[data-action="continue-here"]').wait_for()
    inspector.locator('[data-action="continue-here"]').click()

    wait_character_state(page, LOLLIPOP_BUFF, lacks=LAXATIVE_BUFF)
    wait_until(lambda: panels(page).count() == 1, 10, "the strip of the earlier branch")

    # the abandoned branch is still in the tree, no longer on the active path
    active = set(active_tree_ids(page))
    assert target in active
    assert not (set(second_run) & active), "the old branch is still marked active"
    # one node per turn: the second run's node is named by its last entry
    if second_run[-1] not in set(tree_ids(page)):  # folded behind "+1" on the fork: open it
        fork = page.locator(f'#tree [data-entry-id="{target}"]').first
        fork.locator("xpath=ancestor::li[1]").locator(":scope > button.forks").first.click()
        wait_tree_has(page, second_run)
    old = page.locator(f'#tree [data-entry-id="{second_run[-1]}"]').first
    assert old.get_attribute("data-active") != "true"
    assert old.get_attribute("data-parent-id") in (None, target)

    # a new prompt grows a new branch from the same node
    run_with_approval(page, session_id, WIN)
    wait_character_state(page, LOLLIPOP_BUFF, lacks=LAXATIVE_BUFF)
    third = branch_entry_ids(session_id)
    assert third[: len(first_run)] == first_run
    assert not (set(third) & set(second_run))
    from jaiweb.store.models import Entry

    children = Entry.objects.filter(session_id=session_id, parent_id=target).count()
    assert children == 2, "the node we continued from has the old and the new branch"
    wait_until(  # its turns' nodes: the first run's, then the new one
        lambda: {first_run[-1], third[-1]} <= set(active_tree_ids(page)),
        10,
        "the new branch active",
    )
    assert panels(page).count() == 2  # the first run's panel and the new one

    # for the picture: both branches open, the fork node inspected
    fork = page.locator(f'#tree [data-entry-id="{target}"]').first
    more = fork.locator("xpath=ancestor::li[1]").locator(":scope > button.forks")
    if more.count():
        more.first.click()
        wait_tree_has(page, second_run)
    # the node has two children: the abandoned branch and the one grown from the rewind
    children_drawn = page.locator(f'#tree [data-entry-id][data-parent-id="{target}"]')
    assert children_drawn.count() == 2, tree_ids(page)
    fork.click()  # its turn, step by step: the prompt first
    page.locator("#inspector").filter(has_text=LOLLIPOP).wait_for()
    shot(page, "tree")


def test_two_tabs_see_the_same_run_and_stop_ends_it(shared_studio, new_page):
    from jaiweb.store.models import Operation

    first = new_page()
    base = shared_studio.url
    session_id = open_new_session(first, base, "two tabs")
    second = new_page(first.context)  # another tab: same user, same cookies
    second.goto(first.url)
    wait_ws_open(second)

    send_prompt(first, LOLLIPOP)
    for who, tab in (("the first tab", first), ("the second tab", second)):
        wait_stream_has(tab, NARRATION, who)
        tab.locator('[data-action="approve"]:visible').first.wait_for()
    ids = branch_entry_ids(session_id)
    for tab in (first, second):
        wait_tree_has(tab, ids)
    wait_until(
        lambda: first.locator("#stream").inner_text() == second.locator("#stream").inner_text(),
        10,
        "both tabs to show the same narration",
    )

    # the run waits for the approval: Stop, from the other tab, ends it
    [op] = Operation.objects.filter(session_id=session_id, outcome__isnull=True)
    stop = second.locator('[data-action="stop"]:visible').first
    stop.click()
    wait_run_finished(session_id, 20)
    op.refresh_from_db()
    assert op.outcome == "aborted", op.outcome
    for tab in (first, second):
        wait_until(
            lambda tab=tab: tab.locator('[data-action="approve"]:visible').count() == 0,
            10,
            "the approval prompt to go away",
        )
        wait_tree_has(tab, branch_entry_ids(session_id))
    assert sorted(tree_ids(first)) == sorted(tree_ids(second))
    assert credits(first) == 100  # nothing was drawn
    assert panels(first).count() == 0

    # and the session takes a new prompt, seen in both tabs
    send_prompt(second, WIN)
    first.locator('[data-action="approve"]:visible').first.wait_for()
    first.locator('[data-action="approve"]:visible').first.click()
    wait_run_finished(session_id)
    for tab in (first, second):
        panels(tab).first.wait_for()
        wait_credits(tab, 90)


XSS_SCRIPT = "<script>window.__x=1</script>"
XSS_IMG = '"><img src=x onerror="window.__y=1">'


def injected(page) -> list[str]:
    """Elements the two prompts would have made, had they been parsed as HTML."""
    return page.evaluate(
        """() => [
            ...[...document.querySelectorAll("script")]
                .filter(s => s.textContent.includes("__x")),
            ...document.querySelectorAll("[onerror]"),
            ...document.querySelectorAll('img[src="x"]'),
        ].map(e => e.outerHTML)"""
    )


def test_prompts_that_look_like_html_stay_text(shared_studio, page):
    base = shared_studio.url
    session_id = open_new_session(page, base, "<b>not bold</b>")
    assert page.locator("b", has_text="not bold").count() == 0  # the title is text too
    for text in (XSS_SCRIPT, XSS_IMG):
        send_prompt(page, f"/draw {text}")  # a panel of it: the approval shows it too
        deny = page.locator('[data-action="deny"]:visible').first
        deny.wait_for()
        # the narration quotes the scene it would draw: as text
        wait_until(
            lambda text=text: text in page.locator("#stream").inner_text(),
            10,
            f"#stream to show {text!r} as text",
        )
        assert injected(page) == [], "markup from the prompt became elements"
        deny.click()
        wait_run_finished(session_id)
        wait_tree_has(page, branch_entry_ids(session_id))

    tree_text = page.locator("#tree").inner_text()
    assert XSS_SCRIPT in tree_text
    assert XSS_IMG in tree_text
    assert injected(page) == []

    # the inspector shows each prompt as text too
    from jaiweb.store.models import Entry

    for text in (XSS_SCRIPT, XSS_IMG):
        user_entries = [
            row.entry_id
            for row in Entry.objects.filter(session_id=session_id).order_by("seq")
            if row.to_journal().type == "message"
            and row.to_journal().message.role == "user"
            and row.to_journal().message.content == f"/draw {text}"
        ]
        assert user_entries, f"no user entry for {text!r}"
        node_of(page, user_entries[0]).click()  # the node of the turn that prompt began
        inspector = page.locator("#inspector")
        inspector.filter(has_text=text).wait_for()
        assert injected(page) == []

    page.reload()
    wait_ws_open(page)
    assert XSS_SCRIPT in page.locator("#tree").inner_text()
    assert page.evaluate("typeof window.__x") == "undefined"
    assert page.evaluate("typeof window.__y") == "undefined"
    assert injected(page) == []


def test_the_body_says_when_the_socket_is_open_and_it_stays_open(shared_studio, page):
    base = shared_studio.url
    open_new_session(page, base, "socket")
    assert page.evaluate("document.body.dataset.ws") == "open"

    # an idle socket is not dropped and reopened (with the Redis layer, redis-py 8's
    # default 5 s socket timeout used to end every idle consumer)
    page.evaluate(
        """() => {
            window.__wsChanges = [];
            new MutationObserver(() => window.__wsChanges.push(document.body.dataset.ws))
                .observe(document.body, {attributes: true, attributeFilter: ["data-ws"]});
        }"""
    )
    page.wait_for_timeout(IDLE_SECONDS * 1000)
    assert page.evaluate("window.__wsChanges") == [], "the socket closed while idle"
    assert page.evaluate("document.body.dataset.ws") == "open"

    # navigating away and back opens it again
    page.goto(f"{base}/")
    page.go_back()
    wait_ws_open(page)


def test_a_tab_behind_another_is_told_the_session_moved_on_and_keeps_its_text(
    shared_studio, new_page
):
    """Tab A rewinds; tab B, whose socket has not brought that news yet, sends a prompt."""
    import re

    from jaiweb.store.models import Entry, Operation

    first = new_page()
    base = shared_studio.url
    session_id = open_new_session(first, base, "moved on")
    for n, text in enumerate(("/say 第一格", "/say 第二格"), 1):
        send_prompt(first, text)
        wait_until(lambda n=n: len(branch_entry_ids(session_id)) == 2 * n, 20, f"run {n}")
        wait_run_finished(session_id)
        wait_page_at_leaf(first, session_id)  # the next prompt carries the leaf the run left
    ids = branch_entry_ids(session_id)
    wait_tree_has(first, ids)

    second = new_page(first.context)  # the same user, another tab, a socket that stays silent
    second.route_web_socket(re.compile(r".*/ws/sessions/.*"), lambda ws: None)
    second.goto(first.url)
    second.locator("#prompt-form").wait_for()

    first.locator(f'#tree [data-entry-id="{ids[1]}"]').first.click()  # the first reply
    first.locator('#inspector [data-action="continue-here"]').click()
    wait_until(lambda: len(branch_entry_ids(session_id)) == 3, 10, "the rewind")
    entries = Entry.objects.filter(session_id=session_id).count()

    typed = "/say 接着画：猪猪侠回到擂台"
    send_prompt(second, typed)
    second.locator("#form-error").filter(has_text="moved on in another tab").wait_for()
    assert second.locator('#prompt-form textarea[name="text"]').input_value() == typed
    assert Entry.objects.filter(session_id=session_id).count() == entries  # nothing written
    assert not Operation.objects.filter(session_id=session_id, outcome__isnull=True).exists()
    # the refusal brought the tab up to date: sending again starts a run from the new leaf
    second.locator("#prompt-form button[type=submit]").click()
    wait_until(lambda: len(branch_entry_ids(session_id)) == 5, 20, "the prompt from tab B")
    wait_run_finished(session_id)
    assert typed in [
        e.payload["message"]["content"]
        for e in Entry.objects.filter(session_id=session_id, type="message")
        if e.payload["message"]["role"] == "user"
    ]
