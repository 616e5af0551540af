"""A runner process lowers its CPU priority, every thread of it, and never raises it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection

from jaiweb.ops.niceness import process_niceness_raise
from tests.support.children import Child

ROOT = Path(__file__).resolve().parents[2]

# A process with a thread started before the call and one after; it prints what the call
# returned and the niceness of each of its threads, as JSON.
THREADS = """
import json, os, sys, threading
from jaiweb.ops.niceness import process_niceness_raise
hold = threading.Event()
before = threading.Thread(target=hold.wait); before.start()
now = process_niceness_raise(nice=int(sys.argv[1]))
after = threading.Thread(target=hold.wait); after.start()
tasks = [int(t) for t in os.listdir("/proc/self/task")]
print(json.dumps([now, sorted(os.getpriority(os.PRIO_PROCESS, t) for t in tasks)]))
hold.set()
"""


def threads_niceness(nice: int, *, started_at: int = 0) -> tuple[int, list[int]]:
    """What the call returned in a child started at ``started_at``, and its threads' niceness."""
    r = subprocess.run(
        [sys.executable, "-c", THREADS, str(nice)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=(lambda: os.nice(started_at)) if started_at else None,
    )
    assert r.returncode == 0, r.stderr
    now, levels = json.loads(r.stdout)
    return now, levels


def test_every_thread_is_set_those_started_before_and_after():
    assert threads_niceness(7) == (7, [7, 7, 7])  # the main thread, before, after


def test_a_process_started_nicer_stays_as_nice():
    assert threads_niceness(5, started_at=12) == (12, [12, 12, 12])


def test_zero_leaves_the_process_as_it_was():
    assert process_niceness_raise(nice=0) == os.getpriority(os.PRIO_PROCESS, 0)


@pytest.mark.django_db(transaction=True)
def test_runagents_runs_at_the_niceness_it_is_given():
    runner = Child(connection.settings_dict, "runagents", env={"JAIWEB_RUNNER_NICE": "6"})
    try:
        line = runner.wait_for("jaiweb runner ", 60)
        assert line.endswith("at niceness 6")
        tasks = Path(f"/proc/{runner.process.pid}/task")
        levels = {os.getpriority(os.PRIO_PROCESS, int(t.name)) for t in tasks.iterdir()}
        assert levels == {6}
    finally:
        runner.stop()
