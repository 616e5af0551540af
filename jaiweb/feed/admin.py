"""Feed posts in the Django admin: read-only (they are what the webhook received)."""

from __future__ import annotations

from django.contrib import admin

from jaiweb.feed.models import FeedPost
from jaiweb.readonly_admin import ReadOnlyAdmin


@admin.register(FeedPost)
class FeedPostAdmin(ReadOnlyAdmin):
    list_display = ("id", "caption", "image_id", "session_id", "idempotency_key", "received_at")
    search_fields = ("=id", "caption", "=image_id", "=session_id", "=idempotency_key")
    list_filter = ("received_at",)
    date_hierarchy = "received_at"
    ordering = ("-received_at",)
    show_full_result_count = False
