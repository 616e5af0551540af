"""The studio as a storyboard, in Chromium: one node per turn, continue from a panel, a fork
drawn as a fork, the prompt's help and chips, a phone-sized screen, an approval card on a
short screen, and each language's page with no label of the other.

The offline director answers (no model configured); drawing asks for approval (10
credits) while the session is in "ask" mode. The database is read to know when a run is
over and what the journal holds (the user's and the director's words, to tell them from
the page's labels).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest

from tests.support.browser import (
    PASSWORD,
    approve_next,
    branch_entry_ids,
    credits,
    login,
    open_new_session,
    panels,
    run_with_approval,
    send_prompt,
    shot,
    signup,
    tree_turns,
    unique,
    user_for_the_studio,
    wait_character_state,
    wait_page_at_leaf,
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

LOLLIPOP = "Draw a panel: the hero eats a super lollipop and steps into the ring"
LAXATIVE = "Draw a panel: the hero grabs the wrong bottle and takes a laxative"
WIN = "Draw a panel: the hero wins the bout with one slap"
LOLLIPOP_BUFF = "Super lollipop"  # an English page: its session's states are English
LAXATIVE_BUFF = "Expired laxative"
CJK = re.compile(r"[\u2e80-\u9fff\u3000-\u303f\uff00-\uffef]")


def session_id_of(page) -> str:
    return re.search(r"/sessions/([^/]+)/", page.url).group(1)


def turn_item(page, last_entry: str):
    """The ``li.item`` of the turn whose node is named by ``last_entry``."""
    return page.locator(f'#tree .node[data-entry-id="{last_entry}"]').locator(
        "xpath=ancestor::li[1]"
    )


def test_one_node_per_turn_continue_from_a_panel_and_a_fork(shared_studio, page):
    base = shared_studio.url
    session_id = open_new_session(page, base, "storyboard")
    run_with_approval(page, session_id, LOLLIPOP)
    first = branch_entry_ids(session_id)
    run_with_approval(page, session_id, LAXATIVE)
    second = branch_entry_ids(session_id)[len(first) :]
    assert len(first) >= 5, "a turn is many entries: prompt, reply, state, results, reply"

    # one node per turn: named by the turn's last entry, beginning at its prompt
    turns = tree_turns(page)
    assert [(t["first"], t["last"], t["active"]) for t in turns] == [
        (first[0], first[-1], True),
        (second[0], second[-1], True),
    ]
    one = page.locator(f'#tree .node[data-entry-id="{first[-1]}"]')
    assert one.locator(".label").inner_text() == LOLLIPOP  # the whole prompt, wrapped
    assert one.locator(".label").evaluate("e => e.scrollWidth <= e.clientWidth + 1")
    assert one.locator('[data-badge="state"]').count() == 1  # the state changed in it
    thumb = one.locator("img.thumb")
    assert thumb.count() == 1
    wait_until(lambda: thumb.evaluate("e => e.complete && e.naturalWidth > 0"), 10, "thumb")
    card = turn_item(page, first[-1]).locator(":scope > .card").bounding_box()
    box = thumb.bounding_box()
    assert card["x"] <= box["x"] and box["x"] + box["width"] <= card["x"] + card["width"]
    assert box["y"] + box["height"] <= card["y"] + card["height"]
    assert page.locator('#tree [data-type="branch"]').count() == 0

    # every panel of the strip continues from right after it; the newest is where we are
    assert panels(page).count() == 2
    assert panels(page).nth(1).locator('[data-action="continue-panel"]').count() == 0
    spent = credits(page)
    panels(page).first.locator('[data-action="continue-panel"]').click()
    wait_character_state(page, LOLLIPOP_BUFF, lacks=LAXATIVE_BUFF)
    wait_until(lambda: panels(page).count() == 1, 10, "the strip of the earlier branch")
    assert credits(page) == spent, "a rewind gives no credits back"
    wait_until(
        lambda: [t["last"] for t in tree_turns(page) if t["active"]] == [first[-1]],
        10,
        "only turn 1 on the active path",
    )
    # the turn left behind hangs from turn 1, grey: a fork, not a "continued from here" row
    old = page.locator(f'#tree .node[data-entry-id="{second[-1]}"]')
    assert old.get_attribute("data-active") is None
    assert old.get_attribute("data-parent-id") == first[-1]
    assert (
        turn_item(page, first[-1])
        .locator(f':scope > ol.forks .node[data-entry-id="{second[-1]}"]')
        .count()
        == 1
    )

    # a new prompt grows a second branch from turn 1: two siblings under one node
    run_with_approval(page, session_id, WIN)
    third = branch_entry_ids(session_id)
    rewind, new_prompt = third[len(first)], third[len(first) + 1]
    from jaiweb.store.models import Entry

    assert Entry.objects.get(session_id=session_id, entry_id=rewind).type == "branch"
    wait_tree_has(page, third)
    children = page.locator(f'#tree .node[data-parent-id="{first[-1]}"]')
    assert children.count() == 2
    new = page.locator(f'#tree .node[data-first-id="{new_prompt}"]')
    assert new.get_attribute("data-active") == "true"
    assert new.locator("xpath=ancestor::li[1]").get_attribute("data-via") == rewind
    following = turn_item(page, first[-1]).locator("xpath=following-sibling::li[1]")
    assert following.locator(":scope > .card > .node").get_attribute("data-entry-id") == third[-1]
    shot(page, "storyboard")

    # the keyboard: ↑ from turn 3 goes to turn 1 (the turn before it on its line), → to
    # the other turn hanging from the same node (turn 2), Enter would continue from it
    page.locator(f'#tree .node[data-entry-id="{third[-1]}"]').focus()
    page.keyboard.press("ArrowUp")
    assert page.evaluate("document.activeElement.dataset.entryId") == first[-1]
    page.locator(f'#tree .node[data-entry-id="{second[-1]}"]').focus()
    page.keyboard.press("ArrowRight")
    assert page.evaluate("document.activeElement.dataset.entryId") == third[-1]

    # "go back to right after turn 1": one click on turn 1's node
    turn_item(page, first[-1]).locator(':scope > .card [data-action="continue-turn"]').click()
    wait_until(lambda: panels(page).count() == 1, 10, "the strip right after turn 1")
    leaf = Entry.objects.filter(session_id=session_id).order_by("-seq").first()
    assert leaf.type == "branch" and leaf.parent_id == first[-1]
    wait_until(
        lambda: one.get_attribute("data-leaf") == "true", 10, "turn 1 to be where we are now"
    )
    assert (
        turn_item(page, first[-1]).locator(':scope > .card [data-action="continue-turn"]').count()
        == 0
    )


def _turns_in_the_store(owner, count: int):
    """A session of ``count`` short turns (a prompt and a reply), written straight to the store."""
    from django.db import transaction

    from jaiweb.store.chains import entry_rows
    from jaiweb.store.models import ComicSession, Entry
    from jaiweb.store.services import session_create
    from journal.entries import AssistantMessage, MessageEntry, UserMessage

    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    entries, parent = [], None
    for n in range(count):
        ts = t0 + timedelta(minutes=n)
        ask = UserMessage(content=f"/say turn {n}: the crowd cheers louder and louder")
        entries.append(MessageEntry(id=f"u{n}", parent_id=parent, timestamp=ts, message=ask))
        reply = AssistantMessage(content=f"[offline director] turn {n}.", stop_reason="stop")
        entries.append(MessageEntry(id=f"a{n}", parent_id=f"u{n}", timestamp=ts, message=reply))
        parent = f"a{n}"
    session = session_create(owner=owner, title="long")
    with transaction.atomic():
        Entry.objects.bulk_create(entry_rows(session.id, entries))
        ComicSession.objects.filter(pk=session.id).update(leaf_id=parent, entry_count=len(entries))
    return session


def _in_view(page, selector: str) -> bool:
    return page.evaluate(
        """sel => {
            const pane = document.getElementById("tree").getBoundingClientRect();
            const node = document.querySelector(sel).getBoundingClientRect();
            return node.top >= pane.top - 1 && node.bottom <= pane.bottom + 1;
        }""",
        selector,
    )


def test_the_newest_turn_scrolls_into_view(shared_studio, page):
    base = shared_studio.url
    name = unique("long_")
    user = user_for_the_studio(name, PASSWORD)
    session = _turns_in_the_store(user, 40)
    login(page, base, name)
    page.goto(f"{base}/sessions/{session.id}/")
    wait_ws_open(page)
    tree = page.locator("#tree")
    # (the socket's first regions may be replacing the tree right now: poll, not peek)
    wait_until(
        lambda: tree.evaluate("e => e.scrollHeight > e.clientHeight"), 5, "a pane that scrolls"
    )
    wait_until(lambda: _in_view(page, '#tree .node[data-leaf="true"]'), 5, "the leaf in view")
    assert not _in_view(page, '#tree .node[data-entry-id="a0"]')  # the first, scrolled away

    tree.evaluate("e => { e.scrollTop = 0; }")  # looking at the start of the story…
    send_prompt(page, "/say and then the bell rings")  # …a new turn comes: it is shown
    wait_run_finished(session.id)
    newest = branch_entry_ids(session.id)[-1]
    wait_tree_has(page, [newest])  # (the long middle of the path is folded)
    wait_until(
        lambda: _in_view(page, f'#tree .node[data-entry-id="{newest}"]'), 10, "the new turn in view"
    )


def test_help_and_chips_fill_in_the_directors_commands(shared_studio, page):
    base = shared_studio.url
    session_id = session_with_a_hero(page, base, "chips")
    box = page.locator('#prompt-form textarea[name="text"]')
    draw = page.locator('[data-chip="draw"]')
    assert "10 credits" in draw.inner_text()  # what spends credits says what it costs
    for chip in ("state", "publish", "panels", "say"):
        assert "free" in page.locator(f'[data-chip="{chip}"]').inner_text()

    draw.click()
    assert box.input_value() == "/draw "
    assert box.evaluate("e => document.activeElement === e")
    box.press_sequentially("the hero waves from the rooftop")
    page.locator('[data-chip="panels"]').click()  # one command a line
    assert box.input_value() == "/draw the hero waves from the rooftop\n/panels"
    page.locator('[data-chip="state"]').click()
    assert box.input_value().endswith("\n/state 猪猪侠 mood=")  # the session's character

    help_ = page.locator("#prompt-help")
    assert not help_.locator("dl.commands").is_visible()
    help_.locator("summary").click()
    for command in ("/draw", "/state", "/publish", "/panels", "/say"):
        assert help_.locator("dl.commands code", has_text=command).first.is_visible()

    # what the chips wrote is the director's grammar: it draws, then lists the panels
    box.fill("/draw the hero waves from the rooftop\n/panels")
    page.locator('#prompt-form [data-action="send"]').click()
    card = page.locator("#controls .approval").first
    card.wait_for()
    assert "draw a panel" in card.inner_text() and "10 credits" in card.inner_text()
    approve_next(page)
    wait_run_finished(session_id)
    panels(page).first.wait_for()
    wait_page_at_leaf(page, session_id)  # the next prompt carries the leaf the run left

    # publishing is free: the card says so, and shows the panel with its caption
    page.locator('[data-chip="publish"]').click()
    box.press_sequentially("The hero on the roof")
    page.locator('#prompt-form [data-action="send"]').click()
    card = page.locator('#controls .approval[data-tool="publish_panel"]')
    card.wait_for()
    text = card.inner_text()
    assert "publish a panel" in text and "It is free." in text and "0 credits" not in text
    assert "The hero on the roof" in text
    image = card.locator("img.approval-panel")
    wait_until(lambda: image.evaluate("e => e.complete && e.naturalWidth > 0"), 10, "the panel")
    assert image.get_attribute("src") == panels(page).first.locator("img").get_attribute("src")
    card.locator('[data-action="deny"]').click()
    wait_run_finished(session_id)


def test_a_phone_sized_screen_has_tabs_and_no_sideways_scroll(shared_studio, browser):
    context = browser.new_context(viewport={"width": 390, "height": 844}, locale="en-US")
    try:
        page = context.new_page()
        base = shared_studio.url
        session_id = open_new_session(page, base, "a long title for a small screen, on a phone")
        run_with_approval(page, session_id, LOLLIPOP)

        def no_sideways_scroll():
            width = page.evaluate("document.documentElement.scrollWidth")
            assert width <= 390, f"the page is {width} px wide"

        tabs = page.locator(".tabs [data-tab-target]")
        assert tabs.count() == 3 and tabs.first.is_visible()
        assert page.locator("#strip").is_visible() and not page.locator("#tree").is_visible()
        box = panels(page).first.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= 390, "the strip is cut off"
        no_sideways_scroll()
        shot(page, "phone-story")

        page.locator('[data-tab-target="tree"]').click()
        assert page.locator("#tree").is_visible() and not page.locator("#strip").is_visible()
        assert page.locator("#tree .node").count() == 1
        no_sideways_scroll()
        shot(page, "phone-tree")

        page.locator('[data-tab-target="characters"]').click()
        assert page.locator("#character-state").is_visible()
        assert not page.locator("#tree").is_visible()
        no_sideways_scroll()

        page.locator('[data-tab-target="work"]').click()
        assert page.locator("#prompt-form").is_visible()
    finally:
        context.close()


def test_an_approval_card_leaves_the_prompt_box_in_view(shared_studio, browser):
    context = browser.new_context(viewport={"width": 1400, "height": 900}, locale="en-US")
    try:
        page = context.new_page()
        base = shared_studio.url
        session_id = open_new_session(page, base, "short screen")
        page.locator('#character-state [data-mode="auto"]').click()  # don't ask: draw at once
        page.locator('#character-state [data-mode="auto"][aria-pressed="true"]').wait_for()
        for n in range(4):
            send_prompt(page, f"/draw the crowd, panel {n}")
            wait_until(lambda n=n: panels(page).count() == n + 1, 20, f"panel {n}")
            wait_run_finished(session_id)
            wait_page_at_leaf(page, session_id)  # else the next write carries the leaf before
        page.locator('#character-state [data-mode="ask"]').click()
        page.locator('#character-state [data-mode="ask"][aria-pressed="true"]').wait_for()
        send_prompt(page, "/draw the referee counts to ten")
        approve = page.locator('[data-action="approve"]:visible').first
        approve.wait_for()
        for hook in ('#prompt-form textarea[name="text"]', '[data-action="approve"]'):
            box = page.locator(hook).first.bounding_box()
            assert box["y"] >= 0 and box["y"] + box["height"] <= 900, f"{hook} below the fold"
        shot(page, "approval-1400x900")
        approve.click()
        wait_run_finished(session_id)
    finally:
        context.close()


# --- each language, with no label of the other ----------------------------------------


def session_with_a_hero(page, base: str, title: str) -> str:
    """Sign up, then create a session starting with one character (the default cast's)."""
    signup(page, base, unique("e2e_"))
    page.locator('input[name="title"]').fill(title)
    page.locator('textarea[name="characters"]').fill("猪猪侠")
    page.locator('[data-action="create-session"]').click()
    page.wait_for_url(re.compile(r"/sessions/[^/]+/$"))
    wait_ws_open(page)
    return session_id_of(page)


def journal_words(session_id: str) -> list[str]:
    """What people and the director wrote in the session: its title, the messages, the
    characters' names and values (story content, shown as it is in either language)."""
    from jaiweb.store.models import ComicSession, Entry

    session = ComicSession.objects.get(pk=session_id)
    words = [session.title]
    states = [session.initial_app_state]
    for e in Entry.objects.filter(session_id=session_id):
        if e.type == "message":
            message = e.payload["message"]
            words.append(message.get("content", ""))
            for call in message.get("tool_calls", []):
                words.extend(str(v) for v in call.get("arguments", {}).values())
        elif e.type == "app_state":
            states.append(e.payload["value"])
    for state in states:
        for name, fields in (state or {}).get("characters", {}).items():
            words.append(name)
            words.extend(str(v) for v in fields.values())
    return sorted((w for w in words if w), key=len, reverse=True)


def shown_text(page) -> str:
    """The page's visible text, with the visible fields' values and placeholders."""
    return page.evaluate(
        """() => [document.body.innerText,
                  ...[...document.querySelectorAll("input, textarea")]
                     .filter(f => f.offsetParent !== null && f.type !== "hidden")
                     .flatMap(f => [f.value || "", f.placeholder || ""])]
                 .join("\\n")"""
    )


def without_content(text: str, content: list[str]) -> str:
    for words in content:
        for line in words.splitlines():
            if line.strip():
                text = text.replace(line.strip(), " ")
    return text


# In the Chinese page, ASCII words that are no English label: the product's name, the
# language switch's own name for English, names of formats (SVG, HTML) and of the API,
# the commands of the director's grammar.
ALLOWED_ASCII = {
    *("jaiweb", "English", "SVG", "HTML", "API", "PDF", "CBZ", "PNG"),
    *("draw", "state", "publish", "panels", "say"),
}


def english_words(page, session_id: str, username: str) -> dict[str, str]:
    """ASCII words on the page outside the journal's content, each with the line it is on."""
    text = without_content(shown_text(page), [*journal_words(session_id), username])
    found = {}
    for line in text.splitlines():
        for word in set(re.findall(r"[A-Za-z]{2,}", line)) - ALLOWED_ASCII:
            found.setdefault(word, line.strip())
    return found


def test_the_chinese_page_has_no_english_label(shared_studio, browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="zh-CN")
    try:
        page = context.new_page()
        base = shared_studio.url
        session_id = session_with_a_hero(page, base, "猪猪侠大战超人强")
        assert page.locator("html").get_attribute("lang") == "zh-hans"
        username = page.locator("[data-username]").inner_text()
        options = page.locator("header select[name=language] option").all_inner_texts()
        assert options == ["English", "简体中文"]  # each language by its own name
        assert english_words(page, session_id, username) == {}

        send_prompt(page, "猪猪侠吃下超级棒棒糖，走上擂台！")
        page.locator('[data-action="approve"]:visible').first.wait_for()
        page.reload()  # the approval card as the journal has it (no live step lines)
        wait_ws_open(page)
        card = page.locator("#controls .approval").first
        assert "画一格" in card.inner_text() and "10" in card.inner_text()
        assert english_words(page, session_id, username) == {}
        approve_next(page)
        wait_run_finished(session_id)
        page.reload()
        wait_ws_open(page)
        panels(page).first.wait_for()
        assert english_words(page, session_id, username) == {}

        page.locator("#tree .node").first.click()
        page.locator("#inspector ol.steps").wait_for()
        assert english_words(page, session_id, username) == {}
        for tab in ("tree", "characters"):  # and the narrow layout's tabs
            assert page.locator(f'[data-tab-target="{tab}"]').inner_text() not in ("Tree", "")
        shot(page, "studio-zh")

        page.goto(f"{base}/credits/")
        assert english_words(page, session_id, username) == {}
    finally:
        context.close()


def test_the_english_page_has_no_chinese_label(shared_studio, page):
    base = shared_studio.url
    session_id = session_with_a_hero(page, base, "English episode")
    username = page.locator("[data-username]").inner_text()

    def chinese() -> str:
        text = without_content(shown_text(page), [*journal_words(session_id), username, "简体中文"])
        return "".join(CJK.findall(text))

    options = page.locator("header select[name=language] option").all_inner_texts()
    assert options == ["English", "简体中文"]  # not 英语: each language by its own name
    # the default state (无 / 无 / 平静 in the journal) shows in the viewer's words
    hero = page.locator('#character-state form.character[data-character="猪猪侠"]')
    assert hero.locator('input[name="buff"]').get_attribute("placeholder") == "none"
    assert hero.locator('input[name="mood"]').get_attribute("placeholder") == "calm"
    text = shown_text(page)
    assert "无" not in text and "平静" not in text
    assert chinese() == ""

    run_with_approval(page, session_id, LOLLIPOP)
    page.reload()
    wait_ws_open(page)
    assert chinese() == ""
    page.locator("#tree .node").first.click()
    page.locator("#inspector ol.steps").wait_for()
    assert chinese() == ""
    assert "draw a panel" in page.locator("#inspector").inner_text()
    assert "generate_image" not in page.locator("#inspector").inner_text()
    shown = without_content(page.locator("#inspector").inner_text(), journal_words(session_id))
    assert not re.search(r"\bimg_[0-9a-f]", shown)  # panels as thumbnails, not as ids

    page.goto(f"{base}/credits/")
    assert chinese() == ""
    row = page.locator('tr[data-ledger-kind="charge"]').first
    assert row.locator("[data-ledger-panel]").count() == 1
    assert row.locator("[data-ledger-session]").inner_text() == "English episode"
    assert "k_" not in row.inner_text() and "render charge" not in row.inner_text()
