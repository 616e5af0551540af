"""Accounts: a new user comes with their wallet and its welcome credits; API tokens."""

from __future__ import annotations

import secrets
from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from jaiweb.accounts.models import ApiToken
from jaiweb.prepared import Prepared, from_row, model_columns
from jaiweb.render.services import wallet_get_or_create
from jaiweb.store.digests import token_digest

TOKEN_PREFIX = "jai_"
# last_used_at is a hint for its owner, not an audit log: one write a minute per token at most.
LAST_USED_RESOLUTION = timedelta(minutes=1)


def account_create(*, username: str, password: str):
    """The user and their wallet, in one transaction."""
    with transaction.atomic():
        user = get_user_model().objects.create_user(username=username, password=password)
        wallet_get_or_create(user=user)
    return user


def api_token_create(*, user: Any, name: str, now: datetime | None = None) -> tuple[ApiToken, str]:
    """A new token and its secret; the secret is shown once and never stored."""
    name = name.strip()
    if not name or len(name) > 100:
        raise ValueError("a token's name has 1 to 100 characters")
    secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(
        user=user,
        name=name,
        prefix=secret[: len(TOKEN_PREFIX) + 6],
        token_hash=token_digest(secret),
        created_at=now or timezone.now(),
    )
    return token, secret


def api_token_revoke(*, user: Any, token_id: int, now: datetime | None = None) -> bool:
    """Revoke one of the user's tokens; False when they have no such (live) token."""
    revoked = ApiToken.objects.filter(pk=token_id, user=user, revoked_at__isnull=True).update(
        revoked_at=now or timezone.now()
    )
    return bool(revoked)


def api_token_authenticate(*, secret: str, now: datetime | None = None) -> Any | None:
    """The active user a live token belongs to, or None; notes when the token was used."""
    if not secret.startswith(TOKEN_PREFIX):
        return None
    row = _LIVE_TOKEN.first(digest=token_digest(secret))
    if row is None:
        return None
    token_id, last_used_at, *user = row
    now = now or timezone.now()
    if last_used_at is None or now - last_used_at >= LAST_USED_RESOLUTION:
        ApiToken.objects.filter(pk=token_id).update(last_used_at=now)
    return from_row(get_user_model(), tuple(user))


_LIVE_TOKEN = Prepared(
    lambda digest: (
        ApiToken.objects.filter(token_hash=digest, revoked_at__isnull=True, user__is_active=True)
        .order_by("pk")
        .values_list(
            "pk",
            "last_used_at",
            *(f"user__{name}" for name in model_columns(get_user_model())),
        )[:1]
    ),
    digest=str,
)
