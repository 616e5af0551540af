"""/wallet: my balance and ledger."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from jaiweb.accounts.services import account_create
from jaiweb.render.services import WELCOME_CREDITS, credits_grant
from tests.api.conftest import api_for

pytestmark = pytest.mark.django_db


def test_balance_and_ledger_newest_first():
    user = account_create(username="carol", password="carol-pass-1")
    credits_grant(user=user, amount=50, note="thanks", now=timezone.now() + timedelta(seconds=1))
    body = api_for(user).get("/wallet").json()
    assert body["balance"] == WELCOME_CREDITS + 50
    assert [(e["kind"], e["amount"], e["balance_after"]) for e in body["ledger"]] == [
        ("grant", 50, WELCOME_CREDITS + 50),
        ("welcome", WELCOME_CREDITS, WELCOME_CREDITS),
    ]
    assert body["ledger"][0]["note"] == "thanks"


def test_without_a_wallet_yet_the_welcome_credits_are_what_one_can_spend(as_alice):
    assert as_alice.get("/wallet").json() == {"balance": WELCOME_CREDITS, "ledger": []}


def test_each_sees_only_their_own(as_bob, alice):
    credits_grant(user=alice, amount=7)
    assert as_bob.get("/wallet").json()["ledger"] == []
