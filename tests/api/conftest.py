"""Fixtures for the JSON API: users, a client per caller, and sessions in every state."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client

from jaiweb.accounts.services import api_token_create
from jaiweb.store.services import operation_accept, session_create
from tests.support.builders import PANEL_ARGS, awaiting_approval, park_operation, parked_call
from tests.support.runs import Harness
from tests.support.scripted import ScriptedProvider, text

BASE = "/api/v1"


@pytest.fixture(autouse=True)
def _fresh_rate_limit():
    """The prompt counters live in the cache, keyed by user id: ids come back between tests."""
    cache.clear()
    yield
    cache.clear()


class Api:
    """A client for /api/v1/ that sends and reads JSON."""

    def __init__(self, client: Client, token: str | None = None):
        self.client = client
        self.headers = {"Authorization": f"Bearer {token}"} if token else {}

    def call(self, method: str, path: str, body: Any = None, **params: Any):
        kwargs: dict[str, Any] = {"headers": self.headers}
        if body is not None:
            kwargs.update(data=json.dumps(body), content_type="application/json")
        elif params:
            kwargs["data"] = params
        return getattr(self.client, method.lower())(BASE + path, **kwargs)

    def get(self, path: str, **params: Any):
        return self.call("GET", path, **params)

    def post(self, path: str, body: Any = None):
        return self.call("POST", path, body if body is not None else {})

    def patch(self, path: str, body: Any):
        return self.call("PATCH", path, body)

    def delete(self, path: str):
        return self.call("DELETE", path)


def api_for(user) -> Api:
    client = Client()
    if user is not None:
        client.force_login(user)
    return Api(client)


@pytest.fixture
def staff(django_user_model):
    return django_user_model.objects.create_user("root", password="root-pass-1", is_staff=True)


@pytest.fixture
def as_alice(alice) -> Api:
    return api_for(alice)


@pytest.fixture
def as_bob(bob) -> Api:
    return api_for(bob)


@pytest.fixture
def as_staff(staff) -> Api:
    return api_for(staff)


@pytest.fixture
def alice_token(alice) -> str:
    return api_token_create(user=alice, name="script")[1]


@pytest.fixture
def session(alice):
    """Alice's new, empty session."""
    return session_create(owner=alice, title="episode")


def run_to_the_end(session, prompt: str = "你好", reply: str = "你好，我是导演。") -> str:
    """One finished run (user message, assistant reply): the session is idle again."""
    harness = Harness(session)
    op = harness.prompt(prompt)
    assert harness.run(ScriptedProvider(text(reply))) == "finished"
    session.refresh_from_db()
    return op


@pytest.fixture
def idle_session(session):
    """Alice's session after two finished runs: four entries on one branch."""
    run_to_the_end(session, "第一集", "好的")
    run_to_the_end(session, "第二集", "再来")
    return session


def start_run(session) -> str:
    """An unfinished operation with no runner on it: the session is running."""
    return operation_accept(session_id=session.id, text="画一格").operation_id


def park(session) -> str:
    """An operation handed to the recovery inbox (not a call: the operation as a whole)."""
    op = start_run(session)
    park_operation(op, reason="the log needs a look", owner="test")
    return op


def park_a_call(session) -> str:
    """A publish_panel call whose runner died after T1: parked, waiting for staff."""
    return parked_call(session, args=PANEL_ARGS, reason="publish_panel may have run")


def await_approval(session, call_id: str = "call_1") -> str:
    """A run that asks its owner before a paid tool call."""
    return awaiting_approval(session, call_id)
