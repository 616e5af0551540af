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
        "StateAtEntry": link("read_state", at=entry, **SESSION_IN_PATH),
        "PreviewRewind": link("preview_rewind", entry_id=entry, **SESSION_IN_PATH),
        "EffectsUnder": link("read_effects", entry_id=entry, **SESSION_IN_PATH),
        "CompareWithLeaf": link("compare_branches", left=entry, right=entry, **SESSION_IN_PATH),
        "LabelEntry": link("add_label", {"entry_id": entry, "text": "★"}, **SESSION_IN_PATH),
        "ForkAtEntry": link("fork_session", {"entry_id": entry}, **SESSION_IN_PATH),
        "ResendEntry": link("resend_prompt", {"text": "再来"}, entry_id=entry, **SESSION_IN_PATH),
        "RegenerateEntry": link("regenerate_reply", {}, entry_id=entry, **SESSION_IN_PATH),
        "CherryPickEntry": link("cherry_pick_panel", {}, entry_id=entry, **SESSION_IN_PATH),
        "ShareEntry": link("create_share_link", {"leaf_id": entry}, **SESSION_IN_PATH),
        "ReadLettering": link("read_lettering", entry_id=entry, **SESSION_IN_PATH),
        "EditLettering": link(
            "edit_lettering", {"caption": "新的旁白"}, entry_id=entry, **SESSION_IN_PATH
        ),
        "PageAtEntry": link("read_page", at=entry, **SESSION_IN_PATH),
    }
