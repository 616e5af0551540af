"""The Django admin: every journal, render and feed table readable, none editable; grants."""

from __future__ import annotations

import re

import pytest
from django.contrib import admin
from django.contrib.admin.utils import quote
from django.contrib.auth.models import Permission
from django.urls import reverse

from jaiweb.feed.models import FeedPost
from jaiweb.feed.services import feed_post_create
from jaiweb.render.models import CreditRequest, Image, LedgerEntry, RenderJob, Wallet
from jaiweb.render.services import credit_request_create, render_request, wallet_get_or_create
from jaiweb.store.models import ComicSession, Entry, Operation, OperationRecord
from jaiweb.store.services import session_create
from tests.support.builders import parked_call

pytestmark = pytest.mark.django_db

MODELS = [
    ComicSession,
    Entry,
    Operation,
    OperationRecord,
    RenderJob,
    Image,
    Wallet,
    LedgerEntry,
    FeedPost,
    CreditRequest,
]


@pytest.fixture
def root(django_user_model):
    return django_user_model.objects.create_superuser("root", password="root-pass-1")


@pytest.fixture
def admin_client(client, root):
    client.force_login(root)
    return client


@pytest.fixture
def data(alice, settings, tmp_path):
    """A row in every table the admin shows."""
    settings.MEDIA_ROOT = tmp_path / "media"
    op = parked_call(session_create(owner=alice, title="episode <b>"))
    render_request(user=alice, key="k_1", params={"prompt": "p"})
    feed_post_create(image_id="img_1", caption="<script>alert(1)</script>", idempotency_key="k_1")
    credit_request_create(user=alice, amount=5, message="<script>alert(1)</script>")
    return op


def admin_url(model, view: str = "changelist", *args) -> str:
    name = f"admin:{model._meta.app_label}_{model._meta.model_name}_{view}"
    return reverse(name, args=[quote(a) for a in args])  # as the admin quotes ids


def test_every_table_is_registered():
    for model in MODELS:
        assert admin.site.is_registered(model), model


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_each_changelist_and_detail_page_opens(admin_client, data, model):
    obj = model._default_manager.order_by("pk").first()
    assert obj is not None
    page = admin_client.get(admin_url(model))
    assert page.status_code == 200
    assert b"<script>alert(1)</script>" not in page.content
    assert admin_client.get(admin_url(model) + "?q=k_1").status_code == 200
    detail = admin_client.get(admin_url(model, "change", obj.pk))
    assert detail.status_code == 200
    assert b'name="_save"' not in detail.content  # read-only: no save button


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_nothing_can_be_added_changed_or_deleted(admin_client, data, model):
    obj = model._default_manager.order_by("pk").first()
    count = model._default_manager.count()
    changelist = admin_client.get(admin_url(model)).content.decode()
    assert admin_url(model, "add") not in changelist
    assert 'value="delete_selected"' not in changelist
    assert admin_client.get(admin_url(model, "add")).status_code == 403
    assert admin_client.post(admin_url(model, "add"), {}).status_code == 403
    assert admin_client.get(admin_url(model, "delete", obj.pk)).status_code == 403
    assert admin_client.post(admin_url(model, "delete", obj.pk), {"post": "yes"}).status_code == 403
    assert admin_client.post(admin_url(model, "change", obj.pk), {}).status_code == 403
    assert model._default_manager.count() == count


def test_filters_and_search(admin_client, data):
    assert admin_client.get(admin_url(Operation) + "?parked_at__isempty=0").status_code == 200
    assert admin_client.get(admin_url(Entry) + "?type__exact=message").status_code == 200
    assert admin_client.get(admin_url(LedgerEntry) + "?kind__exact=charge").status_code == 200
    page = admin_client.get(admin_url(Operation) + f"?q={data}").content.decode()
    assert data in page
    detail = admin_client.get(admin_url(Operation, "change", data)).content.decode()
    assert "tool_dispatched" in detail  # the records, read-only


def test_the_grant_page_grants_through_the_ledger(admin_client, alice, bob):
    wallet_get_or_create(user=alice)
    page = admin_client.get(admin_url(Wallet, "grant") + "?user=alice")
    assert page.status_code == 200 and b'value="alice"' in page.content
    response = admin_client.post(
        admin_url(Wallet, "grant"), {"usernames": "alice, bob", "amount": "25", "note": "thanks"}
    )
    assert response.status_code == 302 and response["Location"] == admin_url(Wallet)
    assert Wallet.objects.get(user=alice).balance == 125
    assert Wallet.objects.get(user=bob).balance == 125  # welcome credits first, then the grant
    grant = LedgerEntry.objects.get(wallet__user=alice, kind="grant")
    assert (grant.amount, grant.balance_after, grant.note) == (25, 125, "thanks")
    listing = admin_client.get(admin_url(Wallet)).content.decode()
    assert "Granted 25 credits to alice, bob." in listing


