"""Resolving a parked call from the inbox page: retry, confirm, mark failed; and refusals."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from jaiweb.agent.runner import wake_local_runners
from jaiweb.store.models import Entry, Operation
from jaiweb.store.selectors import operation_records
from jaiweb.store.services import session_create
from tests.support.builders import parked_call
from tests.support.deep_json import JSON_DEPTH_MAX, JSON_VALUE_DEPTH_MAX, nested

pytestmark = pytest.mark.django_db

XSS = "<script>alert(1)</script>"


@pytest.fixture
def staff(django_user_model):
    return django_user_model.objects.create_user("root", password="root-pass-1", is_staff=True)


@pytest.fixture
def parked(alice):
    return parked_call(session_create(owner=alice, title="episode"))


@pytest.fixture
def admin_client(client, staff):
    client.force_login(staff)
    return client


def url(op: str, call: str = "call_1") -> str:
    return f"/inbox/{op}/{call}"


def resolutions(op: str) -> list[str]:
    return [r.resolution for r in operation_records(operation_id=op) if r.type == "tool_resolved"]


def result_of(op: str):
    """The call's result entry (None while there is none)."""
    t1 = next(r for r in operation_records(operation_id=op) if r.type == "tool_dispatched")
    row = Entry.objects.filter(entry_id=t1.result_entry_id).first()
    return row.to_journal().message if row else None


def unchanged(op: str, records: int) -> bool:
    return (
        len(operation_records(operation_id=op)) == records
        and Operation.objects.get(pk=op).is_parked
    )


# --- the three choices, without JavaScript ---------------------------------------------


