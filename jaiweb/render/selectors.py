"""Reads of the render service."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.utils import timezone

from jaiweb.prepared import Prepared
from jaiweb.render.models import (
    WELCOME_CREDITS,
    CreditRequest,
    Image,
    LedgerEntry,
    RenderJob,
    Wallet,
)
from jaiweb.render.panel.variation import figure_seed_of


def render_job_lookup(*, key: str) -> dict[str, Any] | None:
    """What happened under a key: for an admin deciding about a parked tool call, and for
    recovery's reconciler, which settles the call itself when this decides it."""
    job = RenderJob.objects.filter(key=key).first()
    if job is None:
        return None
    charge = LedgerEntry.objects.filter(kind="charge", job_key=key).first()
    return {
        "key": job.key,
        "status": job.status,
        "params": job.params,
        "owner_id": job.user_id,
        "backend": job.backend,
        "attempts": job.attempts,
        "result": job.result,
        "error": job.error,
        "created_at": job.created_at,
        "finished_at": job.finished_at,
        "lease_expires_at": job.lease_expires_at,
        "charged": -charge.amount if charge else 0,
    }


_WALLET = Prepared(
    lambda user: (
        Wallet.objects.filter(user_id=user)
        .order_by("pk")
        .values_list("balance", "monthly_topup", "topped_up_for")[:1]
    ),
    user=int,
)


def wallet_balance(*, user: Any, now: datetime | None = None) -> int:
    """Return how many credits the user can spend.

    It is the wallet's balance. A user who has no wallet yet, made by createsuperuser or the
    admin, gets the welcome credits their first render gives them. A monthly top-up that is
    due counts already, because the wallet's next movement writes it first. The studio, the
    credits page and the API all show this one number."""
    row = _WALLET.first(user=getattr(user, "pk", user))
    if row is None:
        return WELCOME_CREDITS
    balance, topup, topped_up_for = row
    due = topup > 0 and topped_up_for < month_of(now or timezone.now())
    return balance + topup if due else balance


@dataclass(frozen=True, slots=True)
class CreditsView:
    """What the credits page and the API say about a user's credits besides the ledger."""

    balance: int
    monthly_topup: int
    panel_cost: int
    open_request: CreditRequest | None
    last_request: CreditRequest | None  # the latest decided one, to say what became of it

    @property
    def panels_left(self) -> int:
        return self.balance // self.panel_cost

    @property
    def level(self) -> str:
        """ "out" (not enough for a panel), "last" (one panel left) or "ok"."""
        return credits_level(balance=self.balance, cost=self.panel_cost)


def credits_level(*, balance: int, cost: int) -> str:
    """ "out" when a panel is more than the balance, "last" when one panel is left, else
    "ok": the one rule the hints next to the paid buttons and the credits page follow."""
    if balance < cost:
        return "out"
    return "last" if balance < 2 * cost else "ok"


def credits_view(*, user: Any, now: datetime | None = None) -> CreditsView:
    from jaiweb.render.services import PANEL_COST  # the services import this module

    topup = Wallet.objects.filter(user=user).values_list("monthly_topup", flat=True).first()
    requests = list(CreditRequest.objects.filter(user=user).order_by("-created_at", "-id")[:5])
    return CreditsView(
        balance=wallet_balance(user=user, now=now),
        monthly_topup=topup or 0,
        panel_cost=PANEL_COST,
        open_request=next((r for r in requests if r.status == CreditRequest.OPEN), None),
        last_request=next((r for r in requests if r.status != CreditRequest.OPEN), None),
    )


def credit_requests_open() -> list[CreditRequest]:
    """Every open credit request, oldest first, with its user: the inbox's list."""
    return list(
        CreditRequest.objects.filter(status=CreditRequest.OPEN)
        .select_related("user", "user__wallet")
        .order_by("created_at", "id")
    )


def month_of(now: datetime) -> str:
    """The calendar month (UTC) a top-up is for, as "2026-12"."""
    return now.astimezone(UTC).strftime("%Y-%m")


def ledger_for(*, user: Any, limit: int = 200) -> list[LedgerEntry]:
    return list(
        LedgerEntry.objects.filter(wallet__user=user).order_by("-created_at", "-id")[:limit]
    )


def images_by_id(*, ids: list[str], owner_id: Any) -> dict[str, Image]:
    """The images among ``ids`` that belong to ``owner_id``: an id alone is never enough to
    reach another user's picture, whatever a session's entries name."""
    return {image.id: image for image in Image.objects.filter(id__in=ids, user_id=owner_id)}


def image_owned(*, image_id: str, owner_id: Any) -> bool:
    """Whether ``image_id`` is an image of ``owner_id``."""
    return Image.objects.filter(pk=image_id, user_id=owner_id).exists()


def image_look_seed(*, image_id: str, owner_id: Any, name: str) -> int | None:
    """The seed the figure of ``name`` was drawn with in the panel ``image_id`` of
    ``owner_id`` (a look taken from that panel keeps its pose); None for another user's
    image, or a picture no render of ours drew (an import)."""
    params = (
        RenderJob.objects.filter(image__id=image_id, image__user_id=owner_id)
        .values_list("params", flat=True)
        .first()
    )
    return figure_seed_of(params, name) if isinstance(params, dict) else None


def image_for_viewer(*, image_id: str, viewer: Any) -> Image | None:
    """The image if this viewer may see it: its owner, staff (who may read every session,
    so its thumbnails too), or anyone once it is published."""
    image = Image.objects.filter(pk=image_id).first()
    if image is None:
        return None
    if image.published_at is not None:
        return image
    if viewer is not None and (image.user_id == viewer.pk or viewer.is_staff):
        return image
    return None
