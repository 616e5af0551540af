"""Reads of the feed: what its page shows."""

from __future__ import annotations

from jaiweb.feed.models import FeedPost


def feed_latest(*, limit: int = 100) -> list[FeedPost]:
    """The newest posts first."""
    return list(FeedPost.objects.order_by("-received_at")[:limit])
