"""A studio killed in the middle of a render: once it is back, the page converges on the
journal by itself — no step left ticking, the run's closing narration shown."""

from __future__ import annotations

import pytest

from tests.support.browser import (
    approve_next,
    open_new_session,
    send_prompt,
    wait_run_finished,
    wait_stream_has,
    wait_until,
    wait_ws_open,
)

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def last_words(session_id: str) -> str:
    from jaiweb.store.models import ComicSession
    from jaiweb.store.selectors import branch_get
    from journal.entries import AssistantMessage, MessageEntry

    session = ComicSession.objects.get(pk=session_id)
    replies = [
        e.message.content
        for e in branch_get(session=session)
        if isinstance(e, MessageEntry) and isinstance(e.message, AssistantMessage)
    ]
    return replies[-1]


def test_the_stream_converges_after_a_restart_in_the_middle_of_a_render(
    own_studio, new_page, tmp_path
):
    paused = tmp_path / "paused"
    own_studio.start(
        {"JAIWEB_PAUSE_AT": "during_tool:generate_image", "JAIWEB_PAUSE_FILE": str(paused)}
    )
    page = new_page()
    session_id = open_new_session(page, own_studio.url, "restart")
    send_prompt(page, "/draw 猪猪侠吃下超级棒棒糖")
    approve_next(page)
    wait_until(paused.exists, 30, "the render to be under way")
    ticking = page.locator("#stream-steps [data-started]")
    ticking.first.wait_for(timeout=10_000)  # "rendering panel… (n s)" on the page

    own_studio.restart()  # SIGKILL mid-render, then a studio without the pause
    wait_run_finished(session_id, timeout=60)  # recovery dispatched the render again
    wait_ws_open(page, timeout=30_000)
    words = last_words(session_id)
    wait_stream_has(page, words[len(words) // 2 :][:16], timeout=20_000)
    wait_until(lambda: ticking.count() == 0, 10, "no step still ticking")
    stop = page.locator('[data-action="stop"]:visible')
    wait_until(lambda: stop.count() == 0, 10, "the controls to say the run is over")
