"""A cache that can be switched off, for the limits' tests (named in CACHES by dotted path)."""

from __future__ import annotations

from django.core.cache.backends.locmem import LocMemCache


class FlakyCache(LocMemCache):
    """LocMemCache, except that while ``FlakyCache.down`` is set every call raises
    ConnectionError, as a stopped Redis does. ``FlakyCache.calls`` counts the calls that
    reached it, down or not."""

    down = False
    calls = 0

    def _reach(self) -> None:
        FlakyCache.calls += 1
        if FlakyCache.down:
            raise ConnectionError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    def add(self, *args, **kwargs):
        self._reach()
        return super().add(*args, **kwargs)

    def incr(self, *args, **kwargs):
        self._reach()
        return super().incr(*args, **kwargs)

    def set(self, *args, **kwargs):
        self._reach()
        return super().set(*args, **kwargs)
