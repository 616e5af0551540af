"""GET/POST /accounts/signup/: a new account, logged in, with its welcome credits."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from jaiweb.render.selectors import wallet_balance

pytestmark = pytest.mark.django_db


def test_the_form(client):
    response = client.get("/accounts/signup/")
    assert response.status_code == 200
    assert b'name="username"' in response.content and b"100 credits" in response.content


def test_signing_up_logs_in_and_grants_the_welcome_credits(client):
    response = client.post(
        "/accounts/signup/",
        {"username": "bobo", "password1": "a-long-pass-123", "password2": "a-long-pass-123"},
    )
    assert response.status_code == 302 and response["Location"] == "/"
    user = get_user_model().objects.get(username="bobo")
    assert wallet_balance(user=user) == 100
    assert client.get("/").context["user"] == user


def test_bad_input_is_a_400_and_creates_nothing(client):
    response = client.post(
        "/accounts/signup/",
        {"username": "<script>", "password1": "a-long-pass-123", "password2": "other-pass-456"},
    )
    assert response.status_code == 400
    assert b"<script>" not in response.content  # what was typed comes back escaped
    assert not get_user_model().objects.exists()


def test_a_taken_name_is_refused(client, alice):
    response = client.post(
        "/accounts/signup/",
        {"username": "alice", "password1": "a-long-pass-123", "password2": "a-long-pass-123"},
    )
    assert response.status_code == 400
    assert get_user_model().objects.count() == 1


@pytest.mark.parametrize(
    ("password", "why"),
    [
        ("short", "This password is too short. It must contain at least 8 characters."),
        ("password123", "This password is too common."),
        ("8675309241", "This password is entirely numeric."),
        ("bobo-bobo", "The password is too similar to the username."),
    ],
)
def test_a_weak_password_is_refused_and_creates_nothing(client, password, why):
    """Issue 14.9: sign-up took the password "short" (no password validators)."""
    response = client.post(
        "/accounts/signup/",
        {"username": "bobo-bobo", "password1": password, "password2": password},
    )
    assert response.status_code == 400
    assert why in response.content.decode()
    assert not get_user_model().objects.exists()
