"""Running low on credits in the browser: the warning by the paid buttons, asking an admin
for more from the credits page, the admin granting it once in the inbox; and the prompt box
closed while a session waits for an admin, opened again live once the admin has decided."""

from __future__ import annotations

import pytest

from tests.support.browser import (
    approve_next,
    login,
    new_session,
    send_prompt,
    shot,
    unique,
    user_for_the_studio,
    wait_credits,
    wait_run_finished,
    wait_until,
    wait_ws_open,
)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.one_pass("sqlite"),  # the embedded studio (docs/TESTING.md)
]
PASSWORD = "credit-Pass-71"


def hint(page) -> str:
    return page.locator("#controls [data-balance-hint]").get_attribute("data-balance-hint")


def test_a_user_running_out_asks_and_an_admin_grants_once(shared_studio, new_page):
    from jaiweb.render.models import LedgerEntry
    from jaiweb.render.services import credits_set, wallet_get_or_create

    base = shared_studio.url
    name = unique("low_")
    user = user_for_the_studio(name, PASSWORD)
    wallet_get_or_create(user=user)
    credits_set(user=user, balance=15)  # one panel left
    page = new_page()
    login(page, base, name, PASSWORD)
    session_id = new_session(page, base, "the last panel")
    wait_ws_open(page)
    assert hint(page) == "last"
    assert "one last panel" in page.locator("#controls").inner_text()

    send_prompt(page, "Draw a panel: the hero bows to the crowd")
    card = page.locator("#controls form.approval")
    card.wait_for()
    assert card.locator('[data-balance-hint="last"]').count() == 1  # by the Approve button
    approve_next(page)
    wait_run_finished(session_id)
    wait_credits(page, 5)
    wait_until(lambda: hint(page) == "out", 10, "the hint to say the credits ran out")

    page.locator('#controls [data-action="ask-credits"]').click()
    page.wait_for_url(f"{base}/credits/#ask-credits")
    assert page.locator('[data-credits-level="out"]').count() == 1
    form = page.locator("#ask-credits-form")
    form.locator('input[name="amount"]').fill("40")
    form.locator('textarea[name="message"]').fill("for the finale")
    form.locator('[data-action="ask-credits"]').click()
    page.locator('[data-credit-request="open"]').wait_for()
    shot(page, "credits")

    staff_name = unique("staff_")
    user_for_the_studio(staff_name, "staff-Pass-1", is_staff=True)
    admin = new_page()
    login(admin, base, staff_name, "staff-Pass-1")
    admin.goto(f"{base}/inbox/")
    request = admin.locator(f'[data-credit-request][data-user="{name}"]')
    assert "for the finale" in request.inner_text()
    request.locator('input[name="amount"]').fill("30")
    request.locator('[data-action="grant-credits"]').click()
    admin.locator("[data-inbox-message]").filter(has_text="30").wait_for()
    assert admin.locator(f'[data-credit-request][data-user="{name}"]').count() == 0
    grants = LedgerEntry.objects.filter(wallet__user=user, kind="grant")
    assert [g.amount for g in grants] == [30]

    page.goto(f"{base}/sessions/{session_id}/")
    wait_ws_open(page)
    wait_credits(page, 35)
    assert hint(page) == "ok"
    page.goto(f"{base}/credits/")
    assert page.locator('[data-credit-request="granted"]').count() == 1


def test_the_prompt_box_is_closed_while_parked_and_opens_once_decided(shared_studio, new_page):
    from jaiweb.store.models import ComicSession
    from tests.support.builders import parked_call

    base = shared_studio.url
    name = unique("parked_")
    user_for_the_studio(name, PASSWORD)
    page = new_page()
    login(page, base, name, PASSWORD)
    session_id = new_session(page, base, "waiting")
    parked_call(ComicSession.objects.get(pk=session_id), tool="publish_panel")
    page.reload()
    wait_ws_open(page)
    box = page.locator('#prompt-form textarea[name="text"]')
    assert box.is_disabled()
    assert page.locator("#prompt-parked").is_visible()
    notice = page.locator("#session-notice").inner_text()
    assert "Publish a panel" in notice and "call_1" not in notice and "publish_panel" not in notice
    shot(page, "studio-parked")

    staff_name = unique("staff_")
    user_for_the_studio(staff_name, "staff-Pass-1", is_staff=True)
    admin = new_page()
    login(admin, base, staff_name, "staff-Pass-1")
    admin.goto(f"{base}/inbox/")
    item = admin.locator("[data-inbox-item]").filter(has_text="waiting")
    item.locator('textarea[name="reason"]').fill("nothing arrived: it did not happen")
    item.locator('[data-action="fail"]').click()

    wait_run_finished(session_id, 60)
    wait_until(lambda: not box.is_disabled(), 20, "the prompt box to open again")
    assert not page.locator("#prompt-parked").is_visible()
