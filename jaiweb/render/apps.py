"""The render app: credits, render jobs and panels (it plays an outside service)."""

from django.apps import AppConfig


class RenderConfig(AppConfig):
    """The render service: wallets, the credit ledger and idempotent render jobs.

    It plays the external compute server, so it imports neither the store nor the agent.
    """

    name = "jaiweb.render"
    label = "render"
    default_auto_field = "django.db.models.BigAutoField"
