"""API tokens: what a script sends as ``Authorization: Bearer <token>``.

See docs/ARCHITECTURE.md §12.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models


class ApiToken(models.Model):
    """One token of a user. Only a SHA-256 of the secret is kept: a leaked table logs no one in."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100)
    # The secret's first characters, so its owner can tell tokens apart; never enough to use.
    prefix = models.CharField(max_length=16)
    token_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField()
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["user", "created_at"], name="api_token_by_user")]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def revoked(self) -> bool:
        return self.revoked_at is not None
