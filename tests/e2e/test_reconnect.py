"""A page whose server restarts reconnects by itself and shows what the server has: the run
state, the controls and the credits, read again on connect, without a reload.

The run is finished, and credits granted, while the studio is down (by `manage.py
runagents` and an admin's grant, in other processes): after the restart no event of the run ever
reaches the page, so only the page's own re-read on reconnect can make it right."""

from __future__ import annotations

import time

import pytest
from django.db import connection

from tests.support.browser import (
    approve_next,
    credits,
    open_new_session,
    panels,
    send_prompt,
    wait_credits,
    wait_run_finished,
    wait_until,
    wait_ws_open,
)
from tests.support.children import Child

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

# The page's tries after a close, in ms: 0.5 s, then 0.75 s, then every second.
FAST_TRIES = [500, 750, 1000, 1000, 1000, 1000, 1000]


def owner_and_balance(session_id: str):
    from jaiweb.render.selectors import wallet_balance
    from jaiweb.store.models import ComicSession

    owner = ComicSession.objects.get(pk=session_id).owner
    return owner, wallet_balance(user=owner)


def test_a_restarted_server_is_read_again_by_the_page_without_a_reload(
    own_studio, new_page, tmp_path
):
    from jaiweb.render.services import credits_grant

    paused = tmp_path / "paused"
    own_studio.start(
        {"JAIWEB_PAUSE_AT": "during_tool:generate_image", "JAIWEB_PAUSE_FILE": str(paused)}
    )
    page = new_page()
    session_id = open_new_session(page, own_studio.url, "reconnect")
    assert page.evaluate("[0, 1, 2, 3, 4, 5, 6].map(htmx.config.wsReconnectDelay)") == FAST_TRIES
    send_prompt(page, "/draw Pig-Man flies over the city")
    approve_next(page)
    wait_until(paused.exists, 30, "the render to be under way")
    page.locator('#controls[data-state="running"] [data-action="stop"]').wait_for()
    # the render is charged before the pause: the page may or may not have heard of it yet
    assert credits(page) in (100, 90) and panels(page).count() == 0
    page.evaluate("window.notReloaded = true")

    own_studio.kill()  # SIGKILL in the middle of the render
    page.locator("#connection-banner").filter(has_text="Connection lost").wait_for()
    # While it is down, a runner process finishes the run (the render, 10 credits) and an
    # admin grants 25 credits: nothing the page could hear of.
    runner = Child(connection.settings_dict, "runagents", env=own_studio.env)
    try:
        wait_run_finished(session_id, timeout=60)
    finally:
        assert runner.terminate() in (0, -15), runner.stderr_tail()
    owner, _ = owner_and_balance(session_id)
    credits_grant(user=owner, amount=25, note="while the studio was down")
    _, balance = owner_and_balance(session_id)
    assert balance == 115
    assert page.locator('#controls[data-state="running"]').count() == 1  # still the old view

    own_studio.restart()  # the same port: nothing left to recover, so no event is sent
    answered = time.monotonic()
    wait_ws_open(page, timeout=30_000)
    page.locator('#controls[data-state="idle"]').wait_for(timeout=30_000)
    wait_credits(page, balance, timeout=30_000)
    panels(page).first.wait_for(timeout=30_000)
    right = time.monotonic() - answered
    print(f"the page was right {right:.2f} s after the studio answered")  # bench: reconnect
    assert page.locator('[data-action="stop"]').count() == 0
    assert page.locator("#connection-banner").is_hidden()
    assert page.evaluate("window.notReloaded") is True  # the same page, never reloaded
    wait_until(
        lambda: page.locator("#stream-steps [data-started]").count() == 0, 10, "no step ticking"
    )


# Every socket the page opens, kept where the test can reach it.
KEEP_SOCKETS = """(() => {
  const Native = window.WebSocket;
  window.sockets = [];
  function Kept(url, protocols) {
    const ws = protocols === undefined ? new Native(url) : new Native(url, protocols);
    window.sockets.push(ws);
    return ws;
  }
  Kept.prototype = Native.prototype;
  Object.assign(Kept, {CONNECTING: 0, OPEN: 1, CLOSING: 2, CLOSED: 3});
  window.WebSocket = Kept;
})();"""


def test_a_socket_closed_cleanly_is_opened_again_and_read_again(shared_studio, new_page):
    """htmx's ws extension reconnects only after an abnormal close (1006, 1011-1013); a
    socket closed with "normal closure" or "going away" (a proxy or server restarting
    cleanly) would stay closed, the page looking live and idle for ever."""
    page = new_page()
    page.add_init_script(KEEP_SOCKETS)
    open_new_session(page, shared_studio.url, "clean close")
    page.evaluate("window.notReloaded = true")
    for code in (1000, 4000):  # what a page may send itself: 1000 and 3000-4999
        before = page.evaluate("window.sockets.length")
        page.evaluate(f"window.sockets[window.sockets.length - 1].close({code})")
        page.locator('body[data-ws="closed"]').wait_for(state="attached")
        wait_ws_open(page, timeout=30_000)
        assert page.evaluate("window.sockets.length") == before + 1, code
    send_prompt(page, "/say back again")
    page.locator("#stream").filter(has_text="back again").wait_for()
    assert page.evaluate("window.notReloaded") is True
