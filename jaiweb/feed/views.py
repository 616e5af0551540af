"""The feed's pages: the signed publish webhook and the public list of posts."""

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST, require_safe

from jaiweb.feed.selectors import feed_latest
from jaiweb.feed.services import FeedPostInvalid, feed_post_publish
from jaiweb.feed.signing import HEADER, verify
from journal.jsonvalues import json_loads


def _refused(status: int, error: str) -> JsonResponse:
    return JsonResponse({"error": error}, status=status)


@csrf_exempt  # a server-to-server call, authenticated by its HMAC signature instead
@require_POST
def webhook(request: HttpRequest) -> JsonResponse:
    if not verify(settings.JAIWEB_FEED_SECRET, request.body, request.headers.get(HEADER)):
        return _refused(401, "bad or missing signature")
    try:
        data = json_loads(request.body)
    except ValueError:  # not JSON, or nested too deep to read
        data = None
    if not isinstance(data, dict) or not isinstance(data.get("image_id"), str):
        return _refused(400, "expected JSON with image_id and caption")
    try:
        post = feed_post_publish(
            image_id=data["image_id"],
            owner=data.get("owner"),
            caption=data.get("caption", ""),
            session_id=data.get("session_id", ""),
            idempotency_key=data.get("idempotency_key", ""),
        )
    except FeedPostInvalid as exc:
        return _refused(422, str(exc))
    return JsonResponse({"post_id": post.id}, status=201)


@require_safe
def feed(request: HttpRequest) -> HttpResponse:
    posts = feed_latest()
    return render(request, "feed/feed.html", {"posts": posts})
