"""/api/v1/openapi.json: every path of docs/ARCHITECTURE.md §12, with its auth schemes."""

from __future__ import annotations

import re
import sys

import pytest
from jsonschema_rs import Draft202012Validator  # schemathesis' own validator (ECMA-262 regexes)

from jaiweb.api.schemas import NOT_BLANK
from jaiweb.store.selectors import branch_get

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
    ("GET", "/api/v1/sessions/{session_id}/comic"),
    ("POST", "/api/v1/sessions/{session_id}/entries/{entry_id}/lettering"),
}
# Paths beyond docs/ARCHITECTURE.md §12 (issue 16's branch tools, API parity), each on purpose.
BEYOND_CONTRACT = {
    ("GET", "/api/v1/sessions/{session_id}/compare"),
    ("GET", "/api/v1/sessions/{session_id}/entries/{entry_id}/rewind-preview"),
    ("GET", "/api/v1/sessions/{session_id}/state"),
    ("GET", "/api/v1/sessions/{session_id}/entries/{entry_id}/effects"),
    ("POST", "/api/v1/sessions/{session_id}/characters"),
    ("POST", "/api/v1/sessions/{session_id}/permission-mode"),
    ("GET", "/api/v1/sessions/{session_id}/labels"),
    ("POST", "/api/v1/sessions/{session_id}/labels"),
    ("DELETE", "/api/v1/sessions/{session_id}/labels/{label_id}"),
    ("GET", "/api/v1/sessions/{session_id}/search"),
    ("POST", "/api/v1/sessions/{session_id}/fork"),
    ("POST", "/api/v1/sessions/{session_id}/entries/{entry_id}/resend"),
    ("POST", "/api/v1/sessions/{session_id}/entries/{entry_id}/regenerate"),
    ("POST", "/api/v1/sessions/{session_id}/entries/{entry_id}/cherry-pick"),
    ("GET", "/api/v1/sessions/{session_id}/share-links"),
    ("POST", "/api/v1/sessions/{session_id}/share-links"),
    ("DELETE", "/api/v1/sessions/{session_id}/share-links/{link_id}"),
    ("POST", "/api/v1/sessions/import"),
    # issue 30: chapters and "back to where I was"
    ("GET", "/api/v1/sessions/{session_id}/chapters"),
    ("POST", "/api/v1/sessions/{session_id}/chapters"),
    ("DELETE", "/api/v1/sessions/{session_id}/chapters/{entry_id}"),
    ("GET", "/api/v1/sessions/{session_id}/back"),
    ("POST", "/api/v1/sessions/{session_id}/back"),
    ("POST", "/api/v1/wallet/requests"),
    # issue 30: a panel's lettering read back, and the page layout and order
    ("GET", "/api/v1/sessions/{session_id}/entries/{entry_id}/lettering"),
    ("GET", "/api/v1/sessions/{session_id}/page"),
    ("POST", "/api/v1/sessions/{session_id}/page"),
    ("POST", "/api/v1/sessions/{session_id}/entries/{entry_id}/variant"),
}


@pytest.fixture
def schema(client):
    response = client.get("/api/v1/openapi.json")
    assert response.status_code == 200
    return response.json()


def test_every_contract_path_is_documented(schema):
    documented = {(m.upper(), path) for path, ops in schema["paths"].items() for m in ops}
    assert documented == CONTRACT | BEYOND_CONTRACT


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


def test_each_record_kind_is_told_apart_by_its_type(schema):
    """An operation's records are a ``oneOf``: each kind must state its ``type`` as a constant
    and forbid other fields, or a record matches two kinds (a serializer's return annotation
    once turned ``ToolResolved`` into any object, and schemathesis found it)."""
    components = schema["components"]["schemas"]
    kinds = components["OperationOut"]["properties"]["records"]["items"]["oneOf"]
    assert len(kinds) == 10
    for ref in kinds:
        kind = components[ref["$ref"].rsplit("/", 1)[1]]
        assert "const" in kind["properties"]["type"], ref
        assert kind["additionalProperties"] is False, ref


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
    not_blank = NOT_BLANK
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


