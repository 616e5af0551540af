"""A runner outlives a database that fails for a while: it waits and claims again."""

from __future__ import annotations

import logging
import threading

import pytest
from django.db import OperationalError

from jaiweb.agent import runner as runner_module
from jaiweb.agent.runner import Runner, RunnerConfig
from jaiweb.store.models import Operation
from jaiweb.store.services import operation_accept, session_create
from tests.support.waiting import wait_until

pytestmark = pytest.mark.django_db(transaction=True)


def test_claims_that_fail_are_tried_again_and_the_run_finishes(alice, monkeypatch, caplog):
    session = session_create(owner=alice, title="db down")
    op = operation_accept(session_id=session.id, text="/say 你好").operation_id
    real = runner_module.operation_claim
    failures = []

    def flaky_claim(**kwargs):
        if len(failures) < 3:
            failures.append(kwargs)
            raise OperationalError("FATAL: sorry, too many clients already")
        return real(**kwargs)

    monkeypatch.setattr(runner_module, "operation_claim", flaky_claim)
    caplog.set_level(logging.WARNING, logger=runner_module.__name__)
    runner = Runner(config=RunnerConfig(workers=1, poll_seconds=0.05))
    stop = threading.Event()
    thread = threading.Thread(target=runner.run_until, args=(stop,))
    thread.start()
    try:
        wait_until(lambda: Operation.objects.get(pk=op).outcome, 30, "the run to finish")
    finally:
        stop.set()
        thread.join(timeout=30)
    assert Operation.objects.get(pk=op).outcome == "completed"
    assert len(failures) == 3
    # Backing off: each pause the runner took after a refused claim longer than the last.
    pauses = [r.args[-1] for r in caplog.records if "trying again in" in r.getMessage()]
    assert len(pauses) == 3 and pauses[0] < pauses[1] < pauses[2], pauses
