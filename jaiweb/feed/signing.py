"""HMAC-SHA256 signatures of webhook bodies, shared by the sender and the receiver."""

from __future__ import annotations

import hashlib
import hmac

HEADER = "X-Jaiweb-Signature"


def sign(secret: str, body: bytes) -> str:
    if not secret:  # an empty key is one anyone can sign with
        raise ValueError("refusing to sign with an empty secret")
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def verify(secret: str | None, body: bytes, signature: str | None) -> bool:
    """False for a missing signature, and for every signature when there is no secret."""
    if not secret or not signature:
        return False
    return hmac.compare_digest(sign(secret, body).encode(), signature.encode("utf-8", "replace"))
