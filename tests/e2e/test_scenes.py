"""A scene typed in the studio is the scene drawn: a rooftop at night in English and
fireworks in Chinese, each panel's SVG naming its setting (``data-scene``)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from tests.support.browser import (
    branch_entry_ids,
    open_new_session,
    panels,
    run_with_approval,
    shot,
    wait_tree_has,
)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.one_pass("sqlite"),  # the embedded studio (docs/TESTING.md)
]


def drawn_svg(page, index: int) -> ET.Element:
    """The SVG the strip's panel number ``index`` shows, as the browser fetched it."""
    panels(page).nth(index).locator("img").wait_for()
    src = panels(page).nth(index).locator("img").get_attribute("src")
    answer = page.request.get(page.url.split("/sessions/")[0] + src if src.startswith("/") else src)
    assert answer.ok, (src, answer.status)
    return ET.fromstring(answer.body())


def test_a_scene_typed_in_either_language_is_the_scene_drawn(shared_studio, page):
    session_id = open_new_session(page, shared_studio.url, "scenes")
    run_with_approval(page, session_id, "Draw Pig-Man on the rooftop at night")
    page.locator("header select[name=language]").select_option("zh-hans")
    page.locator('html[lang="zh-hans"]').wait_for(state="attached")
    wait_tree_has(page, branch_entry_ids(session_id))
    run_with_approval(page, session_id, "画猪猪侠和菲菲看烟花")
    panels(page).nth(1).wait_for()
    rooftop, fireworks = drawn_svg(page, 0), drawn_svg(page, 1)
    assert (rooftop.get("data-scene"), rooftop.get("data-time")) == ("rooftop", "night")
    assert (fireworks.get("data-scene"), fireworks.get("data-time")) == ("fireworks", "night")
    panels(page).nth(1).scroll_into_view_if_needed()
    shot(page, "scenes-studio")
