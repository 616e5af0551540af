"""The Django admin's read-only base: what the journals, the ledger and the feed show there.

Those tables are append-only or written by one service each, so the admin lists and
shows their rows and never adds, changes or deletes one. A module of its own, below every
app, so that each app's admin can use it without importing another app.
"""

from __future__ import annotations

from django.contrib import admin


class ReadOnlyAdmin(admin.ModelAdmin):
    """Lists and detail pages only: no add, change or delete."""

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False
