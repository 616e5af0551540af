"""Credits an admin sets: a balance, a monthly top-up, grants and users' requests.

Every movement is one ledger entry taken under the wallet's lock; a grant under a key (a
request's, a month's top-up) is written once however often, or by however many writers at
once, it is sent. The ledger always adds up to the balance.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import IntegrityError, connection, connections, transaction

from jaiweb.render.backends.local import LocalRenderer
from jaiweb.render.models import WELCOME_CREDITS, CreditRequest, LedgerEntry, Wallet
from jaiweb.render.selectors import credits_level, credits_view, wallet_balance
from jaiweb.render.services import (
    PANEL_COST,
    RequestDecided,
    credit_request_create,
    credit_request_decline,
    credit_request_grant,
    credits_grant,
    credits_set,
    credits_topup_due,
    render_request,
    wallet_get_or_create,
)

pytestmark = pytest.mark.django_db

DEC = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)
JAN = datetime(2027, 1, 2, 9, 0, tzinfo=UTC)
FEB = datetime(2027, 2, 1, 0, 0, tzinfo=UTC)


def assert_ledger_adds_up(user) -> None:
    """Each entry's balance is the one before plus its amount, and the last is the wallet's."""
    wallet = Wallet.objects.get(user=user)
    running = 0
    for entry in LedgerEntry.objects.filter(wallet=wallet).order_by("id"):
        running += entry.amount
        assert entry.balance_after == running, (entry.kind, entry.amount, entry.balance_after)
    assert running == wallet.balance


def test_a_grant_under_a_key_is_written_once(alice, bob):
    first = credits_grant(user=alice, amount=30, key="request:1", now=DEC)
    again = credits_grant(user=alice, amount=30, key="request:1", now=DEC)
    assert again.pk == first.pk
    assert wallet_balance(user=alice, now=DEC) == WELCOME_CREDITS + 30
    with pytest.raises(ValueError, match="another user's"):  # a key is one user's grant
        credits_grant(user=bob, amount=30, key="request:1", now=DEC)
    with pytest.raises(IntegrityError), transaction.atomic():  # the database says so too
        LedgerEntry.objects.create(
            wallet=first.wallet,
            kind="grant",
            amount=1,
            balance_after=0,
            job_key="request:1",
            created_at=DEC,
        )
    assert_ledger_adds_up(alice)


def test_setting_a_balance_writes_the_difference_once(alice):
    wallet_get_or_create(user=alice, now=DEC)
    credits_set(user=alice, balance=35, note="trial", now=DEC)
    credits_set(user=alice, balance=35, note="trial", now=DEC)  # the same setting again
    adjust = LedgerEntry.objects.filter(kind="adjust")
    assert [(e.amount, e.balance_after, e.note) for e in adjust] == [(35 - 100, 35, "trial")]
    assert wallet_balance(user=alice, now=DEC) == 35
    with pytest.raises(ValueError):
        credits_set(user=alice, balance=-1)
    assert_ledger_adds_up(alice)


def test_the_monthly_top_up_comes_once_a_month_from_next_month(alice):
    credits_set(user=alice, balance=0, monthly_topup=50, now=DEC)
    assert wallet_balance(user=alice, now=DEC) == 0  # the month it was set in counts as done
    assert credits_view(user=alice, now=DEC).level == "out"
    assert wallet_balance(user=alice, now=JAN) == 50  # due: shown before it is written
    credits_grant(user=alice, amount=5, now=JAN)  # the month's first movement writes it first
    credits_grant(user=alice, amount=5, now=JAN)
    kinds = list(LedgerEntry.objects.order_by("id").values_list("kind", "amount"))
    assert kinds[-3:] == [("topup", 50), ("grant", 5), ("grant", 5)]
    assert credits_topup_due(now=JAN) == 0  # nothing due any more this month
    assert credits_topup_due(now=FEB) == 1 and credits_topup_due(now=FEB) == 0
    assert LedgerEntry.objects.filter(kind="topup").count() == 2
    assert wallet_balance(user=alice, now=FEB) == 110
    assert_ledger_adds_up(alice)


def test_levels_warn_before_the_last_panel():
    assert credits_level(balance=25, cost=PANEL_COST) == "ok"
    assert credits_level(balance=19, cost=PANEL_COST) == "last"
    assert credits_level(balance=10, cost=PANEL_COST) == "last"
    assert credits_level(balance=9, cost=PANEL_COST) == "out"


def test_a_request_is_granted_once_and_journaled_in_the_ledger(alice):
    wallet_get_or_create(user=alice, now=DEC)
    asked = credit_request_create(user=alice, amount=40, message="for the finale", now=DEC)
    assert credit_request_create(user=alice, amount=99, now=DEC).pk == asked.pk  # one open
    entry, new = credit_request_grant(request_id=asked.pk, amount=30, by="root", now=DEC)
    assert new
    assert (entry.kind, entry.amount, entry.job_key) == ("grant", 30, f"request:{asked.pk}")
    assert "root" in entry.note
    again, new = credit_request_grant(request_id=asked.pk, amount=30, by="other", now=DEC)
    assert (
        again.pk == entry.pk and not new and LedgerEntry.objects.filter(kind="grant").count() == 1
    )
    asked.refresh_from_db()
    assert (asked.status, asked.granted, asked.decided_by) == ("granted", 30, "root")
    with pytest.raises(RequestDecided):
        credit_request_decline(request_id=asked.pk, by="other")
    assert credits_view(user=alice).last_request.pk == asked.pk
    assert_ledger_adds_up(alice)


def test_a_declined_request_moves_nothing_and_cannot_be_granted(alice):
    wallet_get_or_create(user=alice, now=DEC)
    asked = credit_request_create(user=alice, amount=40, now=DEC)
    credit_request_decline(request_id=asked.pk, by="root", reason="not this month")
    with pytest.raises(RequestDecided):
        credit_request_grant(request_id=asked.pk, amount=40, by="root")
    with pytest.raises(RequestDecided):
        credit_request_grant(request_id=12345, amount=40, by="root")
    assert not LedgerEntry.objects.filter(kind="grant").exists()
    assert credit_request_create(user=alice, amount=10).pk != asked.pk  # may ask again


@pytest.mark.parametrize("amount,message", [(0, ""), (10_001, ""), (5, "x" * 501), (5, "a\0b")])
def test_a_bad_request_is_refused_and_writes_nothing(alice, amount, message):
    with pytest.raises(ValueError):
        credit_request_create(user=alice, amount=amount, message=message)
    assert not CreditRequest.objects.exists()


class MeanwhileRenderer(LocalRenderer):
    """Runs ``meanwhile`` while it draws: after the charge was checked, before it is written."""

    def __init__(self, meanwhile):
        self.meanwhile = meanwhile

    def render(self, params, *, key, progress=None):
        self.meanwhile()
        return super().render(params, key=key, progress=progress)


def test_an_admin_setting_the_balance_during_a_render_loses_no_charge(alice):
    """The interleaving: the render checked the balance (100), the admin sets it to 50, the
    render's charge lands. The charge is taken from the 50, not from the 100 it saw."""
    wallet_get_or_create(user=alice)

    def admin_sets():
        credits_set(user=alice, balance=50, note="set during a render")

    render_request(
        user=alice, key="k1", params={"prompt": "猪"}, renderer=MeanwhileRenderer(admin_sets)
    )
    assert wallet_balance(user=alice) == 50 - PANEL_COST
    kinds = list(LedgerEntry.objects.order_by("id").values_list("kind", "amount"))
    assert kinds == [("welcome", 100), ("adjust", -50), ("charge", -PANEL_COST)]
    assert_ledger_adds_up(alice)


