"""Keeping a run's lease: renewed when due, by the loop's own writes and by a heartbeat thread."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta

from django.db import connection
from django.utils import timezone

from jaiweb.store.errors import LeaseLost
from jaiweb.store.leases import Lease, lease_renew


class LeaseKeeper:
    """Holds the current lease; renews it once a third of its time has passed."""

    def __init__(self, lease: Lease, lease_seconds: int) -> None:
        self.lease = lease
        self.lease_seconds = lease_seconds
        self._lock = threading.Lock()  # the heartbeat and the loop's writes both renew

    @property
    def fencing(self) -> int:
        return self.lease.fencing

    def renew_if_due(self) -> None:
        """``LeaseLost`` when another runner took the operation over."""
        with self._lock:
            now = timezone.now()
            if self.lease.expires_at - now < timedelta(seconds=self.lease_seconds * 2 / 3):
                self.lease = lease_renew(
                    lease=self.lease, now=now, lease_seconds=self.lease_seconds
                )

    @contextmanager
    def heartbeat(self) -> Iterator[None]:
        """While the block runs, a thread keeps the lease (a slow model or tool holds the loop)."""
        stop = threading.Event()

        def beat() -> None:
            try:
                while not stop.wait(self.lease_seconds / 3):
                    try:
                        self.renew_if_due()
                    except LeaseLost:
                        return  # the next write of the run finds out and stops it
            finally:
                connection.close()

        thread = threading.Thread(target=beat, daemon=True, name=f"lease-{self.lease.operation_id}")
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join()
