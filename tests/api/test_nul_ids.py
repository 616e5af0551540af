"""An id with a NUL in the URL names nothing: 404, on PostgreSQL too (it was a 500 there:
PostgreSQL refuses a NUL in a query; found by the websocket fuzz test's /ws/sessions/%00/)."""

from __future__ import annotations

import pytest

from jaiweb.store.models import ComicSession, Operation
from tests.api.conftest import park_a_call

pytestmark = pytest.mark.django_db

DENY = {"tool_call_id": "c", "decision": "deny"}
NOT_FOUND = {
    "session": {"detail": "no such session", "code": "not_found"},
    "operation": {"detail": "no such operation", "code": "not_found"},
    "entry": {"detail": "no such entry", "code": "not_found"},
}


@pytest.mark.parametrize(
    ("method", "path", "body", "what"),
    [
        ("GET", "/sessions/%00", None, "session"),
        ("GET", "/sessions/a%00b/entries", None, "session"),
        ("PATCH", "/sessions/%00", {"title": "t"}, "session"),
        ("DELETE", "/sessions/%00", None, "session"),
        ("POST", "/sessions/%00/prompts", {"text": "hi"}, "session"),
        ("GET", "/operations/%00", None, "operation"),
        ("POST", "/operations/%00/approvals", DENY, "operation"),
        ("GET", "/sessions/{session}/children/%00", None, "entry"),
    ],
)
def test_a_nul_in_an_id_is_404(as_alice, session, method, path, body, what):
    response = as_alice.call(method, path.format(session=session.id), body)
    assert response.status_code == 404
    assert response.json() == NOT_FOUND[what]
    assert ComicSession.objects.count() == 1 and not Operation.objects.exists()


def test_a_nul_in_an_inbox_address_is_404(as_staff, session):
    parked = park_a_call(session)
    body = {"resolution": "failed", "reason": "x"}
    response = as_staff.post(f"/inbox/{parked[:3]}%00/call_1", body)
    assert (response.status_code, response.json()) == (404, NOT_FOUND["operation"])
    assert Operation.objects.get(pk=parked).is_parked
