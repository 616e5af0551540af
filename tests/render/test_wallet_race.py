"""Two transactions make the same user's first wallet at once: one creates it with the
welcome credits, the other waits for it and uses it, and neither fails.

Three renders of a new user's sessions started together once failed one render with a
unique violation on PostgreSQL: both read "no wallet" and both inserted. SQLite takes its
write lock before the read, so the interleaving exists only on PostgreSQL."""

from __future__ import annotations

import threading

import pytest
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.utils import timezone

from jaiweb.render.models import WELCOME_CREDITS, LedgerEntry, Wallet
from jaiweb.render.services import _locked_wallet
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgresql_only]


def waiting_locks() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_locks WHERE NOT granted")
        return cursor.fetchone()[0]


def test_the_second_first_wallet_waits_for_the_first_and_uses_it():
    user = get_user_model().objects.create_user("newcomer")
    created, go = threading.Event(), threading.Event()
    got: dict[str, object] = {}

    def first() -> None:
        try:
            with transaction.atomic():
                got["first"] = _locked_wallet(user, timezone.now()).pk
                created.set()
                go.wait(30)  # holds the new row uncommitted while the second reads and inserts
        finally:
            connection.close()

    def second() -> None:
        try:
            with transaction.atomic():
                got["second"] = _locked_wallet(user, timezone.now()).pk
        except Exception as exc:  # what the test reports, rather than a thread's traceback
            got["second"] = exc
        finally:
            connection.close()

    a = threading.Thread(target=first)
    a.start()
    assert created.wait(30)
    b = threading.Thread(target=second)
    b.start()
    wait_until(lambda: waiting_locks() > 0, 30, "the second insert to wait on the first")
    go.set()
    a.join(30)
    b.join(30)
    assert got["second"] == got["first"], got
    wallet = Wallet.objects.get(user=user)
    assert wallet.balance == WELCOME_CREDITS
    assert LedgerEntry.objects.filter(wallet=wallet, kind="welcome").count() == 1
