"""OpenAPI links: which answer's ids another operation takes (for clients and fuzzers).

A link names its target by operationId (the view's name) and says where each of the
target's parameters comes from, as OpenAPI runtime expressions. A stateful fuzzer
(schemathesis, tests/api/test_fuzz.py) follows them: it creates a session, prompts it,
then navigates to and opens the entries the answers name, instead of guessing ids.
"""

from __future__ import annotations

from typing import Any

SESSION_IN_PATH = {"session_id": "$request.path.session_id"}


def link(target: str, body: dict[str, Any] | None = None, /, **parameters: str) -> dict:
    """To the operation named ``target``; ``parameters`` by name (``operation_id`` too)."""
    spec: dict[str, Any] = {"operationId": target, "parameters": parameters}
    if body is not None:
        spec["requestBody"] = body
    return spec


def links(status: int, **targets: dict) -> dict:
    """``openapi_extra`` for a route: its ``status`` answer links to ``targets``."""
    return {"responses": {status: {"links": targets}}}


def entry_links(pointer: str) -> dict[str, dict]:
    """From an answer naming an entry of the session in the path (at JSON ``pointer``)."""
    entry = f"$response.body#{pointer}"
    return {
        "NavigateToEntry": link("navigate_session", {"entry_id": entry}, **SESSION_IN_PATH),
        "EntryChildren": link("list_children", entry_id=entry, **SESSION_IN_PATH),
        "BranchToEntry": link("read_branch", leaf=entry, **SESSION_IN_PATH),
    }
