from django.apps import AppConfig


class OpsConfig(AppConfig):
    """What a deployer needs: /healthz, /metrics, and `manage.py cluster`."""

    name = "jaiweb.ops"
    label = "ops"
