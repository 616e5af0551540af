"""GET/POST /accounts/login/ (fields username, password)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db


def test_logging_in(client, alice):
    page = client.get("/accounts/login/")
    assert page.status_code == 200
    assert b'name="username"' in page.content and b'name="password"' in page.content
    response = client.post("/accounts/login/", {"username": "alice", "password": "alice-pass-1"})
    assert response.status_code == 302 and response["Location"] == "/"


def test_a_wrong_password_says_so_without_saying_which_part(client, alice):
    response = client.post("/accounts/login/", {"username": "alice", "password": "nope"})
    assert response.status_code == 200
    assert b"correct username and password" in response.content


def test_csrf_is_required(alice):
    from django.test import Client

    strict = Client(enforce_csrf_checks=True)
    response = strict.post("/accounts/login/", {"username": "alice", "password": "alice-pass-1"})
    assert response.status_code == 403
