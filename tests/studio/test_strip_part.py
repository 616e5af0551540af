"""GET /sessions/<id>/strip?before=<entry id>: earlier panels of the active branch."""

from __future__ import annotations

import re

import pytest

from jaiweb.commands.sessions import prompt_submit
from jaiweb.studio.selectors import strip as strip_selectors
from tests.support.runs import run_pending

pytestmark = pytest.mark.django_db


@pytest.fixture
def three_panels(alice, episode):
    for n in range(3):
        prompt_submit(session=episode, user=alice, text=f"/draw panel <{n}>")
        assert run_pending() == "finished"
    return episode


def _panels(body: str) -> list[str]:
    return re.findall(r'data-panel="(img_[^"]+)"', body)


def test_the_page_shows_the_last_panels_and_loads_earlier_ones(
    client, alice, three_panels, monkeypatch
):
    monkeypatch.setattr(strip_selectors, "STRIP_PAGE", 2)
    client.force_login(alice)
    page = client.get(f"/sessions/{three_panels.id}/").content.decode()
    strip = page[page.index('id="strip"') :]
    shown = _panels(strip)
    assert len(shown) == 2 and "panel &lt;2&gt;" in strip
    before = re.search(r'data-action="earlier-panels" hx-get="([^"]+)"', strip).group(1)
    earlier = client.get(before.replace("&amp;", "&"))
    assert earlier.status_code == 200
    body = earlier.content.decode()
    assert len(_panels(body)) == 1 and "panel &lt;0&gt;" in body
    assert "earlier-panels" not in body  # nothing before the first panel
    assert _panels(body)[0] not in shown


def test_all_panels_fit_on_the_page_without_a_button(client, alice, three_panels):
    client.force_login(alice)
    page = client.get(f"/sessions/{three_panels.id}/").content.decode()
    assert len(_panels(page)) == 3 and "earlier-panels" not in page


def test_an_entry_not_on_the_branch_is_404_and_a_missing_one_422(client, alice, three_panels):
    client.force_login(alice)
    assert client.get(f"/sessions/{three_panels.id}/strip?before=m_nope").status_code == 404
    assert client.get(f"/sessions/{three_panels.id}/strip").status_code == 422


def test_someone_elses_session_is_404(client, bob, three_panels):
    client.force_login(bob)
    assert client.get(f"/sessions/{three_panels.id}/strip?before=x").status_code == 404
