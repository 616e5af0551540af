"""Writes the database refused only because of another writer: run them again, not a 500."""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import wraps
from typing import ParamSpec, TypeVar

from django.db import OperationalError, connection

P = ParamSpec("P")
R = TypeVar("R")

# deadlock_detected, serialization_failure: the transaction was rolled back whole.
_RETRIED = {"40P01", "40001"}
ATTEMPTS = 3


def is_conflict(exc: BaseException) -> bool:
    return getattr(exc.__cause__, "sqlstate", None) in _RETRIED


def conflicts_retried(fn: Callable[P, R]) -> Callable[P, R]:
    """Run ``fn`` (one whole transaction) again when PostgreSQL picked it as a deadlock
    victim or refused it for a serialization failure: nothing of it was written, so a
    second try is safe. Inside an outer transaction the error is the outer one's to handle.
    """

    @wraps(fn)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        for attempt in range(1, ATTEMPTS + 1):
            try:
                return fn(*args, **kwargs)
            except OperationalError as exc:
                if attempt == ATTEMPTS or connection.in_atomic_block or not is_conflict(exc):
                    raise
                time.sleep(0.005 * attempt)
        raise AssertionError("unreachable")

    return run
