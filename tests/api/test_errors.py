"""Every /api/v1/ answer is JSON {detail, code}, and a refused or failed write keeps nothing
(docs/ARCHITECTURE.md §12; issue 14.4 and 14.6)."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from jaiweb.api import sessions as session_views
from jaiweb.api.api import api
from jaiweb.store.models import ComicSession, Entry, Operation, OperationRecord
from tests.support.deep_json import JSON_DEPTH_MAX, TOO_DEEP, nested

pytestmark = pytest.mark.django_db

SERVER_ERROR = {"detail": "the server failed; try again", "code": "server_error"}


@pytest.fixture(params=[True, False], ids=["debug", "production"])
def debug(request, settings):
    settings.DEBUG = request.param
    return request.param


def json_of(response) -> dict:
    assert response["Content-Type"].startswith("application/json"), response.content[:200]
    return response.json()


def test_a_body_too_large_is_413_as_json_and_writes_nothing(as_alice, debug, settings):
    size = 10 * 1024 * 1024
    body = b'{"title": "' + b"x" * size + b'"}'
    response = as_alice.client.post("/api/v1/sessions", body, content_type="application/json")
    assert response.status_code == 413
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    assert json_of(response) == {
        "detail": f"the request body is larger than {limit} bytes",
        "code": "body_too_large",
    }
    assert not ComicSession.objects.exists()


def test_a_body_read_past_the_limit_is_413_too(as_alice, settings, session):
    """The length header passed, but reading the body hit the limit (ninja's handler)."""
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 10
    response = as_alice.post(f"/sessions/{session.id}/prompts", {"text": "太长了" * 10})
    assert response.status_code == 413
    assert json_of(response)["code"] == "body_too_large"
    assert not Operation.objects.exists()


def test_multipart_without_a_boundary_is_a_json_422(alice, debug):
    """The CSRF check of a cookie request parses a form body; it had no boundary to find."""
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    client.get("/")  # the CSRF cookie
    response = client.post(
        "/api/v1/sessions",
        b"--x\r\n",
        content_type="multipart/form-data",
        headers={"X-CSRFToken": client.cookies["csrftoken"].value},
    )
    assert response.status_code == 422
    assert json_of(response) == {
        "detail": "the request body is not valid JSON",
        "code": "invalid_body",
    }
    assert not ComicSession.objects.exists()


@pytest.mark.parametrize("body", ['"AAA"', "[1]", "5", "null", "true"])
def test_a_body_that_is_not_an_object_is_422(as_alice, session, body):
    """A JSON string was read as an object: POST made a session titled "Aaa", PATCH too."""
    expected = {
        "detail": "body: must be a JSON object",
        "code": "invalid",
        "field": "body",
        "errors": [{"field": "body", "message": "must be a JSON object"}],
    }
    client = as_alice.client
    created = client.post("/api/v1/sessions", body, content_type="application/json")
    assert (created.status_code, json_of(created)) == (422, expected)
    path = f"/api/v1/sessions/{session.id}"
    renamed = client.patch(path, body, content_type="application/json")
    assert (renamed.status_code, json_of(renamed)) == (422, expected)
    prompted = client.post(f"{path}/prompts", body, content_type="application/json")
    assert (prompted.status_code, json_of(prompted)) == (422, expected)
    assert list(ComicSession.objects.values_list("title", flat=True)) == ["episode"]
    assert not Operation.objects.exists()


def test_a_nested_body_that_is_not_an_object_is_422(as_staff):
    response = as_staff.post(
        "/inbox/op_x/call_1", {"resolution": "retry", "reason": "r", "result": "AAA"}
    )
    assert response.status_code == 422
    assert json_of(response)["field"] == "result"


def test_an_unknown_path_is_a_json_404(as_alice, debug):
    response = as_alice.get("/no/such/thing")
    assert response.status_code == 404
    assert json_of(response) == {"detail": "not found", "code": "not_found"}


def test_a_method_not_allowed_is_a_json_405(as_alice, debug):
    response = as_alice.client.put("/api/v1/sessions")
    assert response.status_code == 405
    assert json_of(response) == {
        "detail": "this method is not allowed here",
        "code": "method_not_allowed",
    }
    assert "POST" in response["Allow"]


def test_an_unhandled_error_is_a_json_500_logged_with_its_traceback(
    as_alice, session, debug, monkeypatch, caplog
):
    def broken(**kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(session_views, "session_detail", broken)
    response = as_alice.get(f"/sessions/{session.id}")
    assert response.status_code == 500
    assert json_of(response) == SERVER_ERROR
    assert b"a bug" not in response.content and b"Traceback" not in response.content
    logged = [r for r in caplog.records if r.name == "jaiweb.api"]
    assert logged and logged[0].exc_info[0] is RuntimeError


def test_a_write_that_fails_after_its_work_commits_nothing(as_alice, monkeypatch):
    """Issue 14.4: the session was committed, then its answer failed (500), and it stayed.
    A write under /api/v1/ is one transaction, rolled back with any error answer."""

    def broken(**kwargs):
        raise RuntimeError("the answer could not be rendered")

    monkeypatch.setattr(session_views, "session_detail", broken)
    response = as_alice.post("/sessions", {"title": "half-done"})
    assert response.status_code == 500
    assert json_of(response) == SERVER_ERROR
    assert not ComicSession.objects.exists()


def test_a_prompt_that_fails_after_its_work_commits_nothing(as_alice, session, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("the answer could not be rendered")

    monkeypatch.setattr(session_views, "Status", broken)
    response = as_alice.post(f"/sessions/{session.id}/prompts", {"text": "画一格"})
    assert response.status_code == 500
    assert not Operation.objects.exists() and not Entry.objects.exists()


SCHEMA = api.get_openapi_schema(path_prefix="")
# Every operation that reads a JSON body, with the ids of its path filled in.
JSON_BODIES = sorted(
    (method.upper(), re.sub(r"\{[^}]+\}", "x_1", path))
    for path, methods in SCHEMA["paths"].items()
    for method, operation in methods.items()
    if "application/json" in operation.get("requestBody", {}).get("content", {})
)


def rows() -> tuple[int, ...]:
    return tuple(m.objects.count() for m in (ComicSession, Entry, Operation, OperationRecord))


@pytest.mark.parametrize("depth", TOO_DEEP)
def test_a_body_nested_past_the_limit_is_422_on_every_route(as_staff, session, debug, depth):
    """Python's json recursed into it; the count refuses it first, the same on every route."""
    assert len(JSON_BODIES) > 10
    before = rows()
    for body in (nested(depth), '{"title":' + nested(depth) + "}"):
        for method, path in JSON_BODIES:
            response = as_staff.client.generic(
                method, "/api/v1" + path, body, content_type="application/json"
            )
            assert (response.status_code, json_of(response)) == (
                422,
                {
                    "detail": f"the request body is JSON nested deeper than {JSON_DEPTH_MAX} "
                    "levels of arrays and objects",
                    "code": "invalid_body",
                },
            ), (method, path)
    assert rows() == before


def test_a_body_as_deep_as_the_limit_is_read(as_alice, debug):
    """One level less than refused: read, and refused for what it says (a title is text)."""
    body = '{"title":' + nested(JSON_DEPTH_MAX - 1) + "}"
    response = as_alice.client.post("/api/v1/sessions", body, content_type="application/json")
    assert response.status_code == 422
    assert json_of(response)["field"] == "title"
    assert not ComicSession.objects.exists()
