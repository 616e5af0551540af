"""The render service: credits and idempotent renders with Stripe's key semantics.

The first request under a key renders, charges and stores its result in one
transaction; a repeat with the same parameters gets that result again with no new
charge; the same key with other parameters is refused; a repeat while the first is
still rendering is told "in progress", unless the first one's lease has run out (it
crashed mid-render), when the repeat takes the job over. A backend that knows its
progress reports it while it draws; each report renews the render's lease, so a long
render is not taken over while its backend still works on it. A character's look may
name a reference picture: the render reads it only from the user's own images, and a
reference that is not theirs fails the render before a backend is asked, charging nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.utils import timezone

from jaiweb.prepared import Prepared, from_row, model_columns
from jaiweb.render.backends import BackendError, Renderer, renderer_for_settings
from jaiweb.render.backends.base import ReferenceImage, panel_reference
from jaiweb.render.errors import InsufficientCredits, KeyReused, RenderFailed, RenderInProgress
from jaiweb.render.models import (
    WELCOME_CREDITS,
    CreditRequest,
    Image,
    LedgerEntry,
    RenderJob,
    Wallet,
)
from jaiweb.render.selectors import month_of

PANEL_COST = 10
MAX_CREDITS = 1_000_000  # the most an admin may set a balance or a monthly top-up to
MAX_REQUEST = 10_000  # the most a user may ask for at once
RENEW_EVERY_SECONDS = 1.0  # progress reports closer together renew the lease once


def render_lease_seconds() -> int:
    """How long an unfinished render holds its key before a repeat may take it over."""
    return getattr(settings, "JAIWEB_RENDER_LEASE_SECONDS", 30)


@dataclass(frozen=True, slots=True)
class RenderResult:
    key: str
    image_id: str
    content_type: str
    backend: str
    cost: int  # what the render under this key was charged, once
    replayed: bool  # True: an earlier request's stored result, no new charge


def params_hash(params: dict[str, Any]) -> str:
    text = json.dumps(params, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def _wallet_created(user: Any, now: datetime) -> Wallet | None:
    """The user's new wallet with its welcome credits, or None when another transaction
    created one first (on PostgreSQL the insert waits for that one to commit, then fails
    on the unique user; the savepoint keeps this transaction usable)."""
    try:
        with transaction.atomic():
            wallet = Wallet.objects.create(
                user=user, balance=WELCOME_CREDITS, updated_at=now, topped_up_for=month_of(now)
            )
            LedgerEntry.objects.create(
                wallet=wallet,
                kind="welcome",
                amount=WELCOME_CREDITS,
                balance_after=WELCOME_CREDITS,
                created_at=now,
            )
    except IntegrityError:
        return None
    return wallet


def _locked_row(model: type, **kinds: type) -> Prepared:
    """A prepared read of the one row of ``model`` with the given column values, locked
    for the transaction: ``model``'s columns, for ``from_row``."""
    return Prepared(
        lambda **values: (
            model.objects.select_for_update()
            .filter(**values)
            .order_by("pk")
            .values_list(*model_columns(model))[:1]
        ),
        **kinds,
    )


# Every render takes each twice (its charge is held, then settled): compiled once.
_LOCKED_WALLET = _locked_row(Wallet, user_id=int)
_LOCKED_JOB = _locked_row(RenderJob, key=str)


def _locked_wallet(user: Any, now: datetime) -> Wallet:
    """The user's wallet, locked for this transaction, with this month's top-up written
    first when it is due: every movement of credits starts here."""
    # a user, or its id, as the filter on the relation took either
    wallet = from_row(Wallet, _LOCKED_WALLET.first(user_id=getattr(user, "pk", user)))
    if wallet is None:
        created = _wallet_created(user, now)
        if created is not None:
            return created
        # Another transaction made it between the read and the insert: use theirs.
        wallet = Wallet.objects.select_for_update().get(user=user)
    month = month_of(now)
    if wallet.monthly_topup > 0 and wallet.topped_up_for < month:
        key = f"topup:{wallet.pk}:{month}"
        if not LedgerEntry.objects.filter(job_key=key, kind="topup").exists():
            _move(
                wallet,
                kind="topup",
                amount=wallet.monthly_topup,
                now=now,
                key=key,
                note=f"monthly top-up for {month}",
            )
        wallet.topped_up_for = month
        wallet.save(update_fields=["topped_up_for"])
    return wallet


def wallet_get_or_create(*, user: Any, now: datetime | None = None) -> Wallet:
    """The user's wallet; a new one starts with the welcome credits."""
    with transaction.atomic():
        return _locked_wallet(user, now or timezone.now())


