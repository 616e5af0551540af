"""Compare two branches and share one, in Chromium: the offline director's story of the
laxative (a stomach-ache panel), a rewind, then the lollipop (the kung-fu master's buff).

From the inspector of the laxative's turn, "compare with the current branch" shows both
sides from where they part, the buff at each end (both values, marked as different) and
what each side spent; the compare page's picker swaps the sides. A share link of the
lollipop's branch, opened in a fresh logged-out browser context, shows that branch's strip
and nothing else; once revoked, the same address answers 404 there. "Share up to here"
in the inspector of the laxative's turn pins a link to that branch instead. The database
is read only to know when a run is over and what the branches hold.
"""

from __future__ import annotations

import pytest

from jaiweb.store.shares import share_panel_ref
from tests.support.browser import (
    approve_next,
    branch_entry_ids,
    credits,
    open_new_session,
    panels,
    send_prompt,
    shot,
    unfinished_operations,
    wait_tree_has,
    wait_until,
)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.one_pass("postgres"),  # on the deployment's stack (docs/TESTING.md)
]

ENTER = "/say The hero climbs into the ring."
LAXATIVE = "Draw a panel: the hero grabs the wrong bottle and takes a laxative"
LOLLIPOP = "Draw a panel: the hero eats a super lollipop and steps into the ring"
LAXATIVE_BUFF = "Expired laxative (stomach ache, cold sweat)"
LOLLIPOP_BUFF = "Super lollipop (kung-fu master)"
HERO = "Pig-Man"  # an English page's session: its built-ins are English


def run(page, session_id: str, text: str, *, paid: bool) -> list[str]:
    """One turn, waited for until its reply is in the journal and its run is over (a free
    turn has no approval to show that its run began)."""
    before = len(branch_entry_ids(session_id))
    send_prompt(page, text)
    if paid:
        approve_next(page)
    wait_until(
        lambda: (
            len(branch_entry_ids(session_id)) > before + 1 and not unfinished_operations(session_id)
        ),
        30,
        "the turn's run to finish",
    )
    ids = branch_entry_ids(session_id)
    wait_tree_has(page, ids)
    return ids


def panel_images(session_id: str, leaf: str) -> list[str]:
    from jaiweb.store.models import ComicSession
    from jaiweb.store.selectors import branch_rows
    from jaiweb.studio.selectors.strip import strip_panels

    session = ComicSession.objects.get(pk=session_id)
    return [p.image_id for p in strip_panels(branch_rows(session=session, leaf_id=leaf))]


