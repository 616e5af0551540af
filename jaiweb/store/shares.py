"""Share links: made, listed, revoked, and opened by the token alone."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime

from django.utils import timezone

from jaiweb.store.digests import token_digest
from jaiweb.store.errors import ShareLinkNotFound
from jaiweb.store.models import ComicSession, ShareLink
from jaiweb.store.selectors import entry_exists, session_get
from journal.errors import UnknownEntry

TOKEN_BYTES = 32  # 256 bits from the OS's generator: not guessable, not enumerable


@dataclass(frozen=True, slots=True)
class Share:
    id: int
    leaf_id: str
    created_at: datetime
    revoked_at: datetime | None


def _out(link: ShareLink) -> Share:
    return Share(link.id, link.leaf_id, link.created_at, link.revoked_at)


def share_link_create(
    *, session_id: str, leaf_id: str | None = None, now: datetime | None = None
) -> tuple[Share, str]:
    """A new link to root → ``leaf_id`` (default: the leaf now), and its token: shown once,
    kept only as a hash."""
    session = session_get(session_id=session_id)
    leaf = leaf_id or session.leaf_id
    if leaf is None or not entry_exists(session=session, entry_id=leaf):
        raise UnknownEntry(leaf or "")
    token = secrets.token_urlsafe(TOKEN_BYTES)
    link = ShareLink.objects.create(
        session=session,
        leaf_id=leaf,
        token_sha256=token_digest(token),
        created_at=now or timezone.now(),
    )
    return _out(link), token


def share_links_of(*, session_id: str) -> list[Share]:
    return [_out(link) for link in ShareLink.objects.filter(session_id=session_id).order_by("id")]


def share_link_revoke(*, session_id: str, link_id: int, now: datetime | None = None) -> None:
    """From now on the link opens nothing; revoking twice is revoking once."""
    link = ShareLink.objects.filter(session_id=session_id, pk=link_id).first()
    if link is None:
        raise ShareLinkNotFound()
    if link.revoked_at is None:
        link.revoked_at = now or timezone.now()
        link.save(update_fields=["revoked_at"])


def share_panel_ref(*, token: str, image_id: str) -> str:
    """The address of a shared panel under its link: derived from the token and the image,
    so it names no image and says nothing once the link is revoked."""
    text = f"jaiweb-share-panel\x00{token}\x00{image_id}"
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def share_link_open(*, token: str) -> tuple[ComicSession, str]:
    """The session and the node a live link shows; ``ShareLinkNotFound`` otherwise."""
    if not token or len(token) > 128:
        raise ShareLinkNotFound()
    link = (
        ShareLink.objects.select_related("session")
        .filter(token_sha256=token_digest(token), revoked_at__isnull=True, session__deleting=False)
        .first()
    )
    if link is None:
        raise ShareLinkNotFound()
    return link.session, link.leaf_id
