"""Reads of the render service."""

from __future__ import annotations

from typing import Any

from jaiweb.render.models import WELCOME_CREDITS, Image, LedgerEntry, RenderJob, Wallet
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


def wallet_balance(*, user: Any) -> int:
    """What the user can spend: the wallet's balance, or, for a user who has none yet (made
    by createsuperuser or the admin), the welcome credits their first render gives them.
    The studio, the credits page and the API all show this one figure."""
    balance = Wallet.objects.filter(user=user).values_list("balance", flat=True).first()
    return WELCOME_CREDITS if balance is None else balance


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
