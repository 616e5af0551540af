import json

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST, require_safe

from jaiweb.feed.models import FeedPost
from jaiweb.feed.services import feed_post_create
from jaiweb.feed.signing import HEADER, verify
from jaiweb.render.services import image_publish


@csrf_exempt  # a server-to-server call, authenticated by its HMAC signature instead
@require_POST
def webhook(request: HttpRequest) -> JsonResponse:
    if not verify(settings.JAIWEB_FEED_SECRET or "", request.body, request.headers.get(HEADER)):
        return JsonResponse({"error": "bad or missing signature"}, status=401)
    try:
        data = json.loads(request.body)
        image_id, caption = str(data["image_id"]), str(data.get("caption", ""))
    except (ValueError, KeyError, TypeError):
        return JsonResponse({"error": "expected JSON with image_id and caption"}, status=400)
    post = feed_post_create(
        image_id=image_id,
        caption=caption,
        session_id=str(data.get("session_id", "")),
        idempotency_key=str(data.get("idempotency_key", "")),
    )
    image_publish(image_id=image_id)
    return JsonResponse({"post_id": post.id}, status=201)


@require_safe
def feed(request: HttpRequest) -> HttpResponse:
    posts = FeedPost.objects.order_by("-received_at")[:100]
    return render(request, "feed/feed.html", {"posts": posts})
