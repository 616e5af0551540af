"""A write's regions reach the page that made it once: in its HTTP answer, and not again
by its socket, which the command's announcement reached too."""

from __future__ import annotations

import re
import time

import pytest

from jaiweb.live.catch_up import QUIET_SECONDS
from jaiweb.studio.regions import REGIONS
from tests.support.browser import open_new_session

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

REGION_ID = re.compile(r'id="(' + "|".join(re.escape(name) for name in REGIONS) + r')"')


def test_a_writes_regions_reach_the_writers_page_once(shared_studio, page):
    frames: list[str] = []
    page.on("websocket", lambda ws: ws.on("framereceived", lambda frame: frames.append(frame)))
    open_new_session(page, shared_studio.url, "once")
    page.locator('form.permission-mode button[data-mode="ask"][aria-pressed="true"]').wait_for()
    time.sleep(QUIET_SECONDS + 1)  # nothing is due on the socket any more
    assert any(REGION_ID.search(frame) for frame in frames)  # the connect's pass, recorded
    frames.clear()
    answers: list[int] = []
    page.on(
        "response",
        lambda r: answers.append(r.status) if r.url.endswith("/permission-mode") else None,
    )
    page.locator('form.permission-mode button[data-mode="auto"]').click()
    page.locator('form.permission-mode button[data-mode="auto"][aria-pressed="true"]').wait_for()
    assert answers == [200]  # the answer brought the regions
    time.sleep(QUIET_SECONDS + 1)  # past the write's pass and the quiet pass after it
    assert [REGION_ID.findall(frame) for frame in frames if REGION_ID.search(frame)] == []
