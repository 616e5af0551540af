"""The API's own access rule beyond "owner, or staff read-only" (``jaiweb.commands.access``):
the recovery inbox is for staff."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied


def staff_only(user: Any) -> None:
    if not user.is_staff:
        raise PermissionDenied("only staff may use the recovery inbox")
