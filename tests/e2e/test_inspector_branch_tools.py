"""The inspector's branch tools in Chromium: what a rewind rolls back, said before it; the
stomach-ache panel put on the lollipop branch (not drawn again, not charged); fork into a
new session; regenerate a reply; edit and resend a prompt.

The offline director answers (no model configured): "lollipop" sets Pig-Man's buff to the
super lollipop and draws, "laxative" to the stomach ache and draws (each panel asked for
and charged); "/say" narrates only. The database is read to know when a run is over and
what the journal holds (the values the page must show).
"""

from __future__ import annotations

import pytest

from tests.support.browser import (
    branch_entry_ids,
    credits,
    node_of,
    open_new_session,
    panels,
    run_with_approval,
    send_prompt,
    shot,
    tree_turns,
    wait_character_state,
    wait_page_at_leaf,
    wait_run_finished,
    wait_tree_has,
    wait_until,
)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.one_pass("sqlite"),  # the embedded studio (docs/TESTING.md)
]

LOLLIPOP = "Draw a panel: the hero eats a super lollipop and steps into the ring"
LAXATIVE = "Draw a panel: the hero grabs the wrong bottle and takes a laxative"
LOLLIPOP_BUFF = "Super lollipop"
LAXATIVE_BUFF = "Expired laxative"
HERO = "Pig-Man"  # an English page's session: its built-ins are English


def _session(session_id: str):
    from jaiweb.store.models import ComicSession

    return ComicSession.objects.get(pk=session_id)


def _buff_at(session_id: str, node: str) -> str:
    from jaiweb.store.selectors import app_state_at

    return app_state_at(session=_session(session_id), leaf_id=node)["characters"][HERO]["buff"]


def _drawn(session_id: str, ids: list[str]) -> list[dict]:
    """The panels drawn among ``ids``: each result's entry id, image and cost."""
    from jaiweb.store.models import Entry

    out = []
    for row in Entry.objects.filter(session_id=session_id, entry_id__in=ids, type="message"):
        message = row.payload["message"]
        if message.get("tool_name") == "generate_image" and not message.get("is_error"):
            details = message["details"]
            out.append({"entry": row.entry_id, "image": details["image_id"], **details})
    return out


def _prompts(session_id: str, ids: list[str]) -> list[str]:
    from jaiweb.store.models import Entry

    rows = {r.entry_id: r for r in Entry.objects.filter(session_id=session_id, entry_id__in=ids)}
    return [
        rows[i].payload["message"]["content"]
        for i in ids
        if rows[i].type == "message" and rows[i].payload["message"]["role"] == "user"
    ]


def _unfold(page, parent_last: str) -> None:
    """Open every folded "+N" fork under the node ``parent_last``."""
    item = node_of(page, parent_last).locator("xpath=ancestor::li[1]")
    folded = item.locator(":scope > button.forks")
    while folded.count():
        before = folded.count()
        folded.first.click()
        wait_until(lambda before=before: folded.count() < before, 10, "the fork to open")


def _inspect(page, last: str, parent: str | None = None):
    """Open the inspector of the turn whose node is named by ``last`` (unfolding the forks
    under ``parent`` first, if it hangs there)."""
    if parent is not None:
        _unfold(page, parent)
    node_of(page, last).click()
    inspector = page.locator("#inspector")
    # its forms name the node (the inspector shown before may still be there)
    inspector.locator(f'input[name="node"][value="{last}"]').first.wait_for(state="attached")
    return inspector


def test_a_rewind_says_what_rolls_back_and_a_left_panel_is_picked_uncharged(shared_studio, page):
    base = shared_studio.url
    session_id = open_new_session(page, base, "pick")
    run_with_approval(page, session_id, LOLLIPOP)
    first = branch_entry_ids(session_id)
    run_with_approval(page, session_id, LAXATIVE)
    second = branch_entry_ids(session_id)[len(first) :]
    wait_character_state(page, LAXATIVE_BUFF)
    [sick] = _drawn(session_id, second)  # the stomach-ache panel, charged once
    lollipop, laxative = _buff_at(session_id, first[-1]), _buff_at(session_id, second[-1])
    assert LOLLIPOP_BUFF in lollipop and LAXATIVE_BUFF in laxative

    # before "continue from here" on turn 1: the values that roll back, what stays spent
    inspector = _inspect(page, first[-1])
    preview = inspector.locator('[data-preview="rewind"]')
    text = preview.inner_text()
    assert f"{HERO} — buff: {laxative} → {lollipop}" in text, text
    assert f"{sick['cost']} credits stay spent" in text, text
    assert "0 posts stay on the feed" in text, text
    preview.scroll_into_view_if_needed()
    shot(page, "inspector-rewind-preview")
    inspector.locator('[data-action="continue-here"]').click()
    wait_character_state(page, LOLLIPOP_BUFF, lacks=LAXATIVE_BUFF)
    wait_until(lambda: panels(page).count() == 1, 10, "the strip of the lollipop branch")
    spent = credits(page)

    # the abandoned turn's panel, put on the lollipop branch: no render, no charge
    inspector = _inspect(page, second[-1], parent=first[-1])
    step = inspector.locator(f'[data-step-entry="{sick["entry"]}"]')
    assert not step.locator('input[name="take_state"]').is_checked()
    step.locator('[data-action="cherry-pick"]').click()
    wait_until(lambda: panels(page).count() == 2, 10, "the picked panel in the strip")
    placed = panels(page).nth(1)
    assert placed.get_attribute("data-panel") == sick["image"]
    assert placed.get_attribute("data-picked") == "true"
    assert placed.locator('[data-badge="cherry-picked"]').is_visible()
    assert credits(page) == spent, "a picked panel is not charged again"
    wait_character_state(page, LOLLIPOP_BUFF, lacks=LAXATIVE_BUFF)  # its state stayed behind
    # the tree: an active node of the placement, marked as picked, showing the panel
    leaf = branch_entry_ids(session_id)[-1]
    wait_tree_has(page, branch_entry_ids(session_id))
    picked = node_of(page, leaf)
    assert picked.get_attribute("data-active") == "true"
    assert picked.locator('.icon[data-icon="picked"]').count() == 1
    assert sick["image"] in picked.locator("img.thumb").get_attribute("src")
    assert _drawn(session_id, branch_entry_ids(session_id)) == _drawn(session_id, first)
    placed.scroll_into_view_if_needed()
    shot(page, "inspector-cherry-pick")


