"""Fixtures for running the agent loop against a real database."""

from __future__ import annotations

import pytest

from jaiweb.agent.state import DEFAULT_STATE
from jaiweb.store.services import session_create
from tests.support.fixtures import media  # noqa: F401 - a fixture
from tests.support.runs import Harness


@pytest.fixture
def session(alice):
    return session_create(owner=alice, title="episode", initial_app_state=DEFAULT_STATE)


@pytest.fixture
def harness(session):
    return Harness(session)
