"""A runner's worker slots, and lending one back while a tool waits on an outside server.

A runner runs at most ``workers`` operations at once: each holds a slot while it works. A
render on the user's GPU or a paid image API can take minutes and costs this process no
CPU, so an operation that waits on one lends its slot back for the length of the wait.
The runner claims other work meanwhile (another user's chat prompt is not queued behind
ten renders), and the operation takes a slot back before it goes on. The runner's thread
pool is larger than its slots, so lent slots find threads to run on.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Slot:
    """How the thread running an operation gives its slot back and takes one again."""

    release: Callable[[], None]
    acquire: Callable[[], None]


_current = threading.local()


@contextmanager
def holding(slot: Slot) -> Iterator[None]:
    """Mark the calling thread as running an operation in ``slot``."""
    _current.slot = slot
    try:
        yield
    finally:
        _current.slot = None


@contextmanager
def lent() -> Iterator[None]:
    """Give the calling operation's slot back while the block waits on an outside server,
    and take one again after it. Outside a runner (a test calling a tool) it does nothing."""
    slot = getattr(_current, "slot", None)
    if slot is None:
        yield
        return
    slot.release()
    try:
        yield
    finally:
        slot.acquire()
