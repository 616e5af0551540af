"""The agent app: the loop, its providers, tools and runners."""

from django.apps import AppConfig


class AgentConfig(AppConfig):
    """The agent loop, providers, tools and runners (no models of its own)."""

    name = "jaiweb.agent"
    label = "agent"
