"""Who may call what: anonymous, the owner, another user and staff × every API operation.

The operations come from the generated OpenAPI document, so a path added without a
row here fails. Every status seen must be one the document declares, and a 404 must
look exactly like the 404 for an id that does not exist.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import pytest

from jaiweb.api.api import api
from jaiweb.store.selectors import branch_get
from jaiweb.store.services import entry_append, session_create
from journal.ids import result_entry_id
from tests.api.conftest import (
    BASE,
    Api,
    api_for,
    await_approval,
    park_a_call,
    run_to_the_end,
    start_run,
)

pytestmark = pytest.mark.django_db

SCHEMA = api.get_openapi_schema(path_prefix="")
OPERATIONS = sorted(
    (method.upper(), path) for path, methods in SCHEMA["paths"].items() for method in methods
)
ROLES = ("anonymous", "owner", "other", "staff")


class World:
    """Alice's sessions in the states the operations need, made when first asked for."""

    def __init__(self, alice, bob, staff):
        self.users = {"anonymous": None, "owner": alice, "other": bob, "staff": staff}
        self.alice = alice

    def _session(self, title: str):
        return session_create(owner=self.alice, title=title)

    @cached_property
    def idle(self):
        session = self._session("idle")
        self.finished_op = run_to_the_end(session)
        return session

    @cached_property
    def root_id(self) -> str:
        return branch_get(session=self.idle)[0].id

    @cached_property
    def running(self):
        session = self._session("running")
        start_run(session)
        return session

    @cached_property
    def awaiting(self) -> str:
        """An operation waiting for its owner's approval of call_1."""
        return await_approval(self._session("awaiting"))

    @cached_property
    def parked(self) -> str:
        """An operation with a parked publish_panel call_1, waiting for staff."""
        return park_a_call(self._session("parked"))

    @cached_property
    def turns(self):
        """Two finished turns: the second prompt can be edited, its reply regenerated."""
        session = self._session("turns")
        run_to_the_end(session, "第一格", "好的")
        run_to_the_end(session, "第二格", "好的")
        return session

    @cached_property
    def second_prompt(self) -> str:
        prompts = [e for e in branch_get(session=self.turns) if e.message.role == "user"]
        return prompts[1].id

    @cached_property
    def panelled(self):
        """A session whose branch holds a drawn panel (e_panel)."""
        from tests.support.factories import assistant, panel, user

        session = self._session("panelled")
        entry_append(
            session_id=session.id,
            entries=[
                user("e_ask", None, "画"),
                assistant("e_call", "e_ask", calls=[("c_e_panel", "generate_image")]),
                panel("e_panel", "e_call"),
            ],
            expected_leaf_id=None,
        )
        return session

    @cached_property
    def rewound(self):
        """A finished turn, then a rewind to its prompt: "back" has a leaf to return to."""
        from jaiweb.store.services import rewind_append

        session = self._session("rewound")
        run_to_the_end(session)
        rewind_append(session_id=session.id, target_id=branch_get(session=session)[0].id)
        return session

    @cached_property
    def chaptered(self):
        """A finished turn whose prompt starts a chapter."""
        from jaiweb.commands.sessions import chapter_set

        session = self._session("chaptered")
        run_to_the_end(session)
        session.refresh_from_db()
        first = branch_get(session=session)[0].id
        chapter_set(session=session, entry_id=first, title="开头", expected_leaf_id=session.leaf_id)
        return session

    @cached_property
    def varied(self):
        """A session whose branch holds a panel drawn as two variants (calls c1, c2)."""
        from journal.entries import AssistantMessage, MessageEntry, ToolCall, ToolResultMessage
        from tests.support.factories import T0, user

        calls = [
            ToolCall(id=c, name="generate_image", arguments={"prompt": "猪", "variants": 2})
            for c in ("c1", "c2")
        ]
        reply = AssistantMessage(content="画两个版本", tool_calls=calls, stop_reason="tool_use")
        entries = [
            user("e_ask", None, "画两个版本"),
            MessageEntry(id="e_call", parent_id="e_ask", timestamp=T0, message=reply),
        ]
        for call in calls:
            result = ToolResultMessage(
                tool_call_id=call.id,
                tool_name="generate_image",
                content="panel rendered",
                details={"image_id": f"img_{call.id}"},
            )
            entries.append(
                MessageEntry(
                    id=result_entry_id("e_call", call.id),
                    parent_id=entries[-1].id,
                    timestamp=T0,
                    message=result,
                )
            )
        session = self._session("varied")
        entry_append(session_id=session.id, entries=entries, expected_leaf_id=None)
        return session

    @cached_property
    def share_id(self) -> int:
        from jaiweb.store.shares import share_link_create

        return share_link_create(session_id=self.idle.id)[0].id

    @cached_property
    def label_id(self) -> int:
        from jaiweb.store.labels import label_add

        return label_add(session_id=self.idle.id, entry_id=self.root_id, text="书签").id

    def session_file(self) -> bytes:
        """A bundle of the idle session: what POST /sessions/import takes as its body."""
        from jaiweb.store.transfer import session_export

        return b"".join(f"{line}\n".encode() for line in session_export(session=self.idle))

    def op(self) -> str:
        self.idle  # noqa: B018 - makes the finished operation
        return self.finished_op

    def ids(self) -> list[str]:
        """Every session and operation id made so far."""
        found = [
            v.id
            for k, v in vars(self).items()
            if k in ("idle", "running", "turns", "panelled", "rewound", "chaptered", "varied")
        ]
        found += [vars(self)[k] for k in ("awaiting", "parked", "finished_op") if k in vars(self)]
        return found