def _move(
    wallet: Wallet, *, kind: str, amount: int, now: datetime, key: str | None = None, note: str = ""
) -> LedgerEntry:
    wallet.balance += amount
    wallet.updated_at = now
    wallet.save(update_fields=["balance", "updated_at"])
    return LedgerEntry.objects.create(
        wallet=wallet,
        kind=kind,
        amount=amount,
        balance_after=wallet.balance,
        job_key=key,
        note=note,
        created_at=now,
    )


def credits_grant(
    *,
    user: Any,
    amount: int,
    note: str = "",
    key: str | None = None,
    now: datetime | None = None,
) -> LedgerEntry:
    """Add credits to a user's wallet, as an admin's grant does.

    With ``key``, the grant is written once. A repeat under the same key, from a form sent
    twice or two admins at once, returns the first entry and adds nothing. The wallet's lock
    orders concurrent writers, and the ledger's unique key refuses a second entry even so."""
    if amount <= 0:
        raise ValueError("a grant adds at least 1 credit")
    now = now or timezone.now()
    with transaction.atomic():
        wallet = _locked_wallet(user, now)
        if key is not None:
            done = LedgerEntry.objects.filter(job_key=key, kind="grant").first()
            if done is not None and done.wallet_id != wallet.pk:
                raise ValueError(f"the grant key {key!r} is another user's")
            if done is not None:
                return done
        return _move(wallet, kind="grant", amount=amount, now=now, key=key, note=note[:200])


def credits_set(
    *,
    user: Any,
    balance: int | None = None,
    monthly_topup: int | None = None,
    note: str = "",
    now: datetime | None = None,
) -> Wallet:
    """Set a user's credits to ``balance`` and/or their monthly top-up (an admin's
    setting). The balance moves by one ``adjust`` ledger entry of the difference, computed
    under the wallet's lock, so a charge landing meanwhile is never lost: setting the same
    balance twice writes nothing the second time."""
    if balance is not None and not 0 <= balance <= MAX_CREDITS:
        raise ValueError(f"a balance is 0 to {MAX_CREDITS} credits")
    if monthly_topup is not None and not 0 <= monthly_topup <= MAX_CREDITS:
        raise ValueError(f"a monthly top-up is 0 to {MAX_CREDITS} credits")
    now = now or timezone.now()
    with transaction.atomic():
        wallet = _locked_wallet(user, now)
        if balance is not None and balance != wallet.balance:
            _move(wallet, kind="adjust", amount=balance - wallet.balance, now=now, note=note[:200])
        if monthly_topup is not None and monthly_topup != wallet.monthly_topup:
            wallet.monthly_topup = monthly_topup
            # the month it is set in counts as topped up: the first top-up is next month's
            wallet.topped_up_for = max(wallet.topped_up_for, month_of(now))
            wallet.save(update_fields=["monthly_topup", "topped_up_for"])
        return wallet


def credits_topup_due(*, now: datetime | None = None) -> int:
    """Write this month's top-up of every wallet that has one due (``manage.py credits
    --topup``, from cron on the 1st); each is keyed by its month, so a second run adds
    nothing. How many wallets were topped up."""
    now = now or timezone.now()
    month = month_of(now)
    due = Wallet.objects.filter(monthly_topup__gt=0, topped_up_for__lt=month)
    count = 0
    for user_id in due.values_list("user_id", flat=True):
        with transaction.atomic():
            before = Wallet.objects.get(pk=user_id).topped_up_for
            wallet = _locked_wallet(get_user_model()(pk=user_id), now)
            count += before != wallet.topped_up_for
    return count


class RequestDecided(Exception):
    """The credit request was decided already (or is not there): nothing was changed."""


def credit_request_create(
    *, user: Any, amount: int, message: str = "", now: datetime | None = None
) -> CreditRequest:
    """Ask an admin for credits. A user has at most one open request: asking again while
    one is open updates nothing and returns that one."""
    if not 1 <= amount <= MAX_REQUEST:
        raise ValueError(f"ask for 1 to {MAX_REQUEST} credits")
    if len(message) > 500 or "\x00" in message:
        raise ValueError("a message has at most 500 characters and no NUL")
    with transaction.atomic():
        open_ = (
            CreditRequest.objects.select_for_update()
            .filter(user=user, status=CreditRequest.OPEN)
            .first()
        )
        if open_ is not None:
            return open_
        return CreditRequest.objects.create(
            user=user,
            amount=amount,
            message=message.strip()[:500],
            created_at=now or timezone.now(),
        )


