"""A prompt with no drawing in it is answered in words, in the page's language, and costs
nothing: no approval card, no panel, the same credits."""

from __future__ import annotations

import pytest

from tests.support.browser import (
    credits,
    open_new_session,
    panels,
    send_prompt,
    wait_run_finished,
    wait_stream_has,
)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.one_pass("sqlite"),  # the embedded studio (docs/TESTING.md)
]


@pytest.mark.parametrize(
    "prompt", ["Hi! Can you help me make a comic?", "What's Pig-Man's state?", "撤销"]
)
def test_a_chat_like_prompt_is_answered_with_no_charge(shared_studio, page, prompt):
    session_id = open_new_session(page, shared_studio.url, "chat")
    before = credits(page)
    send_prompt(page, prompt)
    wait_run_finished(session_id)
    wait_stream_has(page, "[offline director]")
    wait_stream_has(page, "Finished: completed")  # the run's end reached the page
    assert page.locator('[data-action="approve"]:visible').count() == 0
    assert panels(page).count() == 0
    assert credits(page) == before
    said = page.locator("#stream-text").inner_text()
    assert not any("\u4e00" <= ch <= "\u9fff" for ch in said.replace("猪猪侠", "")), said
