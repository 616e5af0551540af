"""About this studio: what it runs on (database, channel layer, director, panel renderer),
in one quiet page instead of on every page; /healthz answers the same for machines."""

from __future__ import annotations

from django.conf import settings
from django.db import connection
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_safe

from jaiweb.render.backends import backend_label

CHANNEL_LAYER_NAMES = {
    "channels.layers.InMemoryChannelLayer": _("in-memory (this process only)"),
    "jaiweb.live.layers.InMemoryChannelLayer": _("in-memory (this process only)"),
    "channels_redis.pubsub.RedisPubSubChannelLayer": "Redis",
    "channels_redis.core.RedisChannelLayer": _("Redis (list queues)"),
}


def studio_mode() -> dict:
    """What this process runs on, from its settings and its database connection."""
    backend = settings.CHANNEL_LAYERS["default"]["BACKEND"]
    return {
        "database": connection.vendor,
        "channel_layer": CHANNEL_LAYER_NAMES.get(backend, backend),
        "llm_model": settings.JAIWEB_LLM_MODEL,
        "image_backend": settings.JAIWEB_IMAGE_BACKEND,
        "image_backend_label": backend_label(),
        "debug": settings.DEBUG,
    }


@require_safe
def about(request: HttpRequest) -> HttpResponse:
    """Show the diagnostics that used to sit on every page, for whoever asks."""
    return render(request, "studio/about.html", studio_mode())
