"""Fresh ids for the shell (the pure core takes them as arguments)."""

from __future__ import annotations

import uuid


def new_id(prefix: str) -> str:
    """``prefix`` + 20 hex digits (80 random bits): unique enough for ids within a database."""
    return f"{prefix}_{uuid.uuid4().hex[:20]}"
