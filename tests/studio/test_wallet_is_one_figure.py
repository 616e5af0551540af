"""A user made by createsuperuser (no wallet yet) sees one balance everywhere: the studio's
credits region, the credits page and the API all show what they can spend."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.test import Client

from jaiweb.accounts.services import api_token_create
from jaiweb.render.models import WELCOME_CREDITS, Wallet
from jaiweb.store.services import session_create

pytestmark = pytest.mark.django_db


def test_a_superuser_without_a_wallet_sees_the_same_credits_in_the_studio_and_the_api(
    django_user_model, monkeypatch
):
    monkeypatch.setenv("DJANGO_SUPERUSER_PASSWORD", "a-long-Admin-pass-41")
    call_command("createsuperuser", "--noinput", username="root", email="r@example.com")
    root = django_user_model.objects.get(username="root")
    assert not Wallet.objects.filter(user=root).exists()
    session = session_create(owner=root, title="mine")
    browser = Client()
    browser.force_login(root)
    page = browser.get(f"/sessions/{session.id}/").content.decode()
    credits_page = browser.get("/credits/").content.decode()
    _, token = api_token_create(user=root, name="script")
    api = Client().get("/api/v1/wallet", HTTP_AUTHORIZATION=f"Bearer {token}").json()
    assert api["balance"] == WELCOME_CREDITS
    assert f'data-balance="{WELCOME_CREDITS}"' in page  # was 0 here, 100 in the API
    assert str(WELCOME_CREDITS) in credits_page
