"""/api/v1/openapi.json: every path of CONTRACT §6, with its auth schemes."""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.django_db

CONTRACT = {
    ("GET", "/api/v1/sessions"),
    ("POST", "/api/v1/sessions"),
    ("GET", "/api/v1/sessions/{session_id}"),
    ("PATCH", "/api/v1/sessions/{session_id}"),
    ("DELETE", "/api/v1/sessions/{session_id}"),
    ("GET", "/api/v1/sessions/{session_id}/entries"),
    ("GET", "/api/v1/sessions/{session_id}/branch"),
    ("GET", "/api/v1/sessions/{session_id}/children/{entry_id}"),
    ("POST", "/api/v1/sessions/{session_id}/prompts"),
    ("POST", "/api/v1/sessions/{session_id}/navigate"),
    ("POST", "/api/v1/sessions/{session_id}/stop"),
    ("GET", "/api/v1/operations/{operation_id}"),
    ("POST", "/api/v1/operations/{operation_id}/approvals"),
    ("GET", "/api/v1/inbox"),
    ("POST", "/api/v1/inbox/{operation_id}/{tool_call_id}"),
    ("GET", "/api/v1/wallet"),
    ("GET", "/api/v1/sessions/{session_id}/export"),
}


@pytest.fixture
def schema(client):
    response = client.get("/api/v1/openapi.json")
    assert response.status_code == 200
    return response.json()


def test_every_contract_path_is_documented(schema):
    documented = {(m.upper(), path) for path, ops in schema["paths"].items() for m in ops}
    assert documented == CONTRACT


def test_both_ways_to_authenticate_are_documented(schema):
    schemes = schema["components"]["securitySchemes"]
    assert {"type": "http", "scheme": "bearer"} in schemes.values()
    assert any(s["type"] == "apiKey" and s["in"] == "cookie" for s in schemes.values())
    for ops in schema["paths"].values():
        for op in ops.values():
            assert len(op["security"]) == 2
            assert "401" in op["responses"]


def test_entries_are_typed_with_seq(schema):
    entry = schema["components"]["schemas"]["MessageEntryOut"]
    assert {"seq", "id", "parent_id", "timestamp", "message"} <= set(entry["properties"])


def test_operation_ids_are_the_views_names(schema):
    ids = [op["operationId"] for ops in schema["paths"].values() for op in ops.values()]
    assert len(set(ids)) == len(ids)
    assert {"submit_prompt", "navigate_session", "stop_session", "decide_approval"} <= set(ids)


def test_the_docs_page_is_served(client):
    assert client.get("/api/v1/docs").status_code == 200


def test_the_limits_the_server_enforces_are_documented(schema, settings):
    """Issue 14.9: a client (or a fuzzer) reading the document meets no undocumented 422."""
    c = schema["components"]["schemas"]
    text = c["PromptIn"]["properties"]["text"]
    assert (text["minLength"], text["maxLength"]) == (1, settings.JAIWEB_MAX_PROMPT_CHARS)
    not_blank = r"^[^\u0000]*[^\s\u0000][^\u0000]*$"
    assert text["pattern"] == not_blank and "JAIWEB_MAX_PROMPT_CHARS" in text["description"]
    reason = c["InboxResolveIn"]["properties"]["reason"]
    assert reason["pattern"] == not_blank and "whitespace" in reason["description"]
    title = c["SessionCreateIn"]["properties"]["title"]
    assert (title["minLength"], title["maxLength"], title["pattern"]) == (1, 200, not_blank)
    entry_id = c["NavigateIn"]["properties"]["entry_id"]
    assert (entry_id["minLength"], entry_id["maxLength"]) == (1, 128)
    assert entry_id["pattern"] == r"^[^\u0000]*$" and "NUL" in entry_id["description"]
    state = c["AppState"]["properties"]
    assert state["permission_mode"]["enum"] == ["ask", "auto"]
    after_seq = next(
        p
        for p in schema["paths"]["/api/v1/sessions/{session_id}/entries"]["get"]["parameters"]
        if p["name"] == "after_seq"
    )
    assert after_seq["schema"]["maximum"] == 2**63 - 1
    for example in ("", "   ", "a\x00", "ok"):  # the patterns say what the server does
        assert (re.search(not_blank, example) is not None) == (example == "ok")
