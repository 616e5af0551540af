"""The inbox app: the admins' recovery inbox."""

from django.apps import AppConfig


class InboxConfig(AppConfig):
    """The recovery inbox page: staff decide about tool calls whose outcome is unknown."""

    name = "jaiweb.inbox"
    label = "inbox"
    default_auto_field = "django.db.models.BigAutoField"