def credit_request_grant(
    *, request_id: int, amount: int, by: str, reason: str = "", now: datetime | None = None
) -> tuple[LedgerEntry, bool]:
    """Grant an open credit request; return its ledger entry and whether this call wrote it.

    One transaction writes a ``grant`` ledger entry keyed by the request and marks the request
    granted. A request granted already, by a double click or two admins at once, answers with
    its entry and False. A declined or unknown request raises ``RequestDecided``."""
    if amount <= 0:
        raise ValueError("a grant adds at least 1 credit")
    now = now or timezone.now()
    with transaction.atomic():
        request = CreditRequest.objects.select_for_update().filter(pk=request_id).first()
        if request is None:
            raise RequestDecided(f"no credit request {request_id}")
        if request.status == CreditRequest.GRANTED:
            return LedgerEntry.objects.get(job_key=request.ledger_key, kind="grant"), False
        if request.status != CreditRequest.OPEN:
            raise RequestDecided(f"credit request {request_id} was {request.status}")
        entry = credits_grant(
            user=request.user,
            amount=amount,
            key=request.ledger_key,
            note=f"request {request.pk} granted by {by}" + (f": {reason}" if reason else ""),
            now=now,
        )
        request.status, request.granted = CreditRequest.GRANTED, amount
        request.decided_by, request.decided_at, request.reason = by[:150], now, reason[:500]
        request.save(update_fields=["status", "granted", "decided_by", "decided_at", "reason"])
        return entry, True


def credit_request_decline(
    *, request_id: int, by: str, reason: str = "", now: datetime | None = None
) -> CreditRequest:
    """Decline an open request (no credits move); ``RequestDecided`` when it is not open."""
    with transaction.atomic():
        request = CreditRequest.objects.select_for_update().filter(pk=request_id).first()
        if request is None or request.status != CreditRequest.OPEN:
            raise RequestDecided(f"credit request {request_id} is not open")
        request.status = CreditRequest.DECLINED
        request.decided_by, request.decided_at = by[:150], now or timezone.now()
        request.reason = reason[:500]
        request.save(update_fields=["status", "decided_by", "decided_at", "reason"])
        return request


def render_request(
    *,
    user: Any,
    key: str,
    params: dict[str, Any],
    renderer: Renderer | None = None,
    cost: int = PANEL_COST,
    now: datetime | None = None,
    on_progress: Callable[[int, int], None] | None = None,
) -> RenderResult:
    """Render a panel under an idempotency key (see the module docstring for the rules).

    ``on_progress(value, maximum)`` hears each progress report of the backend, after the
    lease was renewed with it."""
    renderer = renderer or renderer_for_settings()
    digest = params_hash(params)
    start = now or timezone.now()
    with transaction.atomic():
        wallet = _locked_wallet(user, start)
        job = from_row(RenderJob, _LOCKED_JOB.first(key=key))
        if job is not None:
            if job.user_id != user.pk or job.params_hash != digest:
                raise KeyReused(key)
            if job.status == RenderJob.SUCCEEDED:
                return _result(job, replayed=True)
            if job.status == RenderJob.FAILED:
                raise RenderFailed(key, job.error)
            if job.lease_expires_at and job.lease_expires_at > start:
                raise RenderInProgress(key)
            job.attempts += 1  # the holder crashed mid-render: take the job over
            job.lease_expires_at = start + timedelta(seconds=render_lease_seconds())
            job.save(update_fields=["attempts", "lease_expires_at"])
        else:
            if wallet.balance < cost:
                raise InsufficientCredits(wallet.balance, cost)
            job = RenderJob.objects.create(
                key=key,
                user=user,
                params=params,
                params_hash=digest,
                backend=renderer.name,
                cost=cost,
                status=RenderJob.IN_PROGRESS,
                created_at=start,
                lease_expires_at=start + timedelta(seconds=render_lease_seconds()),
            )
        attempt = job.attempts

    try:
        look = _reference_for(renderer, params, owner_id=user.pk)
        image = renderer.render(
            params, key=key, progress=_lease_renewer(key, attempt, on_progress), **look
        )
    except Exception as exc:  # the backend's failure is stored: a repeat gets the same answer
        said = str(exc) if isinstance(exc, BackendError) else f"{type(exc).__name__}: {exc}"
        reason = said[:500]
        with transaction.atomic():
            RenderJob.objects.filter(
                key=key, attempts=attempt, status=RenderJob.IN_PROGRESS
            ).update(
                status=RenderJob.FAILED,
                error=reason,
                finished_at=timezone.now(),
                lease_expires_at=None,
            )
        raise RenderFailed(key, reason) from exc

    done = timezone.now() if now is None else now
    image_id = f"img_{uuid.uuid4().hex[:20]}"
    relative = Path("panels") / str(user.pk) / f"{image_id}.{image.extension}"
    _write_file(Path(settings.MEDIA_ROOT) / relative, image.data)
    with transaction.atomic():
        wallet = _locked_wallet(user, done)
        job = from_row(RenderJob, _LOCKED_JOB.first(key=key))
        if job is None:
            raise RenderJob.DoesNotExist(key)
        if job.status == RenderJob.SUCCEEDED:
            return _result(job, replayed=True)
        if job.status != RenderJob.IN_PROGRESS or job.attempts != attempt:
            raise RenderInProgress(key)  # another request took the job over meanwhile
        if wallet.balance < job.cost:
            job.status, job.error = RenderJob.FAILED, "not enough credits when the render finished"
            job.finished_at, job.lease_expires_at = done, None
            job.save(update_fields=["status", "error", "finished_at", "lease_expires_at"])
            raise InsufficientCredits(wallet.balance, job.cost)
        Image.objects.create(
            id=image_id,
            user=user,
            job=job,
            path=str(relative),
            content_type=image.content_type,
            created_at=done,
        )
        _move(wallet, kind="charge", amount=-job.cost, now=done, key=key, note=f"panel {image_id}")
        job.status = RenderJob.SUCCEEDED
        job.result = {
            "image_id": image_id,
            "content_type": image.content_type,
            "backend": renderer.name,
        }
        job.finished_at, job.lease_expires_at = done, None
        job.save(update_fields=["status", "result", "finished_at", "lease_expires_at"])
        return _result(job, replayed=False)


