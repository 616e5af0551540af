"""The feed app: it plays the outside service that published panels go to."""

from django.apps import AppConfig


class FeedConfig(AppConfig):
    """The episode feed: where publish_panel's webhook posts, and the public page of posts."""

    name = "jaiweb.feed"
    label = "feed"
    default_auto_field = "django.db.models.BigAutoField"
