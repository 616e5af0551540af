"""Reads of the feed: what its page shows, and what was posted under a key."""

from __future__ import annotations

from jaiweb.feed.models import FeedPost


def feed_latest(*, limit: int = 100) -> list[FeedPost]:
    """The newest posts first."""
    return list(FeedPost.objects.order_by("-received_at")[:limit])


def feed_posts_with_key(*, key: str) -> list[FeedPost]:
    """The posts received with this idempotency key, oldest first: what recovery reads to
    tell whether an interrupted publish_panel call posted."""
    if not key:
        return []
    return list(FeedPost.objects.filter(idempotency_key=key).order_by("received_at", "id"))
