"""The render service: credits, and every idempotency case of a render key."""

from __future__ import annotations

import threading
import time
from datetime import timedelta

import pytest
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from jaiweb.render.backends.local import LocalRenderer
from jaiweb.render.errors import InsufficientCredits, KeyReused, RenderFailed, RenderInProgress
from jaiweb.render.models import WELCOME_CREDITS, Image, LedgerEntry, RenderJob, Wallet
from jaiweb.render.selectors import image_for_viewer, render_job_lookup, wallet_balance
from jaiweb.render.services import (
    PANEL_COST,
    credits_grant,
    image_publish,
    params_hash,
    render_lease_renew,
    render_request,
    wallet_get_or_create,
)
from journal.ids import idempotency_key, render_seed

pytestmark = pytest.mark.django_db
PARAMS = {"prompt": "猪猪侠决战超人强", "characters": {"猪猪侠": {"buff": "超级棒棒糖"}}}


@pytest.fixture(autouse=True)
def media(tmp_path, settings):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


class CountingRenderer(LocalRenderer):
    def __init__(self, delay: float = 0.0, fail: bool = False):
        self.calls = 0
        self.delay = delay
        self.fail = fail

    def render(self, params, *, key, progress=None):
        self.calls += 1
        time.sleep(self.delay)
        if self.fail:
            raise RuntimeError("GPU on fire")
        return super().render(params, key=key, progress=progress)


def charges(key=None):
    qs = LedgerEntry.objects.filter(kind="charge")
    return qs.filter(job_key=key).count() if key else qs.count()


def test_new_users_get_welcome_credits(alice):
    assert not Wallet.objects.filter(user=alice).exists()  # made by the first render
    assert wallet_balance(user=alice) == WELCOME_CREDITS  # what alice can spend
    assert wallet_get_or_create(user=alice).balance == WELCOME_CREDITS
    assert wallet_get_or_create(user=alice).balance == WELCOME_CREDITS
    assert LedgerEntry.objects.filter(kind="welcome").count() == 1


def test_first_request_renders_charges_and_stores(alice, media):
    renderer = CountingRenderer()
    got = render_request(user=alice, key="k1", params=PARAMS, renderer=renderer)
    assert not got.replayed and renderer.calls == 1
    assert wallet_balance(user=alice) == WELCOME_CREDITS - PANEL_COST
    image = Image.objects.get(pk=got.image_id)
    assert (media / image.path).read_bytes().startswith(b"<svg")
    assert render_job_lookup(key="k1")["status"] == "succeeded"
    assert render_job_lookup(key="k1")["charged"] == PANEL_COST


def test_repeat_with_same_params_returns_the_stored_result_without_charge(alice):
    renderer = CountingRenderer()
    first = render_request(user=alice, key="k1", params=PARAMS, renderer=renderer)
    again = render_request(
        user=alice, key="k1", params=dict(reversed(PARAMS.items())), renderer=renderer
    )
    assert again.replayed and again.image_id == first.image_id
    assert renderer.calls == 1 and charges("k1") == 1
    assert wallet_balance(user=alice) == WELCOME_CREDITS - PANEL_COST


def test_a_seeded_render_repeats_under_its_key_and_a_new_key_draws_anew(alice, media):
    """The image tool's params carry a seed from the call's key: a repeat under the key is
    the stored picture, no new charge; a regenerate's new key is a new picture, charged."""
    renderer = CountingRenderer()

    def seeded(key):
        return {**PARAMS, "seed": render_seed(key)}

    def picture(result):
        return (media / Image.objects.get(pk=result.image_id).path).read_bytes()

    key, regenerated = idempotency_key("op_1", "call_1"), idempotency_key("op_2", "call_1")
    first = render_request(user=alice, key=key, params=seeded(key), renderer=renderer)
    again = render_request(user=alice, key=key, params=seeded(key), renderer=renderer)
    assert again.replayed and again.image_id == first.image_id
    assert renderer.calls == 1 and charges(key) == 1
    other = render_request(
        user=alice, key=regenerated, params=seeded(regenerated), renderer=renderer
    )
    assert not other.replayed and renderer.calls == 2 and charges(regenerated) == 1
    assert picture(other) != picture(first)
    with pytest.raises(KeyReused):  # a key keeps the seed it was first asked with
        render_request(user=alice, key=key, params=seeded(regenerated), renderer=renderer)
    assert wallet_balance(user=alice) == WELCOME_CREDITS - 2 * PANEL_COST


