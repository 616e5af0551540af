"""Feed posts in the Django admin: read-only (they are what the webhook received)."""

from __future__ import annotations

from django.contrib import admin

from jaiweb.feed.models import FeedPost


@admin.register(FeedPost)
class FeedPostAdmin(admin.ModelAdmin):
    list_display = ("id", "caption", "image_id", "session_id", "idempotency_key", "received_at")
    search_fields = ("=id", "caption", "=image_id", "=session_id", "=idempotency_key")
    list_filter = ("received_at",)
    date_hierarchy = "received_at"
    ordering = ("-received_at",)
    show_full_result_count = False

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False
