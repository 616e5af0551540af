"""Per-minute counters: in the cache, and in the process while the cache cannot be reached."""

from __future__ import annotations

import logging

import pytest
from django.core.cache import cache

from jaiweb.commands import limits
from tests.commands.caches import FlakyCache

MINUTE = 29_000_000 * 60.0  # the start of a minute


@pytest.fixture
def flaky(settings, monkeypatch):
    settings.CACHES = {
        "default": {"BACKEND": "tests.commands.caches.FlakyCache", "LOCATION": "flaky"}
    }
    monkeypatch.setattr(FlakyCache, "down", False)
    monkeypatch.setattr(FlakyCache, "calls", 0)
    monkeypatch.setattr(limits, "_cache_failed_at", None)
    monkeypatch.setattr(limits, "_local", limits._LocalCounts())
    cache.clear()
    yield FlakyCache
    FlakyCache.down = False
    cache.clear()


def test_the_cache_counts_while_it_answers(flaky):
    assert [limits.minute_count("k", MINUTE + s) for s in (1, 2, 59)] == [1, 2, 3]
    assert limits.minute_count("k", MINUTE + 60) == 1  # a new minute
    assert limits.minute_count("other", MINUTE + 60) == 1  # a key of its own


def test_while_the_cache_is_away_the_process_counts_and_tries_it_again_later(flaky, caplog):
    assert limits.minute_count("k", MINUTE + 1) == 1  # in the cache
    assert limits.minute_count("k", MINUTE + 2) == 2

    flaky.down = True
    with caplog.at_level(logging.INFO, logger="jaiweb.commands.limits"):
        reached = flaky.calls
        # The process starts its own count of the minute; the cache is tried once.
        assert limits.minute_count("k", MINUTE + 3) == 1
        assert flaky.calls == reached + 1
        assert limits.minute_count("k", MINUTE + 3 + limits.RETRY_SECONDS - 0.1) == 2
        assert flaky.calls == reached + 1  # not tried again so soon
        # RETRY_SECONDS later it is tried again; still away: counted here.
        assert limits.minute_count("k", MINUTE + 3 + limits.RETRY_SECONDS) == 3
        assert flaky.calls == reached + 2
        # A new minute while the cache is away: the process's count starts again.
        assert limits.minute_count("k", MINUTE + 60) == 1

        flaky.down = False  # back: after the retry period, the cache counts again
        assert limits.minute_count("k", MINUTE + 60 + limits.RETRY_SECONDS) == 1
        assert limits.minute_count("k", MINUTE + 61 + limits.RETRY_SECONDS) == 2
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == 2
    assert "cannot be reached" in said[0] and "Connection refused" in said[0]
    assert "answers again" in said[1]


def test_a_clock_set_back_tries_the_cache_at_once(flaky):
    flaky.down = True
    assert limits.minute_count("k", MINUTE + 30) == 1
    flaky.down = False
    assert limits.minute_count("k", MINUTE + 20) == 1  # earlier than the failure: tried
    assert limits.minute_count("k", MINUTE + 21) == 2


def test_retry_after_is_the_rest_of_the_minute():
    assert limits.seconds_left_in_minute(MINUTE) == 60
    assert limits.seconds_left_in_minute(MINUTE + 10) == 50
    assert limits.seconds_left_in_minute(MINUTE + 59.9) == 1
