"""The two journals in the Django admin: to read, never to edit (they are append-only)."""

from __future__ import annotations

import json

from django.contrib import admin
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _

from jaiweb.readonly_admin import ReadOnlyAdmin
from jaiweb.store.models import ComicSession, Entry, Operation, OperationRecord


def pretty_payload(obj) -> str:
    text = json.dumps(obj.payload, indent=2, ensure_ascii=False, sort_keys=True)
    return format_html("<pre>{}</pre>", text)


@admin.register(ComicSession)
class ComicSessionAdmin(ReadOnlyAdmin):
    list_display = ("id", "title", "owner", "entry_count", "leaf_id", "created_at", "updated_at")
    list_select_related = ("owner",)
    search_fields = ("id", "title", "owner__username")
    list_filter = ("created_at", "updated_at")
    date_hierarchy = "created_at"
    ordering = ("-created_at",)
    show_full_result_count = False


@admin.register(Entry)
class EntryAdmin(ReadOnlyAdmin):
    list_display = ("entry_id", "session", "seq", "type", "parent_id", "timestamp")
    list_select_related = ("session",)
    search_fields = ("=entry_id", "=parent_id", "=session__id", "session__title")
    list_filter = ("type",)
    ordering = ("-pk",)
    show_full_result_count = False
    readonly_fields = ("payload_pretty",)
    exclude = ("payload",)

    @admin.display(description=_("payload"))
    def payload_pretty(self, obj: Entry) -> str:
        return pretty_payload(obj)


@admin.register(Operation)
class OperationAdmin(ReadOnlyAdmin):
    list_display = (
        "id",
        "session",
        "kind",
        "outcome",
        "parked",
        "attempts",
        "record_count",
        "lease_owner",
        "created_at",
        "finished_at",
    )
    list_select_related = ("session",)
    search_fields = ("=id", "=session__id", "session__title", "attention", "lease_owner")
    list_filter = ("outcome", "kind", ("parked_at", admin.EmptyFieldListFilter), "created_at")
    ordering = ("-created_at",)
    show_full_result_count = False
    readonly_fields = ("records",)

    @admin.display(description=_("records"))
    def records(self, obj: Operation) -> str:
        rows = [r.payload for r in obj.records.order_by("seq")]
        text = json.dumps(rows, indent=2, ensure_ascii=False, sort_keys=True)
        return format_html("<pre>{}</pre>", text)

    @admin.display(boolean=True, description=_("in the inbox"))
    def parked(self, obj: Operation) -> bool:
        return obj.is_parked


@admin.register(OperationRecord)
class OperationRecordAdmin(ReadOnlyAdmin):
    list_display = ("operation", "seq", "type", "timestamp")
    list_select_related = ("operation",)
    search_fields = ("=operation__id", "=operation__session__id")
    list_filter = ("type",)
    ordering = ("-pk",)
    show_full_result_count = False
    readonly_fields = ("payload_pretty",)
    exclude = ("payload",)

    @admin.display(description=_("payload"))
    def payload_pretty(self, obj: OperationRecord) -> str:
        return pretty_payload(obj)
