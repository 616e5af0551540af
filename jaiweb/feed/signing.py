"""HMAC-SHA256 signatures of webhook bodies, shared by the sender and the receiver."""

from __future__ import annotations

import hashlib
import hmac

HEADER = "X-Jaiweb-Signature"


def sign(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def verify(secret: str, body: bytes, signature: str | None) -> bool:
    return bool(signature) and hmac.compare_digest(sign(secret, body), signature)
