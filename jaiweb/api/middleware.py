"""Around every /api/v1/ request: all of a write or none of it, and JSON whatever happens.

* A write (any method but GET/HEAD/OPTIONS) runs in one transaction, rolled back when the
  answer is an error (4xx or 5xx). The services commit their own steps, and ninja turns
  exceptions into answers, so without this a request could commit part of its work and
  then fail: a session created, then its answer failing to render, stayed (issue 14.4).
  What is to happen after the commit (waking runners, telling watchers) is registered
  with ``transaction.on_commit`` and is dropped with a rollback.
* A read (GET) whose database connection died under it is made once more; a write
  answers 503 database_unavailable, with nothing of it committed (503 out_of_space when
  the disk is full, which /healthz then reports too). A write that was a
  deadlock victim (or a serialization failure) is rolled back whole and made again, up
  to three times.
* A body larger than DATA_UPLOAD_MAX_MEMORY_SIZE (an import's: JAIWEB_MAX_BUNDLE_BYTES and
  room for a form) is refused with 413 before it is read.
* An error answer that is not JSON (Django's 404 for an unknown path, ninja's empty 405,
  Django's 400 and 500 pages) is replaced by ``{"detail", "code"}`` with its status, so
  every /api/v1/ answer keeps the contract (docs/ARCHITECTURE.md §12), under DEBUG=0 too.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from django.conf import settings
from django.db import InterfaceError, OperationalError, connection, transaction
from django.http import HttpRequest, HttpResponse

from jaiweb.api.errors import OUT_OF_SPACE, body_too_large_detail, log
from jaiweb.store.conflicts import ATTEMPTS, is_conflict
from jaiweb.store.space import space_failure_note

PREFIX = "/api/v1/"
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
CODES = {
    400: ("bad_request", "the request could not be read"),
    403: ("forbidden", "forbidden"),
    404: ("not_found", "not found"),
    405: ("method_not_allowed", "this method is not allowed here"),
    413: ("body_too_large", None),
    500: ("server_error", "the server failed; try again"),
}


def _json_error(status: int, code: str, detail: str) -> HttpResponse:
    return HttpResponse(
        json.dumps({"detail": detail, "code": code}),
        status=status,
        content_type="application/json; charset=utf-8",
    )


# An import (POST /sessions/import) takes a session file up to JAIWEB_MAX_BUNDLE_BYTES, and
# room for a multipart form's boundaries and headers around it; the view checks the file.
IMPORT_PATH = PREFIX + "sessions/import"
FORM_ROOM = 64 * 1024


def _body_limit(request: HttpRequest) -> int | None:
    if request.method == "POST" and request.path == IMPORT_PATH:
        return settings.JAIWEB_MAX_BUNDLE_BYTES + FORM_ROOM
    return settings.DATA_UPLOAD_MAX_MEMORY_SIZE


def _too_large(request: HttpRequest) -> bool:
    limit = _body_limit(request)
    try:
        length = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return False
    return limit is not None and length > limit


def _as_json(response: HttpResponse) -> HttpResponse:
    if response.status_code < 400 or response.get("Content-Type", "").startswith(
        "application/json"
    ):
        return response
    status = response.status_code
    code, detail = CODES.get(status, ("error", response.reason_phrase.lower()))
    replaced = _json_error(status, code, detail or body_too_large_detail())
    for header in ("Allow", "Retry-After", "WWW-Authenticate"):
        if header in response:
            replaced[header] = response[header]
    return replaced


class ApiMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not request.path.startswith(PREFIX):
            return self.get_response(request)
        if _too_large(request):
            return _json_error(413, "body_too_large", body_too_large_detail(_body_limit(request)))
        if request.method in SAFE_METHODS:
            response = self.get_response(request)
            if getattr(request, "jaiweb_connection_lost", False):
                # A read whose connection the server ended: once more on a fresh one (the
                # pool checks what it hands out). A write is never repeated: it answers 503.
                request.jaiweb_connection_lost = False
                connection.close()
                response = self.get_response(request)
            return _as_json(response)
        try:
            for attempt in range(1, ATTEMPTS + 1):
                # A deadlock victim, rolled back whole, is made again, as a service's own
                # retry (conflicts_retried) would do were it not inside this transaction;
                # the conflict shows in the view (flagged by the error handler) or at COMMIT.
                request.jaiweb_conflict = False
                try:
                    with transaction.atomic():
                        response = self.get_response(request)
                        if response.status_code >= 400:
                            transaction.set_rollback(True)
                except OperationalError as exc:
                    if not is_conflict(exc) or attempt == ATTEMPTS:
                        raise
                    continue
                if not request.jaiweb_conflict or attempt == ATTEMPTS:
                    break
        except (OperationalError, InterfaceError) as exc:
            # Beginning or committing the transaction itself: by then Django has dropped
            # the dead connection (and taken another), so the error is all there is to go on.
            if space_failure_note(exc=exc):  # SQLite's commit on a full disk
                response = _json_error(*OUT_OF_SPACE)
            else:
                log.warning(
                    "database connection lost on %s %s: %s", request.method, request.path, exc
                )
                response = _json_error(503, "database_unavailable", "the database is unavailable")
        return _as_json(response)
