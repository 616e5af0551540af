"""Threads of a test that use the ORM, as the product's own threads do it."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from django.db import connections


def orm_thread(target: Callable[..., Any], *args: Any) -> threading.Thread:
    """A thread running ``target`` that gives back its database connections at the end:
    one left open (a pool's, checked out) keeps PostgreSQL from dropping the test
    database once the suite is over."""

    def run() -> None:
        try:
            target(*args)
        finally:
            connections.close_all()

    return threading.Thread(target=run)
