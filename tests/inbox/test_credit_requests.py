"""A user out of credits asks for more; an admin grants or declines it in the inbox.

The grant is one ledger entry keyed by the request: sent twice (a double click, a second
admin) it is written once, and the second answer says it was decided already.
"""

from __future__ import annotations

import pytest

from jaiweb.render.models import CreditRequest, LedgerEntry
from jaiweb.render.selectors import wallet_balance
from jaiweb.render.services import credits_set, wallet_get_or_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(django_user_model):
    return django_user_model.objects.create_user("root", password="root-pass-1", is_staff=True)


@pytest.fixture
def broke(alice):
    """Alice with 5 credits: not enough for a panel."""
    wallet_get_or_create(user=alice)
    credits_set(user=alice, balance=5)
    return alice


def ask(client, amount="50", message="for the <b>finale</b>"):
    return client.post("/credits/ask", {"amount": amount, "message": message})


def test_a_user_out_of_credits_asks_and_an_admin_grants_it_once(client, broke, staff):
    client.force_login(broke)
    page = client.get("/credits/").content.decode()
    assert 'data-credits-level="out"' in page and 'id="ask-credits-form"' in page
    response = ask(client)
    assert response.status_code == 302 and response["Location"].endswith("#ask-credits")
    page = client.get("/credits/").content.decode()
    assert 'data-credit-request="open"' in page and 'id="ask-credits-form"' not in page
    assert ask(client, amount="70").status_code == 302  # asking again: the open one stands
    [request] = CreditRequest.objects.all()
    assert request.amount == 50

    client.force_login(staff)
    inbox = client.get("/inbox/").content.decode()
    assert f'data-credit-request="{request.pk}"' in inbox and 'data-user="alice"' in inbox
    assert "&lt;b&gt;finale&lt;/b&gt;" in inbox and "<b>finale</b>" not in inbox  # escaped
    decide = f"/inbox/credits/{request.pk}"
    response = client.post(decide, {"action": "grant", "amount": "30", "reason": "enjoy"})
    assert response.status_code == 302
    again = client.post(decide, {"action": "grant", "amount": "30"})  # a double click
    assert again.status_code == 409 and "decided already" in again.content.decode()
    grants = LedgerEntry.objects.filter(kind="grant")
    assert [(g.amount, g.job_key) for g in grants] == [(30, f"request:{request.pk}")]
    assert wallet_balance(user=broke) == 35
    inbox = client.get("/inbox/").content.decode()
    assert f'data-credit-request="{request.pk}"' not in inbox and "data-credits-empty" in inbox

    client.force_login(broke)
    page = client.get("/credits/").content.decode()
    assert 'data-credit-request="granted"' in page and "enjoy" in page
    assert "your request, granted" in page and 'data-ledger-kind="adjust"' in page


def test_a_declined_request_moves_nothing(client, broke, staff):
    client.force_login(broke)
    ask(client)
    request = CreditRequest.objects.get()
    client.force_login(staff)
    response = client.post(f"/inbox/credits/{request.pk}", {"action": "decline", "reason": "no"})
    assert response.status_code == 302
    assert not LedgerEntry.objects.filter(kind="grant").exists()
    assert (
        client.post(f"/inbox/credits/{request.pk}", {"action": "grant", "amount": "5"}).status_code
        == 409
    )
    client.force_login(broke)
    assert 'data-credit-request="declined"' in client.get("/credits/").content.decode()


@pytest.mark.parametrize(
    "form",
    [
        {"action": "grant", "amount": "0"},
        {"action": "grant"},
        {"action": "steal"},
        {},
        {"action": "decline", "reason": "a\x00b"},
    ],
)
def test_a_bad_decision_is_refused_and_changes_nothing(client, broke, staff, form):
    client.force_login(broke)
    ask(client)
    request = CreditRequest.objects.get()
    client.force_login(staff)
    response = client.post(f"/inbox/credits/{request.pk}", form)
    assert response.status_code == 422
    request.refresh_from_db()
    assert request.status == "open" and not LedgerEntry.objects.filter(kind="grant").exists()


@pytest.mark.parametrize("amount", ["0", "-3", "abc", "10001", ""])
def test_a_bad_ask_is_refused_with_the_form_again(client, broke, amount):
    client.force_login(broke)
    response = ask(client, amount=amount)
    assert response.status_code == 422 and "data-ask-error" in response.content.decode()
    assert not CreditRequest.objects.exists()


def test_only_staff_decide_and_only_users_ask(client, broke, bob):
    client.force_login(broke)
    ask(client)
    request = CreditRequest.objects.get()
    client.force_login(bob)
    response = client.post(f"/inbox/credits/{request.pk}", {"action": "grant", "amount": "5"})
    assert response.status_code == 403
    client.logout()
    assert client.post("/credits/ask", {"amount": "5"}).status_code == 302  # to log in
    response = client.post(f"/inbox/credits/{request.pk}", {"action": "grant", "amount": "5"})
    assert response.status_code == 302
    assert CreditRequest.objects.count() == 1 and not LedgerEntry.objects.filter(kind="grant")