@pytest.mark.django_db(transaction=True)
def test_concurrent_grants_of_one_request_and_other_writers_lose_and_double_nothing(alice):
    """Four admins grant one request at the same moment, while four other writers add a
    credit each and two draw a panel: the request is granted once, every other movement is
    kept, and the ledger adds up to the balance."""
    wallet_get_or_create(user=alice)
    asked = credit_request_create(user=alice, amount=40)
    barrier = threading.Barrier(10)
    results: list = []

    def grant_request(i):
        return credit_request_grant(request_id=asked.pk, amount=40, by=f"admin{i}")

    def add_one(i):
        return credits_grant(user=alice, amount=1, note=f"writer {i}").pk

    def draw(i):
        return render_request(user=alice, key=f"k{i}", params={"prompt": f"猪 {i}"}).key

    actions = [grant_request] * 4 + [add_one] * 4 + [draw] * 2

    def run(i):
        try:
            connection.ensure_connection()
            barrier.wait(timeout=30)
            results.append(("ok", actions[i].__name__, actions[i](i)))
        except BaseException as exc:  # reported below
            results.append(("error", actions[i].__name__, exc))
        finally:
            connections.close_all()  # a pool's connection, too (tests/support/threads.py)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(actions))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads)
    assert all(r[0] == "ok" for r in results), results
    granted = [r[2] for r in results if r[1] == "grant_request"]
    assert len({entry.pk for entry, _new in granted}) == 1  # every admin got the one entry
    assert sorted(new for _entry, new in granted) == [False, False, False, True]
    assert LedgerEntry.objects.filter(job_key=f"request:{asked.pk}").count() == 1
    assert wallet_balance(user=alice) == WELCOME_CREDITS + 40 + 4 - 2 * PANEL_COST
    assert_ledger_adds_up(alice)


def test_the_credits_command_sets_shows_and_grants(alice):
    out = StringIO()
    call_command("credits", "alice", "--set", "20", "--monthly", "30", stdout=out)
    assert "alice: balance 20, monthly top-up 30" in out.getvalue()
    call_command("credits", "alice", "--add", "5", stdout=out)
    assert "balance 25" in out.getvalue()
    asked = credit_request_create(user=alice, amount=15)
    out = StringIO()
    call_command("credits", "--grant-request", str(asked.pk), stdout=out)
    twice = StringIO()
    call_command("credits", "--grant-request", str(asked.pk), stdout=twice)  # no double
    assert "granted already" in twice.getvalue()
    assert "granted: 15 credits, balance 40" in out.getvalue()
    assert wallet_balance(user=alice) == 40
    call_command("grant_credits", "alice", "10", stdout=StringIO())  # the old command works
    assert wallet_balance(user=alice) == 50
    for _ in range(2):  # with a key, running it again adds nothing
        call_command("grant_credits", "alice", "7", "--key", "bonus-1", stdout=StringIO())
        call_command("credits", "alice", "--add", "3", "--key", "bonus-2", stdout=StringIO())
    assert wallet_balance(user=alice) == 60
    assert_ledger_adds_up(alice)


@pytest.mark.parametrize(
    "args,message",
    [
        (["nobody", "--set", "5"], "no user 'nobody'"),
        (["alice", "--set", "-5"], "--set is 0 to"),
        (["alice", "--add", "0"], "--add is 1 to"),
        ([], "name a user"),
        (["--grant-request", "999"], "no credit request 999"),
    ],
)
def test_the_credits_command_refuses_bad_input_and_changes_nothing(alice, args, message):
    wallet_get_or_create(user=alice)
    with pytest.raises(CommandError, match=message):
        call_command("credits", *args, stdout=StringIO())
    assert list(LedgerEntry.objects.values_list("kind", flat=True)) == ["welcome"]