@dataclass(frozen=True)
class Case:
    call: Callable[[World], tuple[str, dict | None]]  # path and JSON body
    owner: int
    other: int
    staff: int

    def expected(self, role: str) -> int:
        return 401 if role == "anonymous" else getattr(self, role)


def read(call, owner=200):
    """Reads of Alice's data: staff may read every session."""
    return Case(call, owner=owner, other=404, staff=200)


def write(call, owner):
    """Writes to Alice's data: hers alone."""
    return Case(call, owner=owner, other=404, staff=404)


def mine(call, status):
    """Each caller's own data."""
    return Case(call, owner=status, other=status, staff=status)


def staff_only(call):
    return Case(call, owner=403, other=403, staff=200)


MATRIX: dict[tuple[str, str], Case] = {
    ("GET", "/sessions"): mine(lambda w: ("/sessions", None), 200),
    ("POST", "/sessions"): mine(lambda w: ("/sessions", {"title": "新的一集"}), 201),
    ("GET", "/sessions/{session_id}"): read(lambda w: (f"/sessions/{w.idle.id}", None)),
    ("PATCH", "/sessions/{session_id}"): write(
        lambda w: (f"/sessions/{w.idle.id}", {"title": "改名"}), 200
    ),
    ("DELETE", "/sessions/{session_id}"): write(lambda w: (f"/sessions/{w.idle.id}", None), 204),
    ("GET", "/sessions/{session_id}/entries"): read(
        lambda w: (f"/sessions/{w.idle.id}/entries", None)
    ),
    ("GET", "/sessions/{session_id}/branch"): read(
        lambda w: (f"/sessions/{w.idle.id}/branch", None)
    ),
    ("GET", "/sessions/{session_id}/children/{entry_id}"): read(
        lambda w: (f"/sessions/{w.idle.id}/children/{w.root_id}", None)
    ),
    ("GET", "/sessions/{session_id}/export"): read(
        lambda w: (f"/sessions/{w.idle.id}/export", None)
    ),
    ("POST", "/sessions/{session_id}/prompts"): write(
        lambda w: (f"/sessions/{w.idle.id}/prompts", {"text": "继续"}), 202
    ),
    ("POST", "/sessions/{session_id}/navigate"): write(
        lambda w: (f"/sessions/{w.idle.id}/navigate", {"entry_id": w.root_id}), 200
    ),
    ("POST", "/sessions/{session_id}/stop"): write(
        lambda w: (f"/sessions/{w.running.id}/stop", {}), 202
    ),
    ("GET", "/sessions/{session_id}/compare"): read(
        lambda w: (f"/sessions/{w.idle.id}/compare?left={w.root_id}&right={w.idle.leaf_id}", None)
    ),
    ("GET", "/sessions/{session_id}/entries/{entry_id}/rewind-preview"): read(
        lambda w: (f"/sessions/{w.idle.id}/entries/{w.root_id}/rewind-preview", None)
    ),
    ("GET", "/sessions/{session_id}/entries/{entry_id}/effects"): read(
        lambda w: (f"/sessions/{w.idle.id}/entries/{w.root_id}/effects", None)
    ),
    ("GET", "/sessions/{session_id}/state"): read(
        lambda w: (f"/sessions/{w.idle.id}/state?at={w.root_id}", None)
    ),
    ("POST", "/sessions/{session_id}/characters"): write(
        lambda w: (f"/sessions/{w.idle.id}/characters", {"name": "猪猪侠", "mood": "开心"}), 200
    ),
    ("POST", "/sessions/{session_id}/permission-mode"): write(
        lambda w: (f"/sessions/{w.idle.id}/permission-mode", {"mode": "auto"}), 200
    ),
    ("GET", "/sessions/{session_id}/labels"): read(
        lambda w: (f"/sessions/{w.idle.id}/labels", None)
    ),
    ("POST", "/sessions/{session_id}/labels"): write(
        lambda w: (f"/sessions/{w.idle.id}/labels", {"entry_id": w.root_id, "text": "开头"}), 201
    ),
    ("DELETE", "/sessions/{session_id}/labels/{label_id}"): write(
        lambda w: (f"/sessions/{w.idle.id}/labels/{w.label_id}", None), 204
    ),
    ("GET", "/sessions/{session_id}/search"): read(
        lambda w: (f"/sessions/{w.idle.id}/search?q=%E4%BD%A0%E5%A5%BD", None)
    ),
    ("POST", "/sessions/{session_id}/fork"): write(
        lambda w: (f"/sessions/{w.idle.id}/fork", {"entry_id": w.root_id}), 201
    ),
    ("POST", "/sessions/{session_id}/entries/{entry_id}/resend"): write(
        lambda w: (f"/sessions/{w.turns.id}/entries/{w.second_prompt}/resend", {"text": "改"}),
        202,
    ),
    ("POST", "/sessions/{session_id}/entries/{entry_id}/regenerate"): write(
        lambda w: (f"/sessions/{w.turns.id}/entries/{w.second_prompt}/regenerate", {}), 202
    ),
    ("POST", "/sessions/{session_id}/entries/{entry_id}/cherry-pick"): write(
        lambda w: (f"/sessions/{w.panelled.id}/entries/e_panel/cherry-pick", {}), 200
    ),
    ("POST", "/sessions/{session_id}/entries/{entry_id}/variant"): write(
        lambda w: (
            f"/sessions/{w.varied.id}/entries/{result_entry_id('e_call', 'c1')}/variant",
            {"variant": 2},
        ),
        200,
    ),
    ("GET", "/sessions/{session_id}/share-links"): write(
        lambda w: (f"/sessions/{w.idle.id}/share-links", None), 200
    ),
    ("POST", "/sessions/{session_id}/share-links"): write(
        lambda w: (f"/sessions/{w.idle.id}/share-links", {}), 201
    ),
    ("DELETE", "/sessions/{session_id}/share-links/{link_id}"): write(
        lambda w: (f"/sessions/{w.idle.id}/share-links/{w.share_id}", None), 204
    ),
    ("GET", "/sessions/{session_id}/comic"): read(
        lambda w: (f"/sessions/{w.panelled.id}/comic?format=cbz", None)
    ),
    ("GET", "/sessions/{session_id}/entries/{entry_id}/lettering"): read(
        lambda w: (f"/sessions/{w.panelled.id}/entries/e_panel/lettering", None)
    ),
    ("POST", "/sessions/{session_id}/entries/{entry_id}/lettering"): write(
        lambda w: (f"/sessions/{w.panelled.id}/entries/e_panel/lettering", {"caption": "一"}),
        200,
    ),
    ("GET", "/sessions/{session_id}/page"): read(
        lambda w: (f"/sessions/{w.panelled.id}/page", None)
    ),
    ("POST", "/sessions/{session_id}/page"): write(
        lambda w: (f"/sessions/{w.panelled.id}/page", {"layout": "splash"}), 200
    ),
    ("GET", "/sessions/{session_id}/chapters"): read(
        lambda w: (f"/sessions/{w.chaptered.id}/chapters", None)
    ),
    ("POST", "/sessions/{session_id}/chapters"): write(
        lambda w: (f"/sessions/{w.idle.id}/chapters", {"entry_id": w.root_id, "title": "一"}), 200
    ),
    ("DELETE", "/sessions/{session_id}/chapters/{entry_id}"): write(
        lambda w: (
            f"/sessions/{w.chaptered.id}/chapters/{branch_get(session=w.chaptered)[0].id}",
            None,
        ),
        200,
    ),
    ("GET", "/sessions/{session_id}/back"): read(
        lambda w: (f"/sessions/{w.rewound.id}/back", None)
    ),
    ("POST", "/sessions/{session_id}/back"): write(
        lambda w: (f"/sessions/{w.rewound.id}/back", {}), 200
    ),
    ("GET", "/operations/{operation_id}"): read(lambda w: (f"/operations/{w.op()}", None)),
    ("POST", "/operations/{operation_id}/approvals"): write(
        lambda w: (
            f"/operations/{w.awaiting}/approvals",
            {"tool_call_id": "call_1", "decision": "approve"},
        ),
        200,
    ),
    ("GET", "/inbox"): staff_only(lambda w: ("/inbox", None)),
    ("POST", "/inbox/{operation_id}/{tool_call_id}"): staff_only(
        lambda w: (f"/inbox/{w.parked}/call_1", {"resolution": "failed", "reason": "看不出来"})
    ),
    ("GET", "/wallet"): mine(lambda w: ("/wallet", None), 200),
    ("POST", "/wallet/requests"): mine(lambda w: ("/wallet/requests", {"amount": 50}), 201),
    ("POST", "/sessions/import"): mine(lambda w: ("/sessions/import", w.session_file()), 201),
}


