"""/inbox: parked calls with their evidence; an admin's retry / confirmed / failed."""

from __future__ import annotations

import json

import pytest

from jaiweb.store.models import Entry, Operation
from jaiweb.store.selectors import operation_records
from journal.jsonvalues import json_text_depth
from tests.api.conftest import park, park_a_call
from tests.support.deep_json import JSON_DEPTH_MAX, JSON_VALUE_DEPTH_MAX, nested_value

pytestmark = pytest.mark.django_db


@pytest.fixture
def parked(session):
    return park_a_call(session)


def resolve(client, op, call="call_1", **body):
    return client.post(f"/inbox/{op}/{call}", body)


def test_staff_see_the_parked_call(as_staff, parked, session):
    [item] = as_staff.get("/inbox").json()
    assert (item["operation_id"], item["tool_call_id"], item["tool_name"]) == (
        parked,
        "call_1",
        "publish_panel",
    )
    assert item["session_id"] == session.id and item["owner"] == "alice"
    assert item["policy"] == "at_most_once" and item["idempotency_key"]
    assert set(item["evidence"]) == {"feed_posts_with_this_key", "feed_posts_around_then"}


def test_a_parked_operation_without_a_call_is_listed_too(as_staff, session):
    op = park(session)
    [item] = as_staff.get("/inbox").json()
    assert (item["operation_id"], item["tool_call_id"]) == (op, None)
    assert item["attention"] == "the log needs a look"


def test_others_are_403(as_alice, as_bob, parked):
    for client in (as_alice, as_bob):
        assert client.get("/inbox").status_code == 403
        response = resolve(client, parked, resolution="failed", reason="x")
        assert response.status_code == 403 and response.json()["code"] == "forbidden"
    assert Operation.objects.get(pk=parked).is_parked


def test_mark_failed_writes_the_error_result(as_staff, parked, session):
    response = resolve(as_staff, parked, resolution="failed", reason="cannot tell")
    assert response.status_code == 200
    assert response.json() == {
        "operation_id": parked,
        "tool_call_id": "call_1",
        "resolution": "failed",
    }
    assert operation_records(operation_id=parked)[-1].type == "tool_resolved"
    assert not Operation.objects.get(pk=parked).is_parked
    result = Entry.objects.filter(session=session).order_by("-seq").first().payload["message"]
    assert result["is_error"] and "outcome is unknown" in result["content"]
    assert as_staff.get("/inbox").json() == []


def test_confirm_with_a_result(as_staff, parked, session):
    response = resolve(
        as_staff,
        parked,
        resolution="confirmed",
        reason="the post is on the feed",
        result={"content": "published", "details": {"post_id": "post_1"}},
    )
    assert response.status_code == 200
    result = Entry.objects.filter(session=session).order_by("-seq").first().payload["message"]
    assert result["content"] == "published" and result["details"] == {"post_id": "post_1"}


def test_a_call_that_is_not_parked_is_409(as_staff, parked):
    assert resolve(as_staff, parked, resolution="retry", reason="again").status_code == 200
    again = resolve(as_staff, parked, resolution="retry", reason="again")
    assert again.status_code == 409 and again.json()["code"] == "conflict"
    other = resolve(as_staff, parked, call="call_9", resolution="failed", reason="x")
    assert other.status_code == 409


def test_an_unknown_operation_is_404(as_staff):
    response = resolve(as_staff, "op_nope", resolution="failed", reason="x")
    assert response.status_code == 404 and response.json()["detail"] == "no such operation"


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"reason": "x"}, "resolution"),
        ({"resolution": "undo", "reason": "x"}, "resolution"),
        ({"resolution": "failed"}, "reason"),
        ({"resolution": "failed", "reason": "   "}, "reason"),
        ({"resolution": "retry", "reason": "\x85\x85"}, "reason"),  # the fuzzing gate's
        ({"resolution": "confirmed", "reason": "x", "result": {"details": [1]}}, "result.details"),
    ],
)
def test_bad_resolutions_are_422_naming_the_field(as_staff, parked, payload, field):
    records = operation_records(operation_id=parked)
    response = as_staff.post(f"/inbox/{parked}/call_1", payload)
    assert response.status_code == 422 and response.json()["field"] == field
    assert Operation.objects.get(pk=parked).is_parked
    assert operation_records(operation_id=parked) == records


def test_details_nested_deeper_than_a_kept_value_are_422_and_nothing_written(
    as_staff, parked, session
):
    records = operation_records(operation_id=parked)
    entries = Entry.objects.filter(session=session).count()
    response = resolve(
        as_staff,
        parked,
        resolution="confirmed",
        reason="posted",
        result={"content": "published", "details": {"a": nested_value(JSON_VALUE_DEPTH_MAX)}},
    )
    message = f"JSON nested deeper than {JSON_VALUE_DEPTH_MAX} levels of arrays and objects"
    assert (response.status_code, response.json()) == (
        422,
        {
            "detail": f"result.details: {message}",
            "code": "invalid",
            "field": "result.details",
            "errors": [{"field": "result.details", "message": message}],
        },
    )
    assert Operation.objects.get(pk=parked).is_parked
    assert operation_records(operation_id=parked) == records
    assert Entry.objects.filter(session=session).count() == entries


def test_details_past_the_bodys_limit_are_422_and_the_session_still_reads(
    as_staff, as_alice, parked, session
):
    """Kept, such details made every later read of the session a 500: its rows are read by
    pydantic-core, which stops at 201 levels."""
    records = operation_records(operation_id=parked)
    response = resolve(
        as_staff,
        parked,
        resolution="confirmed",
        reason="posted",
        result={"content": "published", "details": {"a": nested_value(JSON_DEPTH_MAX)}},
    )
    assert (response.status_code, response.json()) == (
        422,
        {
            "detail": f"the request body is JSON nested deeper than {JSON_DEPTH_MAX} levels "
            "of arrays and objects",
            "code": "invalid_body",
        },
    )
    assert Operation.objects.get(pk=parked).is_parked
    assert operation_records(operation_id=parked) == records
    assert as_alice.get(f"/sessions/{session.id}/entries").status_code == 200


def test_details_as_deep_as_a_value_may_be_are_kept_read_and_carried(
    as_staff, as_alice, parked, session
):
    deepest = {"a": nested_value(JSON_VALUE_DEPTH_MAX - 1)}
    response = resolve(
        as_staff,
        parked,
        resolution="confirmed",
        reason="posted",
        result={"content": "published", "details": deepest},
    )
    assert response.status_code == 200, response.content[:300]
    listed = as_alice.get(f"/sessions/{session.id}/entries")
    assert listed.status_code == 200
    assert listed.json()[-1]["message"]["details"] == deepest
    exported = as_alice.client.get(f"/api/v1/sessions/{session.id}/export")
    lines = b"".join(exported.streaming_content).decode().splitlines()
    assert any(json.loads(line).get("message", {}).get("details") == deepest for line in lines)
    assert max(json_text_depth(line) for line in lines) <= JSON_DEPTH_MAX  # imports again