def test_a_bad_seed_fails_the_render_naming_it_and_charges_nothing(alice):
    with pytest.raises(RenderFailed, match="seed must be an int"):
        render_request(user=alice, key="k1", params={**PARAMS, "seed": -1})
    assert charges() == 0 and not Image.objects.exists()


def test_same_key_other_params_is_an_error(alice, bob):
    render_request(user=alice, key="k1", params=PARAMS, renderer=CountingRenderer())
    with pytest.raises(KeyReused, match="other parameters"):
        render_request(user=alice, key="k1", params={**PARAMS, "prompt": "x"})
    with pytest.raises(KeyReused):  # another user's key is not theirs to replay
        render_request(user=bob, key="k1", params=PARAMS)
    assert charges() == 1


def test_not_enough_credits_charges_nothing_and_keeps_nothing(alice):
    renderer = CountingRenderer()
    for i in range(WELCOME_CREDITS // PANEL_COST):
        render_request(user=alice, key=f"k{i}", params=PARAMS, renderer=renderer)
    with pytest.raises(InsufficientCredits, match="costs 10, the balance is 0"):
        render_request(user=alice, key="broke", params=PARAMS, renderer=renderer)
    assert not RenderJob.objects.filter(key="broke").exists()
    credits_grant(user=alice, amount=10)
    assert not render_request(user=alice, key="broke", params=PARAMS, renderer=renderer).replayed
    assert wallet_balance(user=alice) == 0


def test_a_failed_render_is_stored_and_not_charged(alice):
    with pytest.raises(RenderFailed, match="GPU on fire"):
        render_request(user=alice, key="k1", params=PARAMS, renderer=CountingRenderer(fail=True))
    renderer = CountingRenderer()
    with pytest.raises(RenderFailed):
        render_request(user=alice, key="k1", params=PARAMS, renderer=renderer)
    assert renderer.calls == 0 and charges() == 0


def test_in_progress_then_takeover_after_the_lease(alice):
    now = timezone.now()
    RenderJob.objects.create(
        key="k1",
        user=alice,
        params=PARAMS,
        params_hash=params_hash(PARAMS),
        backend="local",
        cost=PANEL_COST,
        status=RenderJob.IN_PROGRESS,
        created_at=now,
        lease_expires_at=now + timedelta(seconds=30),
    )  # as a crash mid-render leaves it
    with pytest.raises(RenderInProgress):
        render_request(user=alice, key="k1", params=PARAMS, now=now + timedelta(seconds=5))
    renderer = CountingRenderer()
    got = render_request(
        user=alice, key="k1", params=PARAMS, renderer=renderer, now=now + timedelta(seconds=31)
    )
    assert not got.replayed and renderer.calls == 1
    assert RenderJob.objects.get(key="k1").attempts == 2 and charges("k1") == 1


class ReportingRenderer(LocalRenderer):
    """Reports progress while it draws; ``meanwhile`` runs between two reports."""

    def __init__(self, meanwhile=None):
        self.meanwhile = meanwhile or (lambda key: None)
        self.keys: list[str] = []
        self.leases: list = []

    def render(self, params, *, key, progress=None):
        self.keys.append(key)
        progress(1, 2)
        self.leases.append(RenderJob.objects.get(key=key).lease_expires_at)
        self.meanwhile(key)
        progress(2, 2)
        self.leases.append(RenderJob.objects.get(key=key).lease_expires_at)
        return super().render(params, key=key)


def test_the_backend_gets_the_key_and_its_progress_renews_the_lease(alice):
    started = timezone.now() - timedelta(minutes=5)
    renderer, heard = ReportingRenderer(), []
    got = render_request(
        user=alice,
        key="k1",
        params=PARAMS,
        renderer=renderer,
        now=started,
        on_progress=lambda value, maximum: heard.append((value, maximum)),
    )
    assert renderer.keys == ["k1"]
    assert heard == [(1, 2), (2, 2)]  # every report reaches the caller
    assert renderer.leases[0] > started + timedelta(minutes=4)  # moved on from the first
    assert not got.replayed and charges("k1") == 1


def test_reports_close_together_renew_the_lease_once(alice):
    renderer = ReportingRenderer()
    render_request(user=alice, key="k1", params=PARAMS, renderer=renderer)
    assert renderer.leases[1] == renderer.leases[0]  # within RENEW_EVERY_SECONDS


def test_progress_never_renews_a_job_another_request_took_over(alice, monkeypatch):
    monkeypatch.setattr("jaiweb.render.services.RENEW_EVERY_SECONDS", 0.0)  # every report

    def taken_over(key):  # as a repeat does once the lease ran out
        RenderJob.objects.filter(key=key).update(
            attempts=2, lease_expires_at=timezone.now() + timedelta(seconds=30)
        )

    renderer = ReportingRenderer(meanwhile=taken_over)
    with pytest.raises(RenderInProgress):
        render_request(user=alice, key="k1", params=PARAMS, renderer=renderer)
    takeover_lease = RenderJob.objects.get(key="k1").lease_expires_at
    assert renderer.leases[1] == takeover_lease  # the second report left it alone
    assert not render_lease_renew(key="k1", attempt=1)
    assert render_lease_renew(key="k1", attempt=2)  # the holder's own attempt renews
    RenderJob.objects.filter(key="k1").update(status=RenderJob.FAILED, lease_expires_at=None)
    assert not render_lease_renew(key="k1", attempt=2)  # an ended job has no lease
    assert charges() == 0


@pytest.mark.django_db(transaction=True)
def test_two_concurrent_requests_with_one_key_render_and_charge_once(alice):
    renderer = CountingRenderer(delay=0.3)
    wallet_get_or_create(user=alice)
    outcomes: list = []
    barrier = threading.Barrier(2)

    def request():
        try:
            barrier.wait()
            outcomes.append(render_request(user=alice, key="k1", params=PARAMS, renderer=renderer))
        except RenderInProgress as exc:
            outcomes.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=request) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(type(o).__name__ for o in outcomes) == ["RenderInProgress", "RenderResult"]
    assert renderer.calls == 1 and charges("k1") == 1
    assert wallet_balance(user=alice) == WELCOME_CREDITS - PANEL_COST
    again = render_request(user=alice, key="k1", params=PARAMS, renderer=renderer)
    assert again.replayed and renderer.calls == 1


