from pathlib import Path

from django.conf import settings
from django.db import connection
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from jaiweb.render.selectors import image_for_viewer

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


@require_safe
def panel_image(request: HttpRequest, image_id: str) -> FileResponse:
    """A rendered panel: to its owner, or to anyone once it was published to the feed."""
    viewer = request.user if request.user.is_authenticated else None
    image = image_for_viewer(image_id=image_id, viewer=viewer)
    if image is None:
        raise Http404("no such panel")
    path = Path(settings.MEDIA_ROOT) / image.path
    if not path.is_file():
        raise Http404("no such panel")
    response = FileResponse(path.open("rb"), content_type=image.content_type)
    # A panel is a picture, never a page: no script in it may run, whatever it holds.
    response["Content-Security-Policy"] = "default-src 'none'; style-src 'unsafe-inline'"
    response["X-Content-Type-Options"] = "nosniff"
    response["Cache-Control"] = (
        "private, max-age=3600" if image.published_at is None else ("public, max-age=86400")
    )
    return response
