"""Reads of accounts."""

from __future__ import annotations

from typing import Any

from jaiweb.accounts.models import ApiToken


def api_tokens_for(*, user: Any) -> list[ApiToken]:
    """The user's tokens, newest first, revoked ones included (they show as revoked)."""
    return list(ApiToken.objects.filter(user=user).order_by("-created_at", "-id"))
