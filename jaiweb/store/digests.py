"""The one way a secret token is kept: its SHA-256, so a stolen table reveals no token."""

from __future__ import annotations

import hashlib


def token_digest(token: str) -> str:
    """The hex SHA-256 of ``token``: what is stored and looked up instead of the token."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()
