"""/accounts/tokens/: create (the secret shown once), list and revoke one's API tokens."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from jaiweb.accounts.models import ApiToken
from jaiweb.accounts.services import api_token_authenticate, api_token_create

pytestmark = pytest.mark.django_db


def secret_on(page: str) -> str | None:
    found = re.search(r"<code data-token-secret>([^<]+)</code>", page)
    return found.group(1) if found else None


def test_anonymous_is_sent_to_log_in(client):
    response = client.get("/accounts/tokens/")
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")


def test_create_shows_the_secret_once(client, alice):
    client.force_login(alice)
    created = client.post("/accounts/tokens/", {"name": "my script"})
    assert created.status_code == 200
    assert "no-store" in created["Cache-Control"]
    secret = secret_on(created.content.decode())
    assert secret and api_token_authenticate(secret=secret) == alice
    token = ApiToken.objects.get(user=alice)
    assert token.name == "my script"

    later = client.get("/accounts/tokens/").content.decode()
    assert secret_on(later) is None and secret not in later
    assert token.prefix in later and f'data-token-id="{token.pk}"' in later


def test_a_name_is_required(client, alice):
    client.force_login(alice)
    response = client.post("/accounts/tokens/", {"name": "  "})
    assert response.status_code == 400 and not ApiToken.objects.exists()


def test_revoke(client, alice):
    token, secret = api_token_create(user=alice, name="old")
    client.force_login(alice)
    response = client.post(f"/accounts/tokens/{token.pk}/revoke/")
    assert response.status_code == 302 and response["Location"] == "/accounts/tokens/"
    token.refresh_from_db()
    assert token.revoked and api_token_authenticate(secret=secret) is None
    assert 'data-revoked="true"' in client.get("/accounts/tokens/").content.decode()


def test_someone_elses_token_cannot_be_revoked(client, alice, bob):
    token, secret = api_token_create(user=alice, name="alice's")
    client.force_login(bob)
    assert client.post(f"/accounts/tokens/{token.pk}/revoke/").status_code == 404
    assert api_token_authenticate(secret=secret) == alice
    assert "alice&#x27;s" not in client.get("/accounts/tokens/").content.decode()


def test_the_page_needs_its_csrf_token(alice):
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    assert client.post("/accounts/tokens/", {"name": "x"}).status_code == 403
    token, _ = api_token_create(user=alice, name="kept")
    assert client.post(f"/accounts/tokens/{token.pk}/revoke/").status_code == 403
    token.refresh_from_db()
    assert not token.revoked
