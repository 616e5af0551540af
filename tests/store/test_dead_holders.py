"""The leases of runners that are gone are expired at once, only theirs, in one statement."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from jaiweb.store.leases import leases_of_dead_holders_release, operation_claim
from jaiweb.store.models import Operation
from jaiweb.store.services import operation_accept, session_create

pytestmark = pytest.mark.django_db


def claimed_by(owner: str, alice) -> str:
    session = session_create(owner=alice, title=owner)
    op = operation_accept(session_id=session.id, text="go").operation_id
    assert operation_claim(owner=owner, now=timezone.now(), lease_seconds=60, operation_id=op)
    return op


def test_only_the_dead_holders_leases_are_expired(alice):
    dead = [claimed_by("host:1:a", alice) for _ in range(3)]
    live = claimed_by("host:2:b", alice)
    now = timezone.now()
    with CaptureQueriesContext(connection) as queries:
        released = leases_of_dead_holders_release(is_dead=lambda o: o == "host:1:a", now=now)
    assert sorted(released) == sorted(dead)
    assert len([q for q in queries if q["sql"].startswith("UPDATE")]) == 1
    for op in dead:
        row = Operation.objects.get(pk=op)
        assert row.lease_owner == "host:1:a" and row.lease_expires_at < now  # claimable now
    assert Operation.objects.get(pk=live).lease_expires_at > now + timedelta(seconds=30)
    again = operation_claim(owner="host:3:c", now=now, lease_seconds=60, operation_id=dead[0])
    assert again is not None and again.fencing == 2
