"""Accounts: a new user comes with their wallet and its welcome credits."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db import transaction

from jaiweb.render.services import wallet_get_or_create


def account_create(*, username: str, password: str):
    """The user and their wallet, in one transaction."""
    with transaction.atomic():
        user = get_user_model().objects.create_user(username=username, password=password)
        wallet_get_or_create(user=user)
    return user
