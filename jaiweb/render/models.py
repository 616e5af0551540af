"""Wallets, the credit ledger and render jobs keyed by idempotency key."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models

WELCOME_CREDITS = 100  # a new wallet's balance: what a new user can spend


class Wallet(models.Model):
    """A user's credits; ``balance`` is the sum of the ledger, written with each ledger row."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, primary_key=True, related_name="wallet"
    )
    balance = models.IntegerField()
    updated_at = models.DateTimeField()
    # Credits added at the wallet's first movement of each calendar month (UTC), as a
    # "topup" ledger entry keyed by the month: an admin's setting, 0 for none.
    monthly_topup = models.PositiveIntegerField(default=0)
    # The month ("2026-12") whose top-up the ledger holds last; "" before the first one.
    topped_up_for = models.CharField(max_length=7, default="", blank=True)

    def __str__(self) -> str:
        return f"{self.user} ({self.balance} credits)"


class LedgerEntry(models.Model):
    """One movement of credits. Never changed: a correction is another entry."""

    KINDS = [
        ("welcome", "welcome credits"),
        ("grant", "granted"),
        ("charge", "render charge"),
        ("topup", "monthly top-up"),
        ("adjust", "set by an admin"),
    ]
    wallet = models.ForeignKey(Wallet, on_delete=models.CASCADE, related_name="ledger")
    kind = models.CharField(max_length=16, choices=KINDS)
    amount = models.IntegerField()  # positive: credits in; negative: spent
    balance_after = models.IntegerField()
    job_key = models.CharField(max_length=128, null=True, blank=True)
    note = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField()

    class Meta:
        constraints = [
            # one charge per render key: the database itself refuses a double charge
            models.UniqueConstraint(
                fields=["job_key"], condition=models.Q(kind="charge"), name="one_charge_per_key"
            ),
            # one credit-in movement per key (a request's grant, a month's top-up): a grant
            # sent twice, or by two admins at once, is written once
            models.UniqueConstraint(
                fields=["job_key"],
                condition=models.Q(kind__in=["grant", "topup", "adjust"]),
                name="one_grant_per_key",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.amount:+d}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self._state.adding:
            raise ValueError("ledger entries are never changed")
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any):
        raise ValueError("ledger entries are never deleted")


class CreditRequest(models.Model):
    """A user's ask for more credits, decided by an admin in the recovery inbox.

    Granting it writes one ``grant`` ledger entry keyed by the request, in the transaction
    that marks it granted: a second grant of the same request finds it done."""

    OPEN, GRANTED, DECLINED = "open", "granted", "declined"
    STATUSES = [(OPEN, "open"), (GRANTED, "granted"), (DECLINED, "declined")]

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="credit_requests"
    )
    amount = models.PositiveIntegerField()  # what the user asked for
    message = models.CharField(max_length=500, blank=True)
    status = models.CharField(max_length=16, choices=STATUSES, default=OPEN)
    created_at = models.DateTimeField()
    decided_by = models.CharField(max_length=150, blank=True)
    decided_at = models.DateTimeField(null=True, blank=True)
    reason = models.CharField(max_length=500, blank=True)  # the admin's word to the user
    granted = models.PositiveIntegerField(default=0)  # what the admin granted

    class Meta:
        constraints = [
            # one open request per user: asking twice is the same ask
            models.UniqueConstraint(
                fields=["user"], condition=models.Q(status="open"), name="one_open_credit_request"
            )
        ]

    def __str__(self) -> str:
        return f"{self.user} asks {self.amount} ({self.status})"

    @property
    def ledger_key(self) -> str:
        """The key of the grant's ledger entry: the request's, so it is granted once."""
        return f"request:{self.pk}"


class RenderJob(models.Model):
    """A render request under an idempotency key, and what became of it."""

    IN_PROGRESS, SUCCEEDED, FAILED = "in_progress", "succeeded", "failed"
    STATUSES = [(IN_PROGRESS, "in progress"), (SUCCEEDED, "succeeded"), (FAILED, "failed")]

    key = models.CharField(primary_key=True, max_length=128)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    params = models.JSONField()
    params_hash = models.CharField(max_length=64)
    backend = models.CharField(max_length=16)
    cost = models.PositiveIntegerField()
    status = models.CharField(max_length=16, choices=STATUSES)
    attempts = models.PositiveIntegerField(default=1)  # renders started for this key
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    result = models.JSONField(null=True, blank=True)
    error = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.key} ({self.status})"


class Image(models.Model):
    """A rendered panel on disk under MEDIA_ROOT; private to its owner until published."""

    id = models.CharField(primary_key=True, max_length=40)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    job = models.OneToOneField(RenderJob, on_delete=models.CASCADE, related_name="image")
    path = models.CharField(max_length=300)  # relative to MEDIA_ROOT
    content_type = models.CharField(max_length=40)
    published_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField()

    def __str__(self) -> str:
        return self.id