class ReferenceRefused(BackendError):
    """The panel's reference picture is not one the render's user may draw from."""


def _reference_for(renderer: Renderer, params: dict[str, Any], *, owner_id: Any) -> dict:
    """The ``reference`` keyword for ``renderer.render``: the panel's reference picture read
    from the user's own images, for a backend that draws from one (the others get none).

    A reference that is not one of the user's images (or whose file is gone) refuses the
    render before any backend is asked: an image id is never a capability."""
    found = panel_reference(params)
    if found is None:
        return {}
    character, image_id = found
    from jaiweb.render.imports import image_bytes  # it imports this module

    read = image_bytes(image_id=image_id, owner_id=owner_id)
    if read is None:
        raise ReferenceRefused(
            f"the reference picture of {character}'s look ({image_id}) is not one of your "
            "images; set the look again from one of your panels"
        )
    if not getattr(renderer, "uses_reference", False):
        return {}
    content_type, data = read
    return {"reference": ReferenceImage(character, image_id, content_type, data)}


def render_lease_renew(*, key: str, attempt: int, now: datetime | None = None) -> bool:
    """Move the lease of the render ``key`` on, if its attempt ``attempt`` still holds it:
    a job another request took over (a later attempt) or that ended is left alone.
    Whether the lease was renewed."""
    expires = (now or timezone.now()) + timedelta(seconds=render_lease_seconds())
    return bool(
        RenderJob.objects.filter(key=key, attempts=attempt, status=RenderJob.IN_PROGRESS).update(
            lease_expires_at=expires
        )
    )


def _lease_renewer(
    key: str, attempt: int, on_progress: Callable[[int, int], None] | None
) -> Callable[[int, int], None]:
    """The ``progress`` callback a backend gets: each report renews the lease (at most once
    every RENEW_EVERY_SECONDS) and is passed on to ``on_progress``."""
    renewed_at: float | None = None

    def progress(value: int, maximum: int) -> None:
        nonlocal renewed_at
        moment = time.monotonic()
        if renewed_at is None or moment - renewed_at >= RENEW_EVERY_SECONDS:
            render_lease_renew(key=key, attempt=attempt)
            renewed_at = moment
        if on_progress is not None:
            on_progress(value, maximum)

    return progress


def _result(job: RenderJob, *, replayed: bool) -> RenderResult:
    return RenderResult(
        key=job.key,
        image_id=job.result["image_id"],
        content_type=job.result["content_type"],
        backend=job.result["backend"],
        cost=job.cost,
        replayed=replayed,
    )


def _write_file(path: Path, data: bytes) -> None:
    """Write durably (temp file, fsync, rename) before the charge commits."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    with open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def image_publish(*, image_id: str, now: datetime | None = None) -> Image:
    """Make a panel public (it was posted to the feed)."""
    with transaction.atomic():
        image = Image.objects.select_for_update().get(pk=image_id)
        if image.published_at is None:
            image.published_at = now or timezone.now()
            image.save(update_fields=["published_at"])
        return image
