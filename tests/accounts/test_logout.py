"""POST /accounts/logout/."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db


def test_logging_out(client, alice):
    client.force_login(alice)
    assert b"data-username" in client.get("/").content
    response = client.post("/accounts/logout/")
    assert response.status_code == 302 and response["Location"] == "/accounts/login/"
    assert b"data-username" not in client.get("/").content


def test_get_does_not_log_out(client, alice):
    client.force_login(alice)
    assert client.get("/accounts/logout/").status_code == 405
