"""Per-minute counters: how many times a key was counted in the current minute.

The counts live in the cache (Redis when ``REDIS_URL`` is set), so every process shares
them. While the cache cannot be reached, each process counts on its own instead: a
limit then holds per process rather than for the whole site, and nothing that is counted
fails because the cache is away. After a failure the cache is tried again once
``RETRY_SECONDS`` have passed, so an outage costs one failed round trip per process
and retry period, not one per request.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from django.core.cache import cache

log = logging.getLogger(__name__)

# The wall clock the counters and their Retry-After read. Tests replace it to pin the
# minute, so that a test's requests never straddle two minutes.
clock: Callable[[], float] = time.time

RETRY_SECONDS = 5.0  # after a cache failure, count in this process for this long
KEY_SECONDS = 120  # a minute's count is kept in the cache this long after its last count


class _LocalCounts:
    """Counts the current minute's keys inside this process, while the cache is away."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._minute: int | None = None
        self._counts: dict[str, int] = {}

    def add(self, prefix: str, minute: int) -> int:
        with self._lock:
            if minute != self._minute:  # a new minute: the old counts are over
                self._minute = minute
                self._counts.clear()
            self._counts[prefix] = count = self._counts.get(prefix, 0) + 1
            return count


_local = _LocalCounts()
_outage_lock = threading.Lock()
_cache_failed_at: float | None = None  # when the cache last failed; None: it answers


def _cache_resting(now: float) -> bool:
    """Tell whether the cache failed less than RETRY_SECONDS ago; a clock set back before
    the failure tries the cache again at once."""
    failed = _cache_failed_at
    return failed is not None and 0 <= now - failed < RETRY_SECONDS


def _cache_count(key: str) -> int:
    # The Redis cache (jaiweb/ops/cache.py, named in settings) counts in one round trip;
    # another cache (the embedded studio's, in-process) in its own calls.
    incr_or_start = getattr(cache, "incr_or_start", None)
    if incr_or_start is not None:
        return incr_or_start(key, timeout=KEY_SECONDS)
    cache.add(key, 0, timeout=KEY_SECONDS)
    try:
        return cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.set(key, 1, timeout=KEY_SECONDS)
        return 1


def minute_count(prefix: str, now: float | None = None) -> int:
    """Count one more for ``prefix`` in the minute ``now`` falls in; return the count so far.

    ``now`` defaults to ``clock()``. The count is the cache's, or this process's own while
    the cache cannot be reached.
    """
    global _cache_failed_at
    now = clock() if now is None else now
    minute = int(now // 60)
    if not _cache_resting(now):
        try:
            count = _cache_count(f"{prefix}:{minute}")
        except Exception as exc:  # refused, timed out, a broken backend: count locally
            with _outage_lock:
                if _cache_failed_at is None:
                    log.warning("the cache cannot be reached (%s); counting per process", exc)
                _cache_failed_at = now
        else:
            if _cache_failed_at is not None:
                with _outage_lock:
                    _cache_failed_at = None
                log.info("the cache answers again; counting in the cache")
            return count
    return _local.add(prefix, minute)


def seconds_left_in_minute(now: float) -> int:
    """Return the seconds left in the minute ``now`` falls in (1 to 60), for Retry-After."""
    return 60 - int(now % 60)
