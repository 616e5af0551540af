"""The store app: the two journals as tables."""

from django.apps import AppConfig


class StoreConfig(AppConfig):
    """The two journals in the database: sessions, entries, operations, records."""

    name = "jaiweb.store"
    label = "store"
    default_auto_field = "django.db.models.BigAutoField"
