"""Render jobs, images, wallets and the ledger in the Django admin: read-only.

Credits move only through the service: the wallet list has a "grant credits" page (and an
action for the selected wallets) that calls ``credits_grant`` for each user, and a "set
credits" page that sets a balance and a monthly top-up with ``credits_set``. Users' credit
requests are listed here and decided in the recovery inbox.
"""

from __future__ import annotations

import uuid
from urllib.parse import urlencode

from django import forms
from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from jaiweb.readonly_admin import ReadOnlyAdmin
from jaiweb.render.models import CreditRequest, Image, LedgerEntry, RenderJob, Wallet
from jaiweb.render.services import MAX_CREDITS, credits_grant, credits_set

GRANT_PERMISSION = "render.add_ledgerentry"  # a grant is a new ledger entry


@admin.register(RenderJob)
class RenderJobAdmin(ReadOnlyAdmin):
    list_display = (
        "key",
        "user",
        "status",
        "backend",
        "cost",
        "attempts",
        "created_at",
        "finished_at",
    )
    list_select_related = ("user",)
    search_fields = ("=key", "user__username", "error")
    list_filter = ("status", "backend", "created_at")
    ordering = ("-created_at",)
    show_full_result_count = False


@admin.register(Image)
class ImageAdmin(ReadOnlyAdmin):
    list_display = ("id", "user", "job", "content_type", "published_at", "created_at")
    list_select_related = ("user", "job")
    search_fields = ("=id", "user__username", "=job__key")
    list_filter = (("published_at", admin.EmptyFieldListFilter), "content_type", "created_at")
    ordering = ("-created_at",)
    show_full_result_count = False


@admin.register(LedgerEntry)
class LedgerEntryAdmin(ReadOnlyAdmin):
    list_display = ("created_at", "wallet", "kind", "amount", "balance_after", "job_key", "note")
    list_select_related = ("wallet__user",)
    search_fields = ("wallet__user__username", "=job_key", "note")
    list_filter = ("kind", "created_at")
    ordering = ("-created_at", "-id")
    show_full_result_count = False


class GrantForm(forms.Form):
    usernames = forms.CharField(
        label=gettext_lazy("Users"),
        help_text=gettext_lazy("One or more usernames, separated by spaces or commas."),
        widget=forms.TextInput(attrs={"size": 60}),
    )
    amount = forms.IntegerField(
        label=gettext_lazy("Credits each"), min_value=1, max_value=1_000_000
    )
    note = forms.CharField(
        label=gettext_lazy("Note"),
        max_length=200,
        required=False,
        help_text=gettext_lazy("Kept in the ledger."),
    )
    # One per form shown: sending the same form again (a double click, a reload) finds its
    # grants written and adds nothing.
    key = forms.RegexField(regex=r"^[A-Za-z0-9_-]{1,40}$", required=False, widget=forms.HiddenInput)

    def clean_usernames(self) -> list:
        names = list(dict.fromkeys(self.cleaned_data["usernames"].replace(",", " ").split()))
        user_model = get_user_model()
        users = user_model.objects.filter(**{f"{user_model.USERNAME_FIELD}__in": names})
        found = {u.get_username(): u for u in users}
        missing = [n for n in names if n not in found]
        if missing:
            raise forms.ValidationError(
                _("No such user: %(names)s.") % {"names": ", ".join(missing)}
            )
        if not names:
            raise forms.ValidationError(_("Name at least one user."))
        return [found[n] for n in names]


class SetForm(GrantForm):
    amount = None
    key = None  # setting a balance twice is setting it once
    balance = forms.IntegerField(
        label=gettext_lazy("Balance"),
        min_value=0,
        max_value=MAX_CREDITS,
        required=False,
        help_text=gettext_lazy("Empty: leave the balance as it is."),
    )
    monthly_topup = forms.IntegerField(
        label=gettext_lazy("Monthly top-up"),
        min_value=0,
        max_value=MAX_CREDITS,
        required=False,
        help_text=gettext_lazy(
            "Credits added at the first movement of each month (0: none). Empty: leave it."
        ),
    )

    def clean(self) -> dict:
        data = super().clean()
        if data.get("balance") is None and data.get("monthly_topup") is None:
            raise forms.ValidationError(_("Give a balance, a monthly top-up or both."))
        return data


@admin.register(CreditRequest)
class CreditRequestAdmin(ReadOnlyAdmin):
    """Users' asks for credits; an admin grants or declines them in the recovery inbox."""

    list_display = ("created_at", "user", "amount", "status", "granted", "decided_by", "message")
    list_select_related = ("user",)
    search_fields = ("user__username", "message")
    list_filter = ("status", "created_at")
    ordering = ("-created_at", "-id")


