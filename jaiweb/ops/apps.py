"""The ops app: the processes (studio, runagents), health and metrics."""

from django.apps import AppConfig


class OpsConfig(AppConfig):
    """What a deployer needs: the processes (`studio`, `runagents`), /healthz and /metrics."""

    name = "jaiweb.ops"
    label = "ops"
