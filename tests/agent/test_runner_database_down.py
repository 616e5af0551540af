"""A runner outlives a database that fails for a while: it waits and claims again."""

from __future__ import annotations

import threading
import time

import pytest
from django.db import OperationalError

from jaiweb.agent import runner as runner_module
from jaiweb.agent.runner import Runner, RunnerConfig
from jaiweb.store.models import Operation
from jaiweb.store.services import operation_accept, session_create

pytestmark = pytest.mark.django_db(transaction=True)


def test_claims_that_fail_are_tried_again_and_the_run_finishes(alice, monkeypatch):
    session = session_create(owner=alice, title="db down")
    op = operation_accept(session_id=session.id, text="/say 你好").operation_id
    real = runner_module.operation_claim
    failures = []

    def flaky_claim(**kwargs):
        if len(failures) < 3:
            failures.append(time.monotonic())
            raise OperationalError("FATAL: sorry, too many clients already")
        return real(**kwargs)

    monkeypatch.setattr(runner_module, "operation_claim", flaky_claim)
    runner = Runner(config=RunnerConfig(workers=1, poll_seconds=0.05))
    stop = threading.Event()
    thread = threading.Thread(target=runner.run_until, args=(stop,))
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if Operation.objects.get(pk=op).outcome is not None:
                break
            time.sleep(0.05)
    finally:
        stop.set()
        thread.join(timeout=30)
    assert Operation.objects.get(pk=op).outcome == "completed"
    assert len(failures) == 3
    assert failures[2] - failures[1] > failures[1] - failures[0]  # backing off
