"""Waiting for something another process or thread does, with a bound and a clear failure."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_until(predicate: Callable[[], T], timeout: float, what: str, *, every: float = 0.05) -> T:
    """The first truthy value ``predicate`` returns within ``timeout`` seconds, or an
    ``AssertionError`` saying what never happened."""
    deadline = time.monotonic() + timeout
    while True:
        found = predicate()
        if found:
            return found
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(every)


async def wait_until_async(
    predicate: Callable[[], T], timeout: float, what: str, *, every: float = 0.005
) -> T:
    """``wait_until`` for a test running on an event loop: the loop goes on between tries."""
    deadline = time.monotonic() + timeout
    while True:
        found = predicate()
        if found:
            return found
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        await asyncio.sleep(every)