def send(client: Api, method: str, path: str, body: dict[str, Any] | bytes | None):
    if method == "GET":
        return client.get(path)
    if isinstance(body, bytes):  # a file, as the raw body
        return client.client.post(
            BASE + path, data=body, content_type="application/jsonl", headers=client.headers
        )
    return client.call(method, path, body if method != "DELETE" else None)


def test_every_row_is_an_operation_of_the_api():
    assert set(MATRIX) <= set(OPERATIONS), set(MATRIX) - set(OPERATIONS)


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize(("method", "path"), OPERATIONS, ids=[f"{m} {p}" for m, p in OPERATIONS])
def test_access(method, path, role, alice, bob, staff):
    assert (method, path) in MATRIX, f"{method} {path} has no row in the access matrix"
    case = MATRIX[(method, path)]
    world = World(alice, bob, staff)
    url, body = case.call(world)
    client = api_for(world.users[role])

    response = send(client, method, url, body)

    expected = case.expected(role)
    assert response.status_code == expected, (role, method, url, response.content[:300])
    declared = SCHEMA["paths"][path][method.lower()]["responses"]
    assert str(expected) in declared or expected in declared, (method, path, expected)
    if expected >= 400:
        assert set(response.json()) >= {"detail", "code"}
    if expected == 404:
        # Someone else's data answers exactly like data that was never there.
        unknown = url
        for n, known in enumerate(world.ids()):
            unknown = unknown.replace(known, f"x_missing{n}")
        assert unknown != url
        missing = send(client, method, unknown, body)
        assert (missing.status_code, missing.json()) == (404, response.json())


def test_the_list_holds_only_ones_own_sessions(alice, bob, staff):
    world = World(alice, bob, staff)
    world.idle  # noqa: B018
    assert [s["title"] for s in api_for(alice).get("/sessions").json()] == ["idle"]
    assert api_for(bob).get("/sessions").json() == []
    assert api_for(staff).get("/sessions").json() == []  # staff read by id, they list their own
