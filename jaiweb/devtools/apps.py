"""The developers' tools app (the local cluster command)."""

from django.apps import AppConfig


class DevtoolsConfig(AppConfig):
    name = "jaiweb.devtools"
    label = "devtools"
