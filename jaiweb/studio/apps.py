from django.apps import AppConfig


class StudioConfig(AppConfig):
    name = "jaiweb.studio"
    label = "studio"
