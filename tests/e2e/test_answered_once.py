"""A write's regions reach the page that made it once: in its HTTP answer, and not again
by its socket, which the command's announcement reached too."""

from __future__ import annotations

import re
import time

import pytest

from jaiweb.live.catch_up import HOLD_SECONDS, QUIET_SECONDS
from jaiweb.studio.regions import REGIONS
from tests.support.browser import open_new_session

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

REGION_ID = re.compile(r'id="(' + "|".join(re.escape(name) for name in REGIONS) + r')"')
SETTLE_MS = (QUIET_SECONDS + 1) * 1000  # past a pass and the quiet pass after it


def regions_in(frames: list[str]) -> list[list[str]]:
    return [REGION_ID.findall(frame) for frame in frames if REGION_ID.search(frame)]


def pump_until(page, done, seconds: float) -> None:
    """Let Playwright deliver the page's events (a plain sleep delivers none) until
    ``done()`` or ``seconds`` pass."""
    deadline = time.monotonic() + seconds
    while not done() and time.monotonic() < deadline:
        page.wait_for_timeout(100)


def test_a_writes_regions_reach_the_writers_page_once(shared_studio, page):
    frames: list[str] = []
    page.on("websocket", lambda ws: ws.on("framereceived", lambda frame: frames.append(frame)))
    open_new_session(page, shared_studio.url, "once")
    page.locator('form.permission-mode button[data-mode="ask"][aria-pressed="true"]').wait_for()
    pump_until(page, lambda: regions_in(frames), 30)
    assert regions_in(frames), "the connect's pass sends every region: frames are recorded"
    page.wait_for_timeout(SETTLE_MS)  # nothing is due on the socket any more
    frames.clear()
    answers: list[int] = []
    page.on(
        "response",
        lambda r: answers.append(r.status) if r.url.endswith("/permission-mode") else None,
    )
    page.locator('form.permission-mode button[data-mode="auto"]').click()
    page.locator('form.permission-mode button[data-mode="auto"][aria-pressed="true"]').wait_for()
    assert answers == [200]  # the answer brought the regions
    # past the longest a write holds the socket back, its pass and the quiet pass after it
    page.wait_for_timeout(HOLD_SECONDS * 1000 + SETTLE_MS)
    assert regions_in(frames) == []
