"""The cache on Redis (``REDIS_URL``): one connection pool per process, and counts in one
round trip.

Django keeps a cache object per thread and per asyncio context, and its Redis cache
makes a connection pool per object. Each HTTP request runs in a context of its own, so
every request that counted a prompt opened a new connection to Redis (with its
handshake) and left the old one to the garbage collector. ``SharedPoolRedisCache`` gives
every cache object of the process with the same servers and options one client, so one
pool. ``incr_or_start`` counts a key that may not exist yet in one round trip, where
``add`` and then ``incr`` (which checks the key first) took three.
"""

from __future__ import annotations

import threading
from functools import cached_property
from typing import Any

from django.core.cache.backends.redis import RedisCache, RedisCacheClient

_clients: dict[tuple, RedisCacheClient] = {}
_clients_lock = threading.Lock()


def _client_key(servers: list[str], options: dict[str, Any]) -> tuple:
    """What makes two cache objects share a client: the same servers and the same options
    (an option such as a Retry object compares as the one object settings made)."""
    return (tuple(servers), tuple(sorted((k, repr(v)) for k, v in options.items())))


class SharedPoolRedisCache(RedisCache):
    """Django's Redis cache with one client, so one connection pool, for the process."""

    @cached_property
    def _cache(self) -> RedisCacheClient:
        key = _client_key(self._servers, self._options)
        with _clients_lock:
            client = _clients.get(key)
            if client is None:
                client = self._class(self._servers, **self._options)
                # The pools are made on first use without a lock: make them here, under ours.
                for index in range(len(self._servers)):
                    client._pools[index] = client._pool_class.from_url(
                        self._servers[index], **client._pool_options
                    )
                _clients[key] = client
        return client

    def incr_or_start(self, key: str, timeout: int, version: int | None = None) -> int:
        """Add 1 to ``key`` (0 when it is missing or expired) and return the count; the key
        then expires ``timeout`` seconds later. INCR and EXPIRE go in one transaction, one
        round trip. A later count moves the expiry on, so a key counted without pause lives
        on: give each period a key of its own."""
        key = self.make_and_validate_key(key, version=version)
        client = self._cache.get_client(key, write=True)
        with client.pipeline(transaction=True) as pipe:
            pipe.incr(key)
            pipe.expire(key, timeout)
            count, _ = pipe.execute()
        return int(count)
