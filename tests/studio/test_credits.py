"""GET /credits/: the balance and its history."""

from __future__ import annotations

import pytest

from jaiweb.sessions.commands import prompt_submit
from tests.support.runs import run_pending

pytestmark = pytest.mark.django_db


def test_it_lists_the_welcome_credits_and_each_charge(client, alice, episode):
    prompt_submit(session=episode, user=alice, text="/draw a pig")
    run_pending()
    client.force_login(alice)
    body = client.get("/credits/").content.decode()
    assert 'id="credits-balance">90<' in body
    assert "welcome credits" in body and "a panel drawn" in body and "-10" in body


def test_anonymous_goes_to_log_in(client):
    assert client.get("/credits/").status_code == 302
