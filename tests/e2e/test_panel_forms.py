"""A strip panel's look form in Chromium: the panel's HTML names no leaf (it is kept and
shared by what it shows), so the form sends the leaf the page shows when it is clicked.
Used on a page that is current, it sets the look; on a page whose leaf has moved on, the
write is refused as stale and nothing is written.

The offline director draws the panel.
"""

from __future__ import annotations

import pytest

from tests.support.browser import (
    branch_entry_ids,
    open_new_session,
    panels,
    run_with_approval,
    shot,
    wait_page_at_leaf,
    wait_until,
)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.one_pass("sqlite"),  # the embedded studio (docs/TESTING.md)
]


def look_reference(page, name: str) -> str | None:
    """The reference picture #character-state shows for ``name``, if any."""
    found = page.locator(f'#character-state [data-look="{name}"] [data-reference]')
    return found.first.get_attribute("data-reference") if found.count() else None


def test_a_panels_look_form_sends_the_leaf_the_page_shows(shared_studio, page):
    session_id = open_new_session(page, shared_studio.url, "looks", characters="Pig-Man")
    run_with_approval(page, session_id, "/draw the hero in the ring")
    wait_page_at_leaf(page, session_id)
    panel = panels(page).first
    image_id = panel.get_attribute("data-panel")
    use = panel.locator('form.use-look [data-action="use-look"]').first
    name = use.get_attribute("data-character")
    assert name == "Pig-Man"
    assert panel.locator('form.use-look input[name="expected_leaf_id"]').input_value() == ""
    before = branch_entry_ids(session_id)

    # a page whose leaf is behind the session's: refused, nothing written
    page.locator("#tree").evaluate("(e, leaf) => { e.dataset.leafId = leaf; }", before[-2])
    use.click()
    error = page.locator("#form-error")
    wait_until(lambda: error.inner_text().strip() != "", 10, "the stale write's refusal")
    assert branch_entry_ids(session_id) == before
    assert look_reference(page, name) is None

    # the page's own leaf again (as its socket keeps it): the look is set
    page.locator("#tree").evaluate("(e, leaf) => { e.dataset.leafId = leaf; }", before[-1])
    panels(page).first.locator(f'form.use-look [data-character="{name}"]').click()
    wait_until(lambda: look_reference(page, name) == image_id, 10, f"{name}'s look")
    assert len(branch_entry_ids(session_id)) == len(before) + 1
    assert error.inner_text().strip() == ""
    shot(page, "panel-look-set")
