"""A URLconf and a middleware that write down the thread each part of a request ran on,
for the HTTP handler's tests (tests/ops/test_http.py)."""

from __future__ import annotations

import threading

from django.db import DatabaseError, connection
from django.http import HttpResponse
from django.urls import path

from jaiweb.requests_first import answering_now

# (what ran, the thread it ran on), in the order they ran
seen: list[tuple[str, int]] = []
# The views of two requests wait here for each other (set by the test).
both_in = threading.Barrier(2, timeout=5)


class RecordingMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        seen.append(("middleware", threading.get_ident()))
        return self.get_response(request)


def plain(request):
    seen.append(("view", threading.get_ident()))
    return HttpResponse("plain")


def meeting(request):
    seen.append(("view", threading.get_ident()))
    both_in.wait()
    return HttpResponse("met")


def counted(request):
    return HttpResponse(f"answering {answering_now()}")


async def awaited(request):
    return HttpResponse("awaited")


def queried(request):
    """Notes whether the thread's connection was open before this request's query."""
    seen.append(("connection open", connection.connection is not None))
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return HttpResponse("queried")


def failing(request):
    """A query that fails, caught: the request itself answers."""
    seen.append(("connection open", connection.connection is not None))
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT * FROM no_such_table")
    except DatabaseError:
        return HttpResponse("failed")
    return HttpResponse("no failure")


urlpatterns = [
    path("plain", plain),
    path("meeting", meeting),
    path("awaited", awaited),
    path("answering", counted),
    path("queried", queried),
    path("failing", failing),
]