def test_a_fork_opens_the_new_session_with_the_path_and_its_origin(shared_studio, page):
    base = shared_studio.url
    session_id = open_new_session(page, base, "擂台")
    run_with_approval(page, session_id, LOLLIPOP)
    first = branch_entry_ids(session_id)
    send_prompt(page, "/say 第二格：猪猪侠鞠躬")
    wait_until(lambda: len(branch_entry_ids(session_id)) > len(first), 20, "the second turn")
    wait_run_finished(session_id)
    wait_tree_has(page, branch_entry_ids(session_id))
    [drawn] = _drawn(session_id, first)

    inspector = _inspect(page, first[-1])
    inspector.locator('input[name="title"]').fill("擂台 · 第一格")
    inspector.locator('[data-action="fork"]').click()
    page.wait_for_url(lambda url: f"/sessions/{session_id}/" not in url)
    assert page.locator("h1.title").inner_text() == "擂台 · 第一格"
    origin = page.locator('[data-origin="forked"]')
    assert origin.inner_text() == "Forked from «擂台»"
    assert origin.locator("a").get_attribute("href") == f"/sessions/{session_id}/"
    # the path root → turn 1, and nothing after it
    assert [p.get_attribute("data-panel") for p in panels(page).all()] == [drawn["image"]]
    assert [t["last"] for t in tree_turns(page)] == [first[-1]]
    shot(page, "inspector-fork")
    origin.locator("a").click()
    page.wait_for_url(f"{base}/sessions/{session_id}/")


def test_regenerate_grows_a_sibling_and_a_resent_prompt_keeps_the_old_branch(shared_studio, page):
    base = shared_studio.url
    session_id = open_new_session(page, base, "retry")
    for n, text in enumerate(("/say 第一格", "/say 第二格"), 1):
        send_prompt(page, text)
        wait_until(lambda n=n: len(branch_entry_ids(session_id)) == 2 * n, 20, f"turn {n}")
        wait_run_finished(session_id)
        wait_page_at_leaf(page, session_id)  # the next prompt carries the leaf the run left
    ids = branch_entry_ids(session_id)  # u1 a1 u2 a2
    wait_tree_has(page, ids)

    # regenerate turn 2: the same prompt again at the same place, a sibling of it
    _inspect(page, ids[-1]).locator('[data-action="regenerate"]').click()
    wait_until(lambda: branch_entry_ids(session_id)[-1] not in ids, 20, "the new attempt")
    wait_run_finished(session_id)
    again = branch_entry_ids(session_id)
    assert again[:2] == ids[:2] and ids[2] not in again
    assert _prompts(session_id, again) == ["/say 第一格", "/say 第二格"]
    wait_tree_has(page, again)
    _unfold(page, ids[1])
    siblings = page.locator(f'#tree .node[data-parent-id="{ids[1]}"]')
    wait_until(lambda: siblings.count() == 2, 10, "two attempts under turn 1")

    # edit and resend the new attempt's prompt: a third branch there, the others stay
    inspector = _inspect(page, again[-1])
    inspector.locator('[data-action="edit-resend"]').click()
    box = inspector.locator('.resend textarea[name="text"]')
    assert box.input_value() == "/say 第二格"
    box.fill("/say 第二格：猪猪侠吃了棒棒糖")
    inspector.locator('[data-action="resend"]').click()
    wait_until(lambda: branch_entry_ids(session_id)[-1] not in again, 20, "the resent prompt")
    wait_run_finished(session_id)
    resent = branch_entry_ids(session_id)
    assert _prompts(session_id, resent) == ["/say 第一格", "/say 第二格：猪猪侠吃了棒棒糖"]
    wait_tree_has(page, resent)
    _unfold(page, ids[1])
    wait_until(lambda: siblings.count() == 3, 10, "three attempts under turn 1")
    labels = siblings.locator(".label").all_inner_texts()
    assert sorted(labels) == sorted(["/say 第二格", "/say 第二格", "/say 第二格：猪猪侠吃了棒棒糖"])
    for old in (ids[-1], again[-1]):  # the earlier attempts stay, off the active branch
        assert node_of(page, old).get_attribute("data-active") is None
    assert node_of(page, resent[-1]).get_attribute("data-active") == "true"
    node_of(page, resent[-1]).scroll_into_view_if_needed()
    shot(page, "inspector-resend")
