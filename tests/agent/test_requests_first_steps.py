"""The agent loop gives way at each step to a request its process is answering."""

from __future__ import annotations

import pytest

from jaiweb import requests_first
from jaiweb.requests_first import answering, waits
from tests.support.scripted import ScriptedProvider, text

pytestmark = pytest.mark.django_db


def test_a_step_waits_while_a_request_is_answered_and_not_otherwise(harness, monkeypatch):
    monkeypatch.setattr(requests_first, "MAX_WAIT_SECONDS", 0.001)  # that it waits, not how long
    harness.prompt("你好")
    before = waits()[0]
    assert harness.run(ScriptedProvider(text("你好。"))) == "finished"
    assert waits()[0] == before
    harness.prompt("再来一次")
    with answering():
        assert harness.run(ScriptedProvider(text("好的。"))) == "finished"
    assert waits()[0] - before >= 2  # the model's step and the finish, at least
