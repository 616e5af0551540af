"""Per-minute counters in the cache: how many times a key was counted in the current minute."""

from __future__ import annotations

import time
from collections.abc import Callable

from django.core.cache import cache

# The wall clock the counters and their Retry-After read. Tests replace it to pin the
# minute, so that a test's requests never straddle two minutes.
clock: Callable[[], float] = time.time


def minute_count(prefix: str, now: float | None = None) -> int:
    """Count one more for ``prefix`` in the minute ``now`` (default: ``clock()``) falls in;
    return the count so far."""
    now = clock() if now is None else now
    key = f"{prefix}:{int(now // 60)}"
    cache.add(key, 0, timeout=120)
    try:
        return cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.set(key, 1, timeout=120)
        return 1


def seconds_left_in_minute(now: float) -> int:
    """Return the seconds left in the minute ``now`` falls in (1 to 60), for Retry-After."""
    return 60 - int(now % 60)