def test_the_database_refuses_a_second_charge_for_a_key(alice):
    render_request(user=alice, key="k1", params=PARAMS, renderer=CountingRenderer())
    wallet = wallet_get_or_create(user=alice)
    with pytest.raises(IntegrityError), transaction.atomic():
        LedgerEntry.objects.create(
            wallet=wallet,
            kind="charge",
            amount=-10,
            balance_after=0,
            job_key="k1",
            created_at=timezone.now(),
        )


def test_the_ledger_is_append_only(alice):
    wallet_get_or_create(user=alice)
    entry = LedgerEntry.objects.get()
    with pytest.raises(ValueError):
        entry.save()
    with pytest.raises(IntegrityError, match="append-only"), transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("UPDATE render_ledgerentry SET amount = 1000")


def test_images_are_private_until_published(alice, bob):
    got = render_request(user=alice, key="k1", params=PARAMS, renderer=CountingRenderer())
    assert image_for_viewer(image_id=got.image_id, viewer=alice) is not None
    assert image_for_viewer(image_id=got.image_id, viewer=bob) is None
    assert image_for_viewer(image_id=got.image_id, viewer=None) is None
    image_publish(image_id=got.image_id)
    assert image_for_viewer(image_id=got.image_id, viewer=bob) is not None
    assert image_for_viewer(image_id="img_nope", viewer=alice) is None


def test_grant_command(alice, capsys):
    from django.core.management import CommandError, call_command

    call_command("grant_credits", "alice", "25")
    assert "balance 125" in capsys.readouterr().out
    with pytest.raises(CommandError, match="no user"):
        call_command("grant_credits", "nobody", "5")
    with pytest.raises(CommandError, match="positive"):
        call_command("grant_credits", "alice", "0")
