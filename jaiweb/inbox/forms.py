"""The admin's decision on one parked call, as a form: which choice, why, and a result."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from journal.jsonvalues import json_loads

# The buttons' values and what inbox_resolve calls them.
RESOLUTIONS = {"retry": "retry", "confirm": "confirmed", "fail": "failed"}


def parse_result(text: str) -> dict[str, Any] | None:
    """The confirm result: ``{"content", "details"}`` as JSON, any other JSON object (its
    details), or plain text (its content). Empty: inbox_resolve writes "confirmed by …"."""
    text = text.strip()
    if not text:
        return None
    if not text.startswith("{"):
        return {"content": text}
    try:
        value = json_loads(text)
    except ValueError as exc:
        raise forms.ValidationError(
            _("The result is not valid JSON: %(error)s.") % {"error": exc}
        ) from None
    if not isinstance(value, dict):
        raise forms.ValidationError(_("The result must be a JSON object or plain text."))
    if not value.keys() <= {"content", "details"}:
        return {"details": value}
    if not isinstance(value.get("details", {}), dict):
        raise forms.ValidationError(_('"details" must be a JSON object.'))
    if not isinstance(value.get("content", ""), str):
        raise forms.ValidationError(_('"content" must be text.'))
    return value


class ResolveForm(forms.Form):
    action = forms.ChoiceField(
        choices=[(a, a) for a in RESOLUTIONS],
        error_messages={
            "required": gettext_lazy("Choose retry, confirm or mark failed."),
            "invalid_choice": gettext_lazy("Choose retry, confirm or mark failed."),
        },
    )
    reason = forms.CharField(
        max_length=2000,
        error_messages={"required": gettext_lazy("Give a reason: it is kept in the journal.")},
    )
    # A piece of evidence picked as the result; empty: the result typed below.
    pick = forms.CharField(required=False, strip=True)
    result = forms.CharField(required=False, strip=True, max_length=100_000)

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        data["resolution"] = RESOLUTIONS.get(data.get("action", ""), "")
        data["result_value"] = None
        if data.get("action") == "confirm":
            try:
                data["result_value"] = parse_result(data.get("pick") or data.get("result") or "")
            except forms.ValidationError as exc:
                self.add_error("result", exc)
        return data


class CreditDecisionForm(forms.Form):
    """An admin's answer to a credit request: grant an amount, or decline; a word to the user."""

    action = forms.ChoiceField(
        choices=[("grant", "grant"), ("decline", "decline")],
        error_messages={
            "required": gettext_lazy("Choose grant or decline."),
            "invalid_choice": gettext_lazy("Choose grant or decline."),
        },
    )
    amount = forms.IntegerField(min_value=1, max_value=1_000_000, required=False)
    reason = forms.CharField(max_length=500, required=False, strip=True)

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if data.get("action") == "grant" and not data.get("amount"):
            self.add_error("amount", _("Say how many credits to grant (1 or more)."))
        return data
