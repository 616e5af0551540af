"""/accounts/password/: change one's password (logged in only)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db


def test_anonymous_is_sent_to_log_in(client):
    response = client.get("/accounts/password/")
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")


def test_changing_the_password(client, alice):
    client.force_login(alice)
    response = client.post(
        "/accounts/password/",
        {
            "old_password": "alice-pass-1",
            "new_password1": "fresh-pass-789",
            "new_password2": "fresh-pass-789",
        },
    )
    assert response.status_code == 302 and response["Location"] == "/accounts/password/done/"
    alice.refresh_from_db()
    assert alice.check_password("fresh-pass-789")


def test_a_wrong_old_password_changes_nothing(client, alice):
    client.force_login(alice)
    response = client.post(
        "/accounts/password/",
        {
            "old_password": "wrong",
            "new_password1": "fresh-pass-789",
            "new_password2": "fresh-pass-789",
        },
    )
    assert response.status_code == 200
    alice.refresh_from_db()
    assert alice.check_password("alice-pass-1")
