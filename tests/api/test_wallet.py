"""/wallet: my balance and ledger."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from jaiweb.accounts.services import account_create
from jaiweb.render.services import (
    WELCOME_CREDITS,
    credit_request_grant,
    credits_grant,
    credits_set,
)
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
    assert as_alice.get("/wallet").json() == {
        "balance": WELCOME_CREDITS,
        "monthly_topup": 0,
        "panel_cost": 10,
        "level": "ok",
        "open_request": None,
        "ledger": [],
    }


def test_each_sees_only_their_own(as_bob, alice):
    credits_grant(user=alice, amount=7)
    assert as_bob.get("/wallet").json()["ledger"] == []


def test_one_asks_for_credits_once_and_sees_the_open_request(as_alice, alice):
    credits_set(user=alice, balance=15, monthly_topup=20)
    body = as_alice.get("/wallet").json()
    assert (body["level"], body["monthly_topup"]) == ("last", 20)
    asked = as_alice.post("/wallet/requests", {"amount": 50, "message": "the finale"})
    assert asked.status_code == 201, asked.content
    assert (asked.json()["amount"], asked.json()["status"]) == (50, "open")
    again = as_alice.post("/wallet/requests", {"amount": 70})
    assert again.status_code == 200 and again.json()["id"] == asked.json()["id"]
    assert as_alice.get("/wallet").json()["open_request"]["message"] == "the finale"
    credit_request_grant(request_id=asked.json()["id"], amount=50, by="root")
    assert as_alice.get("/wallet").json()["balance"] == 65


@pytest.mark.parametrize(
    "body",
    [
        {"amount": 0},
        {"amount": 10_001},
        {"amount": "many"},
        {"amount": 5, "message": "x" * 501},
        {"amount": 5, "message": "a\u0000b"},
        {},
        [5],
    ],
)
def test_a_bad_ask_is_refused_naming_the_field_and_writes_nothing(as_alice, body):
    response = as_alice.post("/wallet/requests", body)
    assert response.status_code == 422, response.content
    assert as_alice.get("/wallet").json()["open_request"] is None


def test_anonymous_cannot_ask(client):
    assert (
        client.post(
            "/api/v1/wallet/requests", {"amount": 5}, content_type="application/json"
        ).status_code
        == 401
    )