@pytest.mark.parametrize(
    "form, error",
    [
        ({"usernames": "alice nobody", "amount": "5"}, "No such user: nobody."),
        ({"usernames": "alice", "amount": "0"}, "greater than or equal to 1"),
        ({"usernames": " ", "amount": "5"}, "This field is required."),
    ],
)
def test_a_bad_grant_changes_nothing(admin_client, alice, form, error):
    wallet_get_or_create(user=alice)
    response = admin_client.post(admin_url(Wallet, "grant"), form)
    assert response.status_code == 200 and error in response.content.decode()
    assert not LedgerEntry.objects.filter(kind="grant").exists()
    assert Wallet.objects.get(user=alice).balance == 100


def test_the_grant_action_takes_the_selected_wallets(admin_client, alice, bob):
    wallets = [wallet_get_or_create(user=u) for u in (alice, bob)]
    response = admin_client.post(
        admin_url(Wallet),
        {"action": "grant_credits", "_selected_action": [w.pk for w in wallets]},
    )
    assert response.status_code == 302
    assert response["Location"] == admin_url(Wallet, "grant") + "?user=alice&user=bob"


def test_staff_without_the_permission_cannot_grant(client, django_user_model, alice):
    clerk = django_user_model.objects.create_user("clerk", password="x", is_staff=True)
    clerk.user_permissions.add(Permission.objects.get(codename="view_wallet"))
    wallet_get_or_create(user=alice)
    client.force_login(clerk)
    assert client.get(admin_url(Wallet)).status_code == 200
    listing = client.get(admin_url(Wallet)).content.decode()
    assert "grant_credits" not in listing and "Grant credits" not in listing
    response = client.post(admin_url(Wallet, "grant"), {"usernames": "alice", "amount": "5"})
    assert response.status_code == 403
    assert not LedgerEntry.objects.filter(kind="grant").exists()


def test_the_admin_is_for_staff_only(client, alice):
    assert client.get(admin_url(Wallet)).status_code == 302
    client.force_login(alice)
    response = client.get(admin_url(Wallet))
    assert response.status_code == 302 and "/admin/login/" in response["Location"]


def test_the_set_page_sets_a_balance_and_a_monthly_top_up(admin_client, alice, bob):
    wallet_get_or_create(user=alice)
    page = admin_client.get(admin_url(Wallet, "set") + "?user=alice").content.decode()
    assert 'name="balance"' in page and 'value="100"' in page and 'id="set-form"' in page
    listing = admin_client.get(admin_url(Wallet)).content.decode()
    assert "data-set-credits" in listing
    response = admin_client.post(
        admin_url(Wallet, "set"),
        {"usernames": "alice bob", "balance": "40", "monthly_topup": "25", "note": "term"},
    )
    assert response.status_code == 302
    for user in (alice, bob):
        wallet = Wallet.objects.get(user=user)
        assert (wallet.balance, wallet.monthly_topup) == (40, 25)
    adjust = LedgerEntry.objects.filter(kind="adjust").order_by("id")
    assert [(e.amount, e.note) for e in adjust] == [(-60, "term"), (-60, "term")]


@pytest.mark.parametrize(
    "form,error",
    [
        ({"usernames": "alice"}, "Give a balance, a monthly top-up or both."),
        ({"usernames": "alice", "balance": "-1"}, "greater than or equal to 0"),
        ({"usernames": "nobody", "balance": "5"}, "No such user: nobody."),
    ],
)
def test_the_set_page_refuses_bad_input_and_changes_nothing(admin_client, alice, form, error):
    wallet_get_or_create(user=alice)
    response = admin_client.post(admin_url(Wallet, "set"), form)
    assert response.status_code == 200 and error in response.content.decode()
    assert Wallet.objects.get(user=alice).balance == 100
    assert not LedgerEntry.objects.filter(kind="adjust").exists()


def test_staff_without_the_permission_cannot_set_credits(client, django_user_model, alice):
    clerk = django_user_model.objects.create_user("clerk", password="x", is_staff=True)
    wallet_get_or_create(user=alice)
    client.force_login(clerk)
    response = client.post(admin_url(Wallet, "set"), {"usernames": "alice", "balance": "5"})
    assert response.status_code == 403
    assert Wallet.objects.get(user=alice).balance == 100


def test_the_same_grant_form_sent_twice_grants_once(admin_client, alice):
    wallet_get_or_create(user=alice)
    page = admin_client.get(admin_url(Wallet, "grant") + "?user=alice").content.decode()
    key = re.search(r'name="key" value="([^"]+)"', page)[1]
    form = {"usernames": "alice", "amount": "5", "key": key}
    for _ in range(2):  # a double click, or the browser sending it again
        assert admin_client.post(admin_url(Wallet, "grant"), form).status_code == 302
    assert [e.amount for e in LedgerEntry.objects.filter(kind="grant")] == [5]
    again = admin_client.get(admin_url(Wallet, "grant") + "?user=alice").content.decode()
    assert key not in again  # a new form is a new grant
