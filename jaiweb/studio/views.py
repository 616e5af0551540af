from django.conf import settings
from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

CHANNEL_LAYER_NAMES = {
    "channels.layers.InMemoryChannelLayer": "in-memory (this process only)",
    "channels_redis.core.RedisChannelLayer": "Redis",
}


@require_safe
def home(request: HttpRequest) -> HttpResponse:
    backend = settings.CHANNEL_LAYERS["default"]["BACKEND"]
    ctx = {
        "database": connection.vendor,
        "channel_layer": CHANNEL_LAYER_NAMES.get(backend, backend),
        "llm_model": settings.JAIWEB_LLM_MODEL,
        "image_backend": settings.JAIWEB_IMAGE_BACKEND,
    }
    return render(request, "studio/home.html", ctx)


@never_cache
@require_safe
def healthz(request: HttpRequest) -> JsonResponse:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception:
        return JsonResponse({"ok": False, "database": "error"}, status=503)
    return JsonResponse({"ok": True, "database": "ok"})
