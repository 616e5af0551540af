"""GET /sessions/<id>/episode.html: the active branch as one self-contained page."""

from __future__ import annotations

import pytest

from jaiweb.commands.sessions import prompt_submit
from tests.support.runs import run_pending

pytestmark = pytest.mark.django_db


def test_it_inlines_the_panels_and_loads_nothing_from_elsewhere(client, alice, episode):
    prompt_submit(session=episode, user=alice, text="/draw a <script>pig</script>")
    run_pending()
    client.force_login(alice)
    r = client.get(f"/sessions/{episode.id}/episode.html")
    assert r.status_code == 200 and "attachment" in r["Content-Disposition"]
    body = r.content.decode()
    assert 'data-panel="1"' in body and 'src="data:image/svg+xml;base64,' in body
    assert "<script>" not in body and 'src="/' not in body and "http" not in body.split("<body>")[1]


def test_others_get_404(client, bob, episode):
    client.force_login(bob)
    assert client.get(f"/sessions/{episode.id}/episode.html").status_code == 404
