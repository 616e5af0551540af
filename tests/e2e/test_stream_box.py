"""The director's reply on a phone: the stream box is short there, and a committed reply
longer than the box opens at its beginning (what the director did), not mid-sentence at
its end; the run's steps take one line under it.

The offline director answers; its reply to a prompt that sets a state and draws is longer
than the box at 390 px.
"""

from __future__ import annotations

import pytest

from tests.support.browser import (
    approve_next,
    branch_entry_ids,
    open_new_session,
    send_prompt,
    shot,
    wait_run_finished,
    wait_tree_has,
    wait_until,
)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.one_pass("sqlite"),  # the embedded studio (docs/TESTING.md)
]

# Where the last committed reply starts and ends against the box's visible part (px).
REPLY_IN_BOX = """() => {
  const box = document.getElementById("stream").getBoundingClientRect();
  const reply = document.querySelector("#stream-text > p:last-child").getBoundingClientRect();
  return {top: reply.top - box.top, bottom: reply.bottom - box.top, box: box.height};
}"""


def test_a_long_reply_opens_at_its_beginning_on_a_phone(shared_studio, browser, new_page):
    page = new_page(browser.new_context(viewport={"width": 390, "height": 844}, locale="en-US"))
    cast = "Pig-Man, Super-Strong-Man"
    session_id = open_new_session(page, shared_studio.url, "in the ring", characters=cast)

    send_prompt(page, "Pig-Man eats the super lollipop in the ring and becomes a kung fu master")
    approve_next(page)
    wait_run_finished(session_id)
    wait_tree_has(page, branch_entry_ids(session_id))
    replies = page.locator("#stream-text > p")
    wait_until(lambda: "What next?" in replies.last.inner_text(), 10, "the closing reply")

    where = page.evaluate(REPLY_IN_BOX)
    assert where["bottom"] - where["top"] > where["box"] / 2, where  # a long reply for the box
    assert 0 <= where["top"] < 12, where  # its first line at the top of the box
    steps = page.locator("#stream-steps li")
    assert steps.count() >= 2
    tops = {round(steps.nth(i).bounding_box()["y"]) for i in range(2)}
    assert len(tops) == 1, tops  # the steps run on in one line
    shot(page, "stream-box-390")