@admin.register(Wallet)
class WalletAdmin(ReadOnlyAdmin):
    list_display = ("user", "balance", "monthly_topup", "updated_at", "grant_link")
    list_select_related = ("user",)
    search_fields = ("user__username", "user__email")
    list_filter = ("updated_at",)
    ordering = ("user__username",)
    actions = ("grant_credits",)

    def get_list_display(self, request: HttpRequest):
        shown = super().get_list_display(request)
        return (
            shown if self.has_grant_permission(request) else [f for f in shown if f != "grant_link"]
        )

    def get_urls(self):
        grant = path(
            "grant/", self.admin_site.admin_view(self.grant_view), name="render_wallet_grant"
        )
        set_ = path("set/", self.admin_site.admin_view(self.set_view), name="render_wallet_set")
        return [grant, set_, *super().get_urls()]

    @admin.display(description=gettext_lazy("grant"))
    def grant_link(self, obj: Wallet) -> str:
        query = "?" + urlencode({"user": obj.user.get_username()})
        return format_html(
            '<a href="{}">{}</a> · <a href="{}" data-set-credits>{}</a>',
            reverse("admin:render_wallet_grant") + query,
            _("Grant credits…"),
            reverse("admin:render_wallet_set") + query,
            _("Set credits…"),
        )

    def has_grant_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm(GRANT_PERMISSION)

    @admin.action(
        description=gettext_lazy("Grant credits to the selected wallets' owners"),
        permissions=["grant"],
    )
    def grant_credits(self, request: HttpRequest, queryset) -> HttpResponse:
        names = [w.user.get_username() for w in queryset.select_related("user")]
        return redirect(
            reverse("admin:render_wallet_grant") + "?" + urlencode({"user": names}, doseq=True)
        )

    def grant_view(self, request: HttpRequest) -> HttpResponse:
        """A form: users, credits, note; each grant is ``credits_grant``'s ledger entry."""
        if not self.has_grant_permission(request):
            raise PermissionDenied
        if request.method == "POST":
            form = GrantForm(request.POST)
            if form.is_valid():
                amount = form.cleaned_data["amount"]
                note = form.cleaned_data["note"] or f"granted by {request.user.get_username()}"
                with transaction.atomic():
                    for user in form.cleaned_data["usernames"]:
                        key = form.cleaned_data["key"]
                        credits_grant(
                            user=user,
                            amount=amount,
                            note=note,
                            key=f"admin:{key}:{user.pk}" if key else None,
                        )
                names = ", ".join(u.get_username() for u in form.cleaned_data["usernames"])
                self.message_user(
                    request,
                    _("Granted %(amount)s credits to %(names)s.")
                    % {"amount": amount, "names": names},
                    messages.SUCCESS,
                )
                return redirect("admin:render_wallet_changelist")
        else:
            form = GrantForm(
                initial={
                    "usernames": " ".join(request.GET.getlist("user")),
                    "key": uuid.uuid4().hex,
                }
            )
        context = {
            **self.admin_site.each_context(request),
            "title": _("Grant credits"),
            "opts": self.model._meta,
            "form": form,
        }
        return TemplateResponse(request, "inbox/admin_wallet_grant.html", context)

    def set_view(self, request: HttpRequest) -> HttpResponse:
        """A form: users, balance, monthly top-up, note; each is ``credits_set``'s: the
        balance moves by one ledger entry of the difference, taken under the wallet's lock."""
        if not self.has_grant_permission(request):
            raise PermissionDenied
        if request.method == "POST":
            form = SetForm(request.POST)
            if form.is_valid():
                data = form.cleaned_data
                note = data["note"] or f"set by {request.user.get_username()}"
                with transaction.atomic():
                    for user in data["usernames"]:
                        credits_set(
                            user=user,
                            balance=data["balance"],
                            monthly_topup=data["monthly_topup"],
                            note=note,
                        )
                names = ", ".join(u.get_username() for u in data["usernames"])
                self.message_user(
                    request, _("Credits set for %(names)s.") % {"names": names}, messages.SUCCESS
                )
                return redirect("admin:render_wallet_changelist")
        else:
            names = " ".join(request.GET.getlist("user"))
            initial: dict = {"usernames": names}
            one = Wallet.objects.filter(user__username=names).first() if names else None
            if one is not None:
                initial |= {"balance": one.balance, "monthly_topup": one.monthly_topup}
            form = SetForm(initial=initial)
        context = {
            **self.admin_site.each_context(request),
            "title": _("Set credits"),
            "opts": self.model._meta,
            "form": form,
            "setting": True,
        }
        return TemplateResponse(request, "inbox/admin_wallet_grant.html", context)
