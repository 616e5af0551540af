"""Receiving posts for the feed."""

from __future__ import annotations

import uuid
from datetime import datetime

from django.utils import timezone

from jaiweb.feed.models import FeedPost


def feed_post_create(
    *,
    image_id: str,
    caption: str,
    session_id: str = "",
    idempotency_key: str = "",
    now: datetime | None = None,
) -> FeedPost:
    """Every call makes a new post: a webhook does not deduplicate (hence at most once)."""
    return FeedPost.objects.create(
        id=f"post_{uuid.uuid4().hex[:20]}",
        image_id=image_id,
        caption=caption[:500],
        session_id=session_id[:40],
        idempotency_key=idempotency_key[:128],
        received_at=now or timezone.now(),
    )
