"""GET /credits/: the balance and its history."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest

from jaiweb.commands.sessions import prompt_submit
from jaiweb.render.services import credits_set
from jaiweb.store.forks import session_fork
from tests.support.builders import awaiting_approval
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


def hint(body: str) -> str:
    """The level the balance hint in the controls says."""
    controls = body.split('id="controls"')[1].split('id="prompt-form"')[0]
    return re.search(r'data-balance-hint="(\w+)" data-balance="(\d+)"', controls).groups()


@pytest.mark.parametrize(
    "balance,level,says",
    [
        (100, "ok", "You have 100 credits."),
        (15, "last", "enough for one last panel"),
        (9, "out", "not enough for a panel"),
    ],
)
def test_the_balance_shows_by_the_paid_buttons_and_warns_before_the_last_panel(
    client, alice, episode, balance, level, says
):
    credits_set(user=alice, balance=balance)
    awaiting_approval(episode)
    client.force_login(alice)
    body = client.get(f"/sessions/{episode.id}/").content.decode()
    approval = body.split('class="approval"')[1].split("</form>")[0]
    assert f'data-balance-hint="{level}" data-balance="{balance}"' in approval
    assert hint(body) == (level, str(balance)) and says in body
    asks = 'data-action="ask-credits"' in approval
    assert asks == (level != "ok")  # out of credits, or nearly: how to ask for more


def test_a_charge_made_before_a_fork_is_listed_under_the_session_it_was_made_in(
    client, alice, episode, monkeypatch
):
    prompt_submit(session=episode, user=alice, text="/draw a pig")
    run_pending()
    episode.refresh_from_db()
    # The fork sorts first every way a guess could go (its id, its creation), so only the
    # render's key can tell where the pig was drawn.
    monkeypatch.setattr("jaiweb.store.services.new_id", lambda prefix: f"{prefix}_000fork")
    fork = session_fork(
        session_id=episode.id,
        entry_id=episode.leaf_id,
        owner=alice,
        title="F",
        now=episode.created_at - timedelta(days=1),
    )
    monkeypatch.undo()
    prompt_submit(session=fork, user=alice, text="/draw a cat")
    run_pending()
    client.force_login(alice)
    body = client.get("/credits/").content.decode()
    rows = re.findall(r'<tr data-ledger-kind="charge">.*?</tr>', body, re.S)
    sessions = [re.search(r'href="/sessions/([^/]+)/" data-ledger-session', r)[1] for r in rows]
    assert sessions == [fork.id, episode.id]  # newest first: the cat in the fork, the pig here