def validator(schema: dict, component: str) -> Draft202012Validator:
    """The document's own rule for one request body (its $refs resolved in the document)."""
    return Draft202012Validator({"$ref": f"#/components/schemas/{component}", **schema})


def test_not_blank_means_what_str_strip_keeps(schema):
    """The fuzzing gate's finding: "\\s" in the pattern (ECMA-262: no U+001C–U+001F, no
    U+0085) let "\\x1e" through the document, and the server refused it as empty."""
    prompt = validator(schema, "PromptIn")
    for c in range(sys.maxunicode + 1):
        if 0xD800 <= c <= 0xDFFF or c == 0:
            continue
        text = chr(c)
        assert prompt.is_valid({"text": text}) == bool(text.strip()), hex(c)


def test_free_json_values_say_no_nul(schema):
    """The fuzzing gate's finding: an app state's unknown fields (and a tool result's
    details) were documented as any JSON; the server refuses a NUL anywhere in them."""
    create = validator(schema, "SessionCreateIn")
    for state in (
        {"weather": {"k\x00": 1}},
        {"weather": [{"k": "\x00"}]},
        {"characters": {"猪\x00": {}}},
        {"characters": {"猪": {"hat": ["\x00"]}}},
        {"k\x00": 1},
    ):
        assert not create.is_valid({"title": "t", "initial_app_state": state}), state
    kept = {"characters": {"猪": {"hat": ["红", 1, None, {"a": True}]}}, "weather": [1.5, "雨"]}
    assert create.is_valid({"title": "t", "initial_app_state": kept})
    resolve = validator(schema, "InboxResolveIn")
    body = {"resolution": "confirmed", "reason": "x", "result": {"details": {"a": ["\x00"]}}}
    assert not resolve.is_valid(body)
    body["result"]["details"] = {"a": ["ok"]}
    assert resolve.is_valid(body)


def test_every_body_may_be_413(schema, settings):
    """The body limit the middleware enforces is in the document, where a body is taken."""
    for path, ops in schema["paths"].items():
        for method, op in ops.items():
            if "requestBody" in op:
                assert "413" in op["responses"], (method, path)


# Text a server could check differently from the document: padded past a limit, whitespace
# only in its several kinds, at the limits.
EDGES = ["x", " x ", "\u000b", "\x1e", "\x85", "\ufeff", " ", ""]


def _padded(limit: int) -> list[str]:
    return ["x" * limit, "x" * (limit + 1), " " + "x" * limit, "x" * (limit - 1) + "\u000b"]


@pytest.mark.parametrize(
    ("component", "path", "field", "texts"),
    [
        ("SessionCreateIn", "/sessions", "title", [*EDGES, *_padded(200)]),
        ("SessionRenameIn", "/sessions/{id}", "title", [*EDGES, *_padded(200)]),
        ("ForkIn", "/sessions/{id}/fork", "title", [*EDGES, *_padded(200)]),
        ("LabelIn", "/sessions/{id}/labels", "text", [*EDGES, *_padded(80)]),
        ("CharacterIn", "/sessions/{id}/characters", "name", [*EDGES, *_padded(40)]),
        ("CharacterIn", "/sessions/{id}/characters", "buff", [*EDGES, *_padded(80)]),
    ],
)
def test_the_document_and_the_server_take_the_same_text(
    schema, as_alice, idle_session, component, path, field, texts
):
    """Issue 27.8: a title of 201 characters, the first a space, was refused by the document
    and taken by the server (stripped to 200); a character named "\\u000b" the other way
    round. For each text, the server takes it exactly when the document does."""
    rule = validator(schema, component)
    root = branch_get(session=idle_session)[0].id
    base = {"ForkIn": {"entry_id": root}, "LabelIn": {"entry_id": root}}.get(component, {})
    if field == "buff":
        base = {"name": "猪猪侠"}
    for text in texts:
        body = {**base, field: text}
        call = as_alice.patch if component == "SessionRenameIn" else as_alice.post
        response = call(path.format(id=idle_session.id), body)
        assert response.status_code in (200, 201, 422), (text, response.content[:200])
        taken = response.status_code != 422
        assert taken == rule.is_valid(body), (repr(text), response.content[:200])
        if not taken:
            assert response.json()["field"] == field, response.json()
