"""The cache on Redis (jaiweb/ops/cache.py): one connection pool for the process, and a
count in one call. On a Redis of the test's own (tests/support/own_redis.py)."""

from __future__ import annotations

import threading

import pytest
import redis
from django.core.cache import cache, caches

from jaiweb.commands import limits
from jaiweb.ops.cache import SharedPoolRedisCache
from jaiweb.settings import redis_caches


@pytest.fixture
def on_own_redis(own_redis, settings, monkeypatch):
    settings.CACHES = redis_caches(own_redis.url())
    monkeypatch.setattr(limits, "_cache_failed_at", None)
    with redis.Redis.from_url(own_redis.url()) as server:
        yield server


def connections_made(server: redis.Redis) -> int:
    return int(server.info("stats")["total_connections_received"])


def test_the_cache_objects_of_many_threads_share_one_connection(on_own_redis):
    assert isinstance(caches["default"], SharedPoolRedisCache)
    before = connections_made(on_own_redis)

    def use_the_cache(n: int) -> None:
        # A new thread gets a cache object of its own, as each request's context does.
        caches["default"].set(f"k{n}", n)

    for n in range(8):  # one after the other: one connection is enough for all
        thread = threading.Thread(target=use_the_cache, args=(n,))
        thread.start()
        thread.join()
    assert [cache.get(f"k{n}") for n in range(8)] == list(range(8))
    assert connections_made(on_own_redis) - before == 1


def test_incr_or_start_counts_from_nothing_and_sets_the_expiry(on_own_redis):
    assert [cache.incr_or_start("n", timeout=120) for _ in range(3)] == [1, 2, 3]
    assert cache.get("n") == 3  # the key Django's own calls use
    key = cache.make_and_validate_key("n")
    assert 0 < on_own_redis.ttl(key) <= 120
    on_own_redis.delete(key)  # as when it has expired
    assert cache.incr_or_start("n", timeout=120) == 1


def test_the_limits_count_with_it(on_own_redis):
    minute = 29_000_000 * 60.0
    assert [limits.minute_count("jaiweb:test", minute + s) for s in (1, 2)] == [1, 2]
    key = cache.make_and_validate_key(f"jaiweb:test:{int(minute // 60)}")
    assert int(on_own_redis.get(key)) == 2
    assert 0 < on_own_redis.ttl(key) <= limits.KEY_SECONDS
