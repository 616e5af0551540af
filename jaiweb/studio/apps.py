"""The studio app: the pages, the tree explorer and the live socket."""

from django.apps import AppConfig


class StudioConfig(AppConfig):
    name = "jaiweb.studio"
    label = "studio"