def test_compare_the_laxative_and_the_lollipop_then_share_and_revoke(shared_studio, new_page):
    base = shared_studio.url
    page = new_page()
    session_id = open_new_session(page, base, "compare <b>and</b> share")
    turn1 = run(page, session_id, ENTER, paid=False)
    laxative = run(page, session_id, LAXATIVE, paid=True)[-1]
    page.locator(f'#tree .node[data-entry-id="{turn1[-1]}"]').locator(
        "xpath=ancestor::li[1]"
    ).locator(':scope > .card [data-action="continue-turn"]').click()
    wait_until(lambda: branch_entry_ids(session_id)[-1] != laxative, 10, "the rewind")
    wait_until(lambda: panels(page).count() == 0, 10, "the strip right after turn 1")
    lollipop = run(page, session_id, LOLLIPOP, paid=True)[-1]
    [laxative_image] = panel_images(session_id, laxative)
    [lollipop_image] = panel_images(session_id, lollipop)
    assert credits(page) == 80  # two panels of 10 from the wallet's 100

    # the laxative's turn, on the branch left behind: compare it with the current branch
    page.locator(f'#tree .node[data-entry-id="{laxative}"]').click()
    link = page.locator('#inspector [data-action="compare-with-current"]')
    link.click()
    page.wait_for_url(f"{base}/sessions/{session_id}/compare?*")
    buff = page.locator(f'table.compare-state tr[data-character="{HERO}"][data-field="buff"]')
    assert buff.get_attribute("data-differs") == "true"
    assert buff.locator('[data-side="left"]').inner_text().endswith(LOLLIPOP_BUFF)
    assert buff.locator('[data-side="right"]').inner_text().endswith(LAXATIVE_BUFF)
    # marked as different on the page, not only in the markup
    shade = buff.locator('[data-side="left"]').evaluate("e => getComputedStyle(e).backgroundColor")
    same = page.locator('table.compare-state tr[data-field="permission_mode"] td[data-side]').first
    assert shade != same.evaluate("e => getComputedStyle(e).backgroundColor")
    left, right = (
        page.locator('.compare-side[data-side="left"]'),
        page.locator('.compare-side[data-side="right"]'),
    )
    assert left.get_attribute("data-node-id") == lollipop
    assert right.get_attribute("data-node-id") == laxative
    for side in (left, right):
        assert side.locator("[data-credits]").get_attribute("data-credits") == "10"
        assert "10" in side.locator("[data-credits]").inner_text()
        assert side.locator("[data-panels]").get_attribute("data-panels") == "1"
    assert left.locator(f'[data-image-id="{lollipop_image}"]').count() == 1
    assert right.locator(f'[data-image-id="{laxative_image}"]').count() == 1
    assert left.locator(f'[data-image-id="{laxative_image}"]').count() == 0
    img = right.locator("img").first
    wait_until(lambda: img.evaluate("e => e.complete && e.naturalWidth > 0"), 10, "a panel")
    assert LOLLIPOP in left.inner_text() and LOLLIPOP not in right.inner_text()
    assert "compare <b>and</b> share" in page.locator("h1").inner_text()  # shown as typed
    shot(page, "compare")

    # the picker: the laxative's end as A, the lollipop's as B
    page.locator('select[data-pick="left"]').select_option(laxative)
    page.locator('select[data-pick="right"]').select_option(lollipop)
    page.locator('[data-action="compare"]').click()
    wait_until(
        lambda: (
            page.locator('.compare-side[data-side="left"]').get_attribute("data-node-id")
            == laxative
        ),
        10,
        "the sides swapped",
    )
    assert buff.locator('[data-side="left"]').inner_text().endswith(LAXATIVE_BUFF)

    # share the current (lollipop) branch from the studio page
    page.locator('[data-action="back-to-studio"]').click()
    page.wait_for_url(f"{base}/sessions/{session_id}/")
    page.locator('[data-action="open-share"]').click()
    page.locator('[data-action="create-share"]').click()
    url = page.locator("[data-share-url]").input_value()
    assert url.startswith(f"{base}/s/")
    row = page.locator("table.share-links tr[data-share-link]")
    assert row.count() == 1 and row.get_attribute("data-leaf-id") == lollipop
    shot(page, "share-panel")

    stranger = new_page()  # a fresh context: logged out, no cookie of the owner's
    assert stranger.goto(url).status == 200
    strip = stranger.locator("[data-shared-branch] [data-panel]")
    assert strip.count() == 1
    shared_img = strip.first.locator("img")
    token = url.rstrip("/").rsplit("/", 1)[1]
    ref = share_panel_ref(token=token, image_id=lollipop_image)
    assert shared_img.get_attribute("src") == f"/s/{token}/panels/{ref}"
    wait_until(lambda: shared_img.evaluate("e => e.complete && e.naturalWidth > 0"), 10, "panel")
    html = stranger.content()
    assert laxative_image not in html and lollipop_image not in html  # no image id shown
    for absent in ("#prompt-form", "#tree", "#inspector", "#character-state", "#share"):
        assert stranger.locator(absent).count() == 0, absent
    assert stranger.locator('[data-action="logout"]').count() == 0
    shot(stranger, "shared-branch")

    page.locator('[data-action="revoke-share"]').click()
    page.locator('table.share-links tr[data-revoked="true"]').wait_for()
    assert page.locator('[data-action="revoke-share"]').count() == 0
    assert stranger.goto(url).status == 404
    assert stranger.locator("[data-shared-branch]").count() == 0

    # a link pinned to the node open in the inspector: the laxative's turn, left behind
    page.reload()
    page.locator(f'#tree .node[data-entry-id="{laxative}"]').click()
    page.locator('#inspector [data-action="share-up-to-here"]').click()
    made = page.locator("[data-share-url]")
    made.wait_for(state="visible")  # the share panel opened to show it
    newest = page.locator("table.share-links tr[data-share-link]").first
    assert newest.get_attribute("data-leaf-id") == laxative
    assert newest.get_attribute("data-revoked") is None
    assert page.locator('table.share-links tr[data-revoked="true"]').count() == 1
    pinned = made.input_value()
    assert stranger.goto(pinned).status == 200
    html = stranger.content()
    token = pinned.rstrip("/").rsplit("/", 1)[1]
    assert share_panel_ref(token=token, image_id=laxative_image) in html
    assert share_panel_ref(token=token, image_id=lollipop_image) not in html
    assert laxative_image not in html and lollipop_image not in html