def test_retry_records_the_choice_and_the_item_leaves_the_list(
    admin_client, parked, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks() as callbacks:
        response = admin_client.post(url(parked), {"action": "retry", "reason": "nothing arrived"})
    assert response.status_code == 302 and response["Location"] == "/inbox/"
    assert resolutions(parked) == ["retry"] and result_of(parked) is None
    [resolved] = [r for r in operation_records(operation_id=parked) if r.type == "tool_resolved"]
    assert (resolved.by, resolved.reason) == ("root", "nothing arrived")
    assert not Operation.objects.get(pk=parked).is_parked
    assert wake_local_runners in callbacks  # the runner goes on at once
    assert len(callbacks) == 2  # and the session's watchers are told
    page = admin_client.get("/inbox/").content.decode()
    assert "Retry recorded for call call_1" in page and "Nothing is waiting." in page
    assert "data-inbox-item" not in page


def test_confirm_with_a_json_result_writes_it(admin_client, parked):
    result = '{"content": "it is on the feed", "details": {"post_id": "post_1"}}'
    response = admin_client.post(
        url(parked), {"action": "confirm", "reason": "seen on the feed", "result": result}
    )
    assert response.status_code == 302
    assert resolutions(parked) == ["confirmed"]
    message = result_of(parked)
    assert message.content == "it is on the feed" and message.details == {"post_id": "post_1"}
    assert not message.is_error
    page = admin_client.get("/inbox/").content.decode()
    assert "Confirmed call call_1" in page and "data-inbox-item" not in page


def test_confirm_with_a_picked_post_uses_it_over_the_typed_result(admin_client, parked):
    pick = '{"content": "published to the feed as post_7", "details": {"post_id": "post_7"}}'
    admin_client.post(
        url(parked),
        {"action": "confirm", "reason": "that post", "pick": pick, "result": "ignored"},
    )
    message = result_of(parked)
    assert message.details == {"post_id": "post_7"}
    assert message.content == "published to the feed as post_7"


def test_confirm_with_plain_text_or_nothing(admin_client, alice):
    texted = parked_call(session_create(owner=alice, title="one"))
    admin_client.post(url(texted), {"action": "confirm", "reason": "ok", "result": "it ran"})
    assert result_of(texted).content == "it ran" and result_of(texted).details == {}
    empty = parked_call(session_create(owner=alice, title="two"))
    admin_client.post(url(empty), {"action": "confirm", "reason": "saw it", "result": "  "})
    assert result_of(empty).content == "confirmed by root: saw it"


def test_fail_answers_with_an_error_result(admin_client, parked):
    response = admin_client.post(url(parked), {"action": "fail", "reason": "cannot tell"})
    assert response.status_code == 302
    assert resolutions(parked) == ["failed"]
    message = result_of(parked)
    assert message.is_error and "outcome is unknown" in message.content
    page = admin_client.get("/inbox/").content.decode()
    assert "Marked call call_1" in page and "data-inbox-item" not in page


# --- with htmx ---------------------------------------------------------------------------


def test_an_htmx_resolution_removes_the_item_and_says_what_was_done(admin_client, alice):
    first = parked_call(session_create(owner=alice, title=f"first {XSS}"))
    second = parked_call(session_create(owner=alice, title="second"))
    response = admin_client.post(
        url(first), {"action": "fail", "reason": "x"}, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 200
    body = response.content.decode()
    assert 'id="inbox-messages" hx-swap-oob="afterbegin"' in body
    assert "Marked call call_1 of “first &lt;script&gt;" in body and XSS not in body
    assert "data-inbox-item" not in body and "Nothing is waiting." not in body
    response = admin_client.post(
        url(second), {"action": "retry", "reason": "y"}, HTTP_HX_REQUEST="true"
    )
    assert "Nothing is waiting." in response.content.decode()  # the last one went


def test_htmx_refusals_answer_with_the_item_or_the_message(admin_client, parked):
    response = admin_client.post(
        url(parked), {"action": "fail", "reason": "", "result": XSS}, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 400
    body = response.content.decode()
    assert body.lstrip().startswith("<article") and "data-refused" in body
    assert "Give a reason" in body and XSS not in body
    admin_client.post(url(parked), {"action": "fail", "reason": "x"})
    response = admin_client.post(
        url(parked), {"action": "fail", "reason": "x"}, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 409
    assert "not waiting in the inbox any more" in response.content.decode()


# --- refusals ------------------------------------------------------------------------------


def test_a_second_resolution_is_a_409_and_changes_nothing(admin_client, parked):
    admin_client.post(url(parked), {"action": "fail", "reason": "first"})
    records = len(operation_records(operation_id=parked))
    response = admin_client.post(url(parked), {"action": "retry", "reason": "second"})
    assert response.status_code == 409
    assert "not waiting in the inbox any more" in response.content.decode()
    assert resolutions(parked) == ["failed"]
    assert len(operation_records(operation_id=parked)) == records


def test_an_unknown_call_or_operation_is_a_409(admin_client, parked):
    assert (
        admin_client.post(url(parked, "call_9"), {"action": "fail", "reason": "x"}).status_code
        == 409
    )
    assert admin_client.post(url("op_nope"), {"action": "fail", "reason": "x"}).status_code == 409
    assert resolutions(parked) == []


@pytest.mark.parametrize(
    "data, error",
    [
        ({"action": "retry", "reason": "   "}, "Give a reason"),
        ({"action": "fail"}, "Give a reason"),
        ({"reason": "why"}, "Choose retry, confirm or mark failed"),
        ({"action": "delete", "reason": "why"}, "Choose retry, confirm or mark failed"),
        ({"action": "confirm", "reason": "why", "result": "{not json"}, "not valid JSON"),
        ({"action": "confirm", "reason": "why", "result": '{"details": 3}'}, "must be a JSON"),
        (  # a RecursionError, once: a 500
            {"action": "confirm", "reason": "why", "result": f'{{"details":{nested(3_000)}}}'},
            f"not valid JSON: JSON nested deeper than {JSON_DEPTH_MAX} levels",
        ),
        (  # read, but deeper than a kept value may be
            {
                "action": "confirm",
                "reason": "why",
                "result": f'{{"details":{{"a":{nested(JSON_VALUE_DEPTH_MAX)}}}}}',
            },
            f"JSON nested deeper than {JSON_VALUE_DEPTH_MAX} levels",
        ),
    ],
)
def test_a_bad_form_is_a_400_and_changes_nothing(admin_client, parked, data, error):
    records = len(operation_records(operation_id=parked))
    response = admin_client.post(url(parked), {**data, "result": data.get("result", XSS)})
    assert response.status_code == 400
    page = response.content.decode()
    assert error in page and "data-refused" in page
    assert XSS not in page  # what was typed comes back as text
    assert unchanged(parked, records)


def test_what_was_typed_comes_back_after_a_refusal(admin_client, parked):
    response = admin_client.post(
        url(parked), {"action": "confirm", "reason": f"because {XSS}", "result": "{oops"}
    )
    page = response.content.decode()
    reason = re.search(r'<textarea[^>]*name="reason"[^>]*>(.*?)</textarea>', page, re.S)[1]
    result = re.search(r'<textarea[^>]*name="result"[^>]*>(.*?)</textarea>', page, re.S)[1]
    assert reason == "because &lt;script&gt;alert(1)&lt;/script&gt;" and result == "{oops"


def test_csrf_is_enforced(staff, parked):
    client = Client(enforce_csrf_checks=True)
    client.force_login(staff)
    records = len(operation_records(operation_id=parked))
    response = client.post(url(parked), {"action": "fail", "reason": "x"})
    assert response.status_code == 403 and unchanged(parked, records)
    page = client.get("/inbox/").content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)[1]
    response = client.post(
        url(parked), {"action": "fail", "reason": "x", "csrfmiddlewaretoken": token}
    )
    assert response.status_code == 302 and resolutions(parked) == ["failed"]


def test_only_staff_may_resolve(client, alice, parked):
    records = len(operation_records(operation_id=parked))
    response = client.post(url(parked), {"action": "fail", "reason": "x"})
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    client.force_login(alice)
    response = client.post(url(parked), {"action": "fail", "reason": "x"})
    assert response.status_code == 403 and b"call_1" not in response.content
    assert unchanged(parked, records)


def test_resolving_needs_a_post(admin_client, parked):
    assert admin_client.get(url(parked)).status_code == 405
