"""Leases on operations: which runner owns a run, until when, under which fencing number.

A claim takes an unfinished, unparked operation whose lease is free or expired, adds 1
to its fencing number and counts the attempt. Every write of the run checks that number
in its own transaction (``services.run_append``), so a runner whose lease was taken over
can write nothing more, even if it wakes up later believing it still holds it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import connection, transaction

from jaiweb.store.errors import LeaseLost, StaleLog
from jaiweb.store.models import Operation


@dataclass(frozen=True, slots=True)
class Lease:
    operation_id: str
    owner: str
    fencing: int
    expires_at: datetime


_CLAIMABLE = (
    "outcome IS NULL AND parked_at IS NULL AND waiting_since IS NULL "
    "AND (lease_expires_at IS NULL OR lease_expires_at < %s)"
)


def operation_claim(
    *,
    owner: str,
    now: datetime,
    lease_seconds: int,
    operation_id: str | None = None,
    counted: bool = True,
) -> Lease | None:
    """Claim the oldest claimable operation (or the named one); None when there is none.

    A claim is counted (``attempts``: a crash loop shows there) unless ``counted`` is off,
    as for a recovery pass that only looks.
    """
    expires = now + timedelta(seconds=lease_seconds)
    count = ", attempts = attempts + 1" if counted else ""
    only = " AND id = %s" if operation_id is not None else ""
    skip_locked = " FOR UPDATE SKIP LOCKED" if connection.vendor == "postgresql" else ""
    pick = [now] + ([operation_id] if operation_id is not None else [])
    sql = (
        "UPDATE store_operation SET lease_owner = %s, lease_expires_at = %s, "
        f"fencing = fencing + 1{count} "
        f"WHERE id = (SELECT id FROM store_operation WHERE {_CLAIMABLE}{only} "
        f"ORDER BY created_at, id LIMIT 1{skip_locked}) AND {_CLAIMABLE} "
        "RETURNING id, fencing"
    )
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql, [owner, expires, *pick, now])
        row = cursor.fetchone()
    if row is None:
        return None
    return Lease(operation_id=row[0], owner=owner, fencing=row[1], expires_at=expires)


def lease_renew(*, lease: Lease, now: datetime, lease_seconds: int) -> Lease:
    """Push the expiry on; ``LeaseLost`` if another runner took the operation meanwhile."""
    expires = now + timedelta(seconds=lease_seconds)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "UPDATE store_operation SET lease_expires_at = %s "
            "WHERE id = %s AND fencing = %s AND lease_owner = %s AND outcome IS NULL",
            [expires, lease.operation_id, lease.fencing, lease.owner],
        )
        if cursor.rowcount != 1:
            raise LeaseLost(lease.operation_id, lease.fencing)
    return Lease(lease.operation_id, lease.owner, lease.fencing, expires)


def operation_wait(*, lease: Lease, expected_seq: int, now: datetime) -> None:
    """Hand the operation back while it waits for a person.

    The operation keeps no lease and no worker, and its claims start counting afresh, because
    waiting is not a crash loop. Raise ``StaleLog`` when a record came after ``expected_seq``,
    since the decision may be in it, and ``LeaseLost`` when the lease was taken over. Nothing
    changes when either is raised."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "UPDATE store_operation SET waiting_since = %s, lease_owner = NULL, "
            "lease_expires_at = NULL, attempts = 0 "
            "WHERE id = %s AND fencing = %s AND record_count = %s AND outcome IS NULL",
            [now, lease.operation_id, lease.fencing, expected_seq],
        )
        if cursor.rowcount == 1:
            return
    row = Operation.objects.filter(pk=lease.operation_id).values("fencing", "record_count").first()
    if row is not None and row["fencing"] == lease.fencing:
        raise StaleLog(lease.operation_id, expected_seq, row["record_count"])
    raise LeaseLost(lease.operation_id, lease.fencing)


def lease_release(*, lease: Lease) -> None:
    """Give the operation back (it stays claimable by anyone at once); a lost lease is a no-op."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "UPDATE store_operation SET lease_owner = NULL, lease_expires_at = NULL "
            "WHERE id = %s AND fencing = %s",
            [lease.operation_id, lease.fencing],
        )


def leases_of_dead_holders_release(*, is_dead, now: datetime) -> list[str]:
    """Expire the unexpired leases whose holder ``is_dead(owner)`` says is gone.

    The caller decides what "gone" means (a process of this host that no longer runs);
    a lease is expired only if the same holder still has it, so a claim can follow. One
    statement for all of them: a restart after a crash of a busy runner frees thousands.
    """
    owners = set(
        Operation.objects.filter(
            outcome__isnull=True, lease_owner__isnull=False, lease_expires_at__gte=now
        )
        .values_list("lease_owner", flat=True)
        .distinct()
    )
    dead = sorted(owner for owner in owners if is_dead(owner))
    if not dead:
        return []
    marks = ", ".join(["%s"] * len(dead))
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "UPDATE store_operation SET lease_expires_at = %s "
            f"WHERE outcome IS NULL AND lease_expires_at >= %s AND lease_owner IN ({marks}) "
            "RETURNING id",
            [now - timedelta(microseconds=1), now, *dead],
        )
        return sorted(row[0] for row in cursor.fetchall())
