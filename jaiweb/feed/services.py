"""Receiving posts for the feed."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone

from jaiweb.feed.models import FeedPost
from jaiweb.render.models import Image
from jaiweb.render.services import image_publish
from journal.jsonvalues import check_text


class FeedPostInvalid(ValueError):
    """A post the feed cannot take: nothing was written."""


def feed_post_create(
    *,
    image_id: str,
    caption: str,
    session_id: str = "",
    idempotency_key: str = "",
    now: datetime | None = None,
) -> FeedPost:
    """The post alone (``feed_post_publish`` is what the webhook does)."""
    return FeedPost.objects.create(
        id=f"post_{uuid.uuid4().hex[:20]}",
        image_id=image_id,
        caption=caption[:500],
        session_id=session_id[:40],
        idempotency_key=idempotency_key[:128],
        received_at=now or timezone.now(),
    )


def _text(name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise FeedPostInvalid(f"{name} must be a string")
    try:
        return check_text(value)
    except ValueError as exc:
        raise FeedPostInvalid(f"{name}: {exc}") from None


def feed_post_publish(
    *,
    image_id: Any,
    owner: Any,
    caption: Any = "",
    session_id: Any = "",
    idempotency_key: Any = "",
    now: datetime | None = None,
) -> FeedPost:
    """A new post, and its panel made public: both in one transaction, or neither.

    Everything is checked before anything is written. ``owner`` is the user the studio
    posts for (the session's owner): the image must be theirs, so a post can never make
    another user's panel public. Every call makes a new post: a webhook does not
    deduplicate (hence at most once).
    """
    if isinstance(owner, bool) or not isinstance(owner, int | str) or owner == "":
        raise FeedPostInvalid("owner: the id of the user the post is for is required")
    image_id = _text("image_id", image_id)
    caption = _text("caption", caption)
    session_id = _text("session_id", session_id)
    idempotency_key = _text("idempotency_key", idempotency_key)
    now = now or timezone.now()
    with transaction.atomic():
        image_owner = Image.objects.filter(pk=image_id).values_list("user_id", flat=True).first()
        if image_owner is None or str(image_owner) != str(owner):
            raise FeedPostInvalid("image_id: no such image")
        post = feed_post_create(
            image_id=image_id,
            caption=caption,
            session_id=session_id,
            idempotency_key=idempotency_key,
            now=now,
        )
        image_publish(image_id=image_id, now=now)
    return post
