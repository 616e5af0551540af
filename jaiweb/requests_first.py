"""Requests first: a process's background work gives way while it answers a request.

The embedded studio answers requests, renders the watchers' catch-ups and runs the agent
loops in one process, under one GIL, and CPython hands the GIL round the runnable threads
in turn. A request therefore shared the interpreter with every renderer and runner thread
busy at the time, and under load its answer waited behind their work. The request
handler (``jaiweb.ops.http``) counts the requests it is answering; a renderer before a
pass and a runner at a step boundary wait while any is, for at most ``MAX_WAIT_SECONDS``
a time. Background work is delayed by a request, never stopped by one: a process that
always has a request in flight still renders and runs, a bound's wait at a time.

A process that answers no requests (``manage.py runagents``) never waits.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

# How long one piece of background work (a catch-up pass, a loop's step) waits for the
# requests in flight. A request takes a few milliseconds, so only a burst of them keeps
# background work waiting this long; longer bounds hardly sped a burst's answers
# (docs/PERFORMANCE.md) and would hold each pass and step back that much more.
MAX_WAIT_SECONDS = 0.05

_turn = threading.Condition()
_answering = 0
_waits = 0
_waited = 0.0
_waiting = 0


@contextmanager
def answering() -> Iterator[None]:
    """Count a request as being answered for as long as the block runs."""
    global _answering
    with _turn:
        _answering += 1
    try:
        yield
    finally:
        with _turn:
            _answering -= 1
            if not _answering:
                _turn.notify_all()


def wait_turn(max_wait: float | None = None) -> str:
    """Wait while a request is being answered, at most ``max_wait`` seconds
    (``MAX_WAIT_SECONDS`` by default). The answer says how it went: ``free`` (no request
    was being answered), ``answered`` (this waited until none was) or ``bound`` (the
    bound ran out first)."""
    global _waits, _waited, _waiting
    if not _answering:  # the common case, read without the lock: a request that starts
        return "free"  # just after this is no reason to stop what is already decided
    bound = MAX_WAIT_SECONDS if max_wait is None else max_wait
    start = time.monotonic()
    with _turn:
        _waiting += 1
        try:
            answered = _turn.wait_for(lambda: not _answering, timeout=bound)
        finally:
            _waiting -= 1
        _waits += 1
        _waited += time.monotonic() - start
    return "answered" if answered else "bound"


def waiting_now() -> int:
    """How many pieces of background work of this process are waiting now."""
    return _waiting


def answering_now() -> int:
    """How many requests this process is answering."""
    return _answering


def waits() -> tuple[int, float]:
    """How many times background work of this process waited, and for how many seconds
    in all, since it started."""
    with _turn:
        return _waits, _waited
