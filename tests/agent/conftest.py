"""Fixtures for running the agent loop against a real database."""

from __future__ import annotations

import pytest
from django.utils import timezone

from jaiweb.agent.loop import LoopConfig, OperationRun
from jaiweb.agent.state import DEFAULT_STATE
from jaiweb.agent.tools import default_tools
from jaiweb.store.leases import operation_claim
from jaiweb.store.models import Entry
from jaiweb.store.selectors import operation_records
from jaiweb.store.services import operation_accept, session_create
from tests.support.sinks import RecordingSink


@pytest.fixture(autouse=True)
def media(tmp_path, settings):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.JAIWEB_FEED_SECRET = "test-feed-secret"
    return settings.MEDIA_ROOT


@pytest.fixture
def session(alice):
    return session_create(owner=alice, title="episode", initial_app_state=DEFAULT_STATE)


class Harness:
    """Accept a prompt, claim it, run the loop; then read the journals back."""

    def __init__(self, session):
        self.session = session
        self.events = RecordingSink()

    def prompt(self, text: str) -> str:
        return operation_accept(session_id=self.session.id, text=text).operation_id

    def run(
        self, provider, *, sleep=lambda s: None, tools=None, config=None, operation_id=None
    ) -> str:
        config = config or LoopConfig(context_budget=100_000, lease_seconds=60)
        lease = operation_claim(
            owner="test-runner",
            now=timezone.now(),
            lease_seconds=config.lease_seconds,
            operation_id=operation_id,
        )
        assert lease is not None, "nothing to claim"
        return OperationRun(
            lease=lease,
            provider=provider,
            tools=tools or default_tools(),
            events=self.events,
            config=config,
            sleep=sleep,
        ).run()

    def records(self, operation_id: str) -> list:
        return operation_records(operation_id=operation_id)

    def record_types(self, operation_id: str) -> list[str]:
        return [r.type for r in self.records(operation_id)]

    def entries(self) -> list:
        return [r.to_journal() for r in Entry.objects.filter(session=self.session).order_by("seq")]

    def entry_kinds(self) -> list[str]:
        """user / assistant / tool_result:<tool> / app_state / compaction / branch."""
        out = []
        for e in self.entries():
            if e.type == "message":
                m = e.message
                out.append(f"tool_result:{m.tool_name}" if m.role == "tool_result" else m.role)
            else:
                out.append(e.type)
        return out


@pytest.fixture
def harness(session):
    return Harness(session)
