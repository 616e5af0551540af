"""Every refusal as ``{"detail": "...", "code": "..."}`` with its status (docs/ARCHITECTURE.md §12).

Not-found bodies never echo what was asked for and never differ between "does not
exist" and "is someone else's", so a 404 says nothing about other users' data.
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied, RequestDataTooBig
from django.db import InterfaceError, OperationalError, connection
from django.http import Http404, HttpRequest, HttpResponse
from django.http.multipartparser import MultiPartParserError
from ninja import NinjaAPI
from ninja.errors import AuthenticationError, HttpError, ValidationError

from jaiweb.store.conflicts import is_conflict
from jaiweb.store.errors import (
    ImageNotYours,
    InvalidField,
    PromptRateLimited,
    PromptTooLong,
    StaleLeaf,
    StoreError,
)
from jaiweb.store.space import space_failure_note
from journal.errors import UnknownEntry
from journal.jsonvalues import JsonTooDeep

log = logging.getLogger("jaiweb.api")

NO_SUCH_ENTRY = "no such entry"  # the core's UnknownEntry; a StoreError says its own words


class ApiError(Exception):
    """A refusal decided in the API layer itself (access, CSRF)."""

    def __init__(self, status: int, code: str, detail: str) -> None:
        self.status = status
        self.code = code
        self.detail = detail
        super().__init__(detail)


def error_response(
    api: NinjaAPI,
    request: HttpRequest,
    status: int,
    code: str,
    detail: str,
    *,
    headers: dict[str, str] | None = None,
    **extra: Any,
) -> HttpResponse:
    response = api.create_response(
        request, {"detail": detail, "code": code, **extra}, status=status
    )
    for name, value in (headers or {}).items():
        response[name] = value
    return response


def connection_lost(exc: BaseException) -> bool:
    """The database connection died under the request (a server restart, a terminated
    backend): not a bug of the request, and a read may simply be made again."""
    if not isinstance(exc, OperationalError | InterfaceError):
        return False
    cause = exc.__cause__
    if type(cause).__name__ == "PoolTimeout":  # psycopg_pool: no connection in time
        return True
    # 08…: connection exception; 57P01–57P03: the server ended the backend (admin shutdown,
    # crash shutdown, cannot connect now).
    sqlstate = getattr(cause, "sqlstate", None) or ""
    if sqlstate.startswith("08") or sqlstate in ("57P01", "57P02", "57P03"):
        return True
    raw = connection.connection
    return raw is None or bool(getattr(raw, "closed", False))


OUT_OF_SPACE = (503, "out_of_space", "the server is out of disk space; try again later")


def out_of_space_response(api: NinjaAPI, request: HttpRequest) -> HttpResponse:
    status, code, detail = OUT_OF_SPACE
    return error_response(api, request, status, code, detail)


def body_too_large_detail(limit: int | None = None) -> str:
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE if limit is None else limit
    return f"the request body is larger than {limit} bytes"


def _field_name(loc: tuple | list) -> str:
    """("body", "body", "text") → "text"; ("query", "after_seq") → "after_seq"."""
    parts = list(loc[1:])
    if loc and loc[0] == "body" and len(parts) > 1:
        parts = parts[1:]  # the name of the view's body parameter
    return ".".join(str(p) for p in parts) or str(loc[0])


def _message(error: dict) -> str:
    # Our own validators' ValueErrors come back as "Value error, <ours>".
    return error["msg"].removeprefix("Value error, ")


def install_error_handlers(api: NinjaAPI) -> None:
    def on_store_error(request: HttpRequest, exc: StoreError) -> HttpResponse:
        # The status and the detail are the refusal's own (``StoreError.http_status`` and
        # ``api_detail``); the body adds what a client needs to act on it.
        answer = (api, request, exc.http_status, exc.code, exc.api_detail())
        if isinstance(exc, ImageNotYours | InvalidField):  # ImageNotYours: a 404 naming it
            return error_response(*answer, field=exc.field)
        if isinstance(exc, PromptTooLong):
            return error_response(*answer, field="text")
        if isinstance(exc, StaleLeaf):
            return error_response(*answer, leaf_id=exc.actual)
        if isinstance(exc, PromptRateLimited):
            return error_response(*answer, headers={"Retry-After": str(max(1, exc.retry_after))})
        return error_response(*answer)

    def on_unknown_entry(request: HttpRequest, exc: UnknownEntry) -> HttpResponse:
        return error_response(api, request, 404, "not_found", NO_SUCH_ENTRY)

    def on_api_error(request: HttpRequest, exc: ApiError) -> HttpResponse:
        return error_response(api, request, exc.status, exc.code, exc.detail)

    def on_permission_denied(request: HttpRequest, exc: PermissionDenied) -> HttpResponse:
        return error_response(api, request, 403, "forbidden", str(exc) or "forbidden")

    def on_not_found(request: HttpRequest, exc: Http404) -> HttpResponse:
        return error_response(api, request, 404, "not_found", "not found")

    def on_unauthenticated(request: HttpRequest, exc: AuthenticationError) -> HttpResponse:
        return error_response(
            api,
            request,
            401,
            "unauthenticated",
            "log in, or send Authorization: Bearer <token>",
            headers={"WWW-Authenticate": 'Bearer realm="jaiweb"'},
        )

    def on_http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
        if exc.status_code == 400:  # ninja's "Cannot parse request body": invalid input
            cause = exc.__cause__
            detail = (
                f"the request body is {cause}"  # "JSON nested deeper than N levels of …"
                if isinstance(cause, JsonTooDeep)
                else "the request body is not valid JSON"
            )
            return error_response(api, request, 422, "invalid_body", detail)
        return error_response(api, request, exc.status_code, "error", str(exc))

    def on_validation_error(request: HttpRequest, exc: ValidationError) -> HttpResponse:
        errors = [{"field": _field_name(e["loc"]), "message": _message(e)} for e in exc.errors]
        detail = "; ".join(f"{e['field']}: {e['message']}" for e in errors)
        return error_response(
            api, request, 422, "invalid", detail, field=errors[0]["field"], errors=errors
        )

    def on_body_too_large(request: HttpRequest, exc: RequestDataTooBig) -> HttpResponse:
        return error_response(api, request, 413, "body_too_large", body_too_large_detail())

    def on_unparsable_body(request: HttpRequest, exc: MultiPartParserError) -> HttpResponse:
        # Read by the CSRF check of a cookie request: the API only takes JSON bodies anyway.
        return error_response(
            api, request, 422, "invalid_body", "the request body is not valid JSON"
        )

    def on_unhandled(request: HttpRequest, exc: Exception) -> HttpResponse:
        """A bug: logged with its traceback; the client gets the contract's shape, no trace."""
        if space_failure_note(exc=exc):  # a full disk, not a bug: /healthz reports it
            return out_of_space_response(api, request)
        if isinstance(exc, OperationalError) and is_conflict(exc):
            # A deadlock victim or a serialization failure: nothing of it was written, and
            # ApiMiddleware runs the whole request again (its transaction is rolled back).
            request.jaiweb_conflict = True
            log.info("write conflict on %s %s: %s", request.method, request.path, exc)
            return error_response(api, request, 503, "write_conflict", "try again")
        if connection_lost(exc):
            request.jaiweb_connection_lost = True  # ApiMiddleware may read it once more
            log.warning("database connection lost on %s %s: %s", request.method, request.path, exc)
            return error_response(
                api, request, 503, "database_unavailable", "the database is unavailable"
            )
        log.error("unhandled error on %s %s", request.method, request.path, exc_info=exc)
        return error_response(api, request, 500, "server_error", "the server failed; try again")

    api.add_exception_handler(Exception, on_unhandled)
    api.add_exception_handler(RequestDataTooBig, on_body_too_large)
    api.add_exception_handler(MultiPartParserError, on_unparsable_body)
    api.add_exception_handler(StoreError, on_store_error)
    api.add_exception_handler(UnknownEntry, on_unknown_entry)
    api.add_exception_handler(ApiError, on_api_error)
    api.add_exception_handler(PermissionDenied, on_permission_denied)
    api.add_exception_handler(Http404, on_not_found)
    api.add_exception_handler(AuthenticationError, on_unauthenticated)
    api.add_exception_handler(HttpError, on_http_error)
    api.add_exception_handler(ValidationError, on_validation_error)
