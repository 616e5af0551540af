"""A fake monotonic clock for timing tests: time moves only when the test says so.

Code that waits takes its clock as an argument (``DeltaCoalescer``'s ``clock`` and
``timer``, the studio consumer's ``clock`` and ``sleep``); a test hands it a
``FakeClock``'s ``monotonic``, ``call_later`` and ``sleep``, then ``advance``s it and
asserts on what happened at which fake second, never on how long the machine took.

``MinuteClock`` is a wall clock for the per-minute rate limits, pinned inside one minute.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import threading
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(order=True)
class _Due:
    at: float
    seq: int
    fire: Callable[[], None] = field(compare=False)
    cancelled: bool = field(default=False, compare=False)


class Handle:
    """What ``call_later`` returns: ``cancel()`` it, as a ``threading.Timer``."""

    def __init__(self, due: _Due) -> None:
        self._due = due

    def cancel(self) -> None:
        self._due.cancelled = True


class FakeClock:
    """Monotonic seconds from ``start``; timers and sleepers run as ``advance`` passes them.

    ``call_later`` callbacks run in the thread that calls ``advance``, in the order they
    are due; ``sleep`` is a coroutine for the event loop that calls ``advance`` (a sleep
    of 0 or less returns at the next loop turn, as ``asyncio.sleep`` does).
    """

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start
        self._due: list[_Due] = []
        self._seq = itertools.count()
        self._lock = threading.Lock()

    def monotonic(self) -> float:
        return self.now

    def call_later(self, delay: float, fire: Callable[[], None]) -> Handle:
        with self._lock:
            due = _Due(self.now + delay, next(self._seq), fire)
            heapq.heappush(self._due, due)
        return Handle(due)

    async def sleep(self, delay: float) -> None:
        if delay <= 0:
            await asyncio.sleep(0)
            return
        loop = asyncio.get_running_loop()
        woken = loop.create_future()

        def wake() -> None:
            if not woken.done():
                woken.set_result(None)

        handle = self.call_later(delay, wake)
        try:
            await woken
        finally:
            handle.cancel()  # a cancelled sleeper leaves nothing due

    def pending(self) -> list[float]:
        """When each timer and sleeper still waiting is due (fake seconds), soonest first."""
        with self._lock:
            return sorted(d.at for d in self._due if not d.cancelled)

    def advance(self, seconds: float) -> None:
        """Move time on by ``seconds``, running what falls due on the way, each at its time."""
        assert seconds >= 0, "monotonic time never goes back"
        until = self.now + seconds
        while True:
            with self._lock:
                while self._due and self._due[0].cancelled:
                    heapq.heappop(self._due)
                if not self._due or self._due[0].at > until:
                    break
                due = heapq.heappop(self._due)
                self.now = max(self.now, due.at)
            due.fire()
        self.now = until


class MinuteClock:
    """A wall clock for the per-minute rate limits (``jaiweb.commands.limits.clock``): it
    stands still ``into`` seconds into a minute until a test moves it, so a test's requests
    never fall into two minutes."""

    def __init__(self, into: float = 10.0, minute: int = 29_000_000) -> None:
        self.now = minute * 60 + into

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def pin_the_minute(monkeypatch, into: float = 10.0) -> MinuteClock:
    """Give the rate limits a ``MinuteClock`` (undone at the end of the test)."""
    from jaiweb.commands import limits

    clock = MinuteClock(into)
    monkeypatch.setattr(limits, "clock", clock)
    return clock
