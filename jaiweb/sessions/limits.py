"""Per-minute counters in the cache: how many times a key was counted in the current minute."""

from __future__ import annotations

from django.core.cache import cache


def minute_count(prefix: str, now: float) -> int:
    """Count one more for ``prefix`` in the minute ``now`` falls in; the count so far."""
    key = f"{prefix}:{int(now // 60)}"
    cache.add(key, 0, timeout=120)
    try:
        return cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.set(key, 1, timeout=120)
        return 1
