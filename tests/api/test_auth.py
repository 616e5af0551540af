"""Who is asking: session cookie (with CSRF) or Bearer token; anonymous is 401."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from jaiweb.accounts.models import ApiToken
from jaiweb.accounts.services import api_token_create, api_token_revoke
from tests.api.conftest import Api

pytestmark = pytest.mark.django_db


def test_anonymous_is_401_json(client):
    response = client.get("/api/v1/sessions")
    assert response.status_code == 401
    assert response.json()["code"] == "unauthenticated"
    assert response["WWW-Authenticate"].startswith("Bearer")
    # An unsafe request without a cookie is 401 as well, not a CSRF 403.
    assert Client(enforce_csrf_checks=True).post("/api/v1/sessions").status_code == 401


def test_a_bearer_token_works_without_csrf(alice, alice_token):
    api = Api(Client(enforce_csrf_checks=True), token=alice_token)
    created = api.post("/sessions", {"title": "脚本"})
    assert created.status_code == 201 and created.json()["owner"] == "alice"
    assert [s["title"] for s in api.get("/sessions").json()] == ["脚本"]
    assert ApiToken.objects.get(user=alice).last_used_at is not None


def test_a_revoked_token_is_401(alice, alice_token):
    token = ApiToken.objects.get(user=alice)
    assert api_token_revoke(user=alice, token_id=token.pk)
    api = Api(Client(), token=alice_token)
    assert api.get("/sessions").status_code == 401
    assert api.post("/sessions", {"title": "x"}).status_code == 401
    # A logged-in cookie does not rescue a request that names a bad token.
    api.client.force_login(alice)
    assert api.get("/sessions").status_code == 401


@pytest.mark.parametrize("token", ["jai_not-a-token", "garbage", ""])
def test_an_unknown_token_is_401(token, alice_token):
    response = Client().get("/api/v1/sessions", headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 401


def test_the_token_of_an_inactive_user_is_401(alice, alice_token):
    alice.is_active = False
    alice.save()
    assert Api(Client(), token=alice_token).get("/sessions").status_code == 401


def test_only_a_hash_of_the_secret_is_stored(alice):
    token, secret = api_token_create(user=alice, name="ci")
    stored = ApiToken.objects.filter(pk=token.pk).values()[0]
    assert secret not in {str(v) for v in stored.values()}
    assert secret.startswith(token.prefix) and len(token.prefix) < len(secret) // 3


def test_cookie_auth_enforces_csrf_on_unsafe_methods(alice, session):
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    api = Api(client)
    assert api.get("/sessions").status_code == 200
    refused = [
        api.post("/sessions", {"title": "x"}),
        api.patch(f"/sessions/{session.id}", {"title": "y"}),
        api.delete(f"/sessions/{session.id}"),
        api.post(f"/sessions/{session.id}/prompts", {"text": "hi"}),
    ]
    assert [r.status_code for r in refused] == [403] * 4
    assert {r.json()["code"] for r in refused} == {"csrf_failed"}
    session.refresh_from_db()
    assert session.title == "episode"

    client.get("/accounts/tokens/")  # any page with a form sets the CSRF cookie
    api.headers = {"X-CSRFToken": client.cookies["csrftoken"].value}
    assert api.post("/sessions", {"title": "x"}).status_code == 201


def test_create_api_token_command_prints_a_working_token(alice):
    out = StringIO()
    call_command("create_api_token", "alice", "--name", "laptop", stdout=out)
    secret = out.getvalue().strip()
    assert ApiToken.objects.get(user=alice).name == "laptop"
    assert Api(Client(), token=secret).get("/sessions").status_code == 200


def test_create_api_token_for_an_unknown_user():
    with pytest.raises(CommandError, match="nobody"):
        call_command("create_api_token", "nobody", stdout=StringIO())
