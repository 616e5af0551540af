"""The page tells when the studio cannot be reached, and a send then keeps its text."""

from __future__ import annotations

import pytest

from tests.support.browser import (
    branch_entry_ids,
    open_new_session,
    send_prompt,
    wait_run_finished,
    wait_until,
    wait_ws_open,
)

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_a_dead_server_shows_a_banner_and_a_send_keeps_its_text(own_studio, new_page):
    own_studio.start()
    page = new_page()
    session_id = open_new_session(page, own_studio.url, "offline")
    banner = page.locator("#connection-banner")
    assert banner.is_hidden()

    own_studio.kill()  # SIGKILL: the socket goes away, the page must say so
    banner.filter(has_text="Connection lost, retrying").wait_for()
    typed = "/say 服务器回来了吗"
    send_prompt(page, typed, answered=False)  # the post fails: no answer
    page.locator("#form-error").filter(has_text="cannot be reached").wait_for()
    assert page.locator('#prompt-form textarea[name="text"]').input_value() == typed

    own_studio.restart()  # the same port: the page reconnects by itself
    wait_ws_open(page, timeout=30_000)
    wait_until(lambda: banner.is_hidden(), 10, "the banner to go away")
    page.locator("#prompt-form button[type=submit]").click()  # the kept text, sent again
    wait_until(lambda: len(branch_entry_ids(session_id)) == 2, 30, "the prompt after the restart")
    wait_run_finished(session_id)
    assert page.locator('#prompt-form textarea[name="text"]').input_value() == ""
