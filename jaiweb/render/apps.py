"""The render app: credits, render jobs and panels (it plays an outside service)."""

from django.apps import AppConfig
from django.core import checks


def image_backend_check(app_configs=None, **kwargs) -> list[checks.CheckMessage]:
    """``manage.py check`` refuses a configured image backend that cannot be built."""
    from jaiweb.render.backends import image_backend_problems

    return [checks.Error(problem, id="jaiweb.E001") for problem in image_backend_problems()]


class RenderConfig(AppConfig):
    """The render service: wallets, the credit ledger and idempotent render jobs.

    It plays the external compute server, so it imports neither the store nor the agent.
    """

    name = "jaiweb.render"
    label = "render"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        checks.register(image_backend_check)
