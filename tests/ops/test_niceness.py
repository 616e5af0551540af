"""A runner process lowers its CPU priority, every thread of it, and never raises it."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
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


def started() -> int:
    """The niceness this test process runs at, which its children start from."""
    return os.getpriority(os.PRIO_PROCESS, 0)


def test_every_thread_is_set_those_started_before_and_after():
    nice = max(started(), 7)
    assert threads_niceness(7) == (nice, [nice, nice, nice])  # the main thread, before, after


def test_a_process_started_nicer_stays_as_nice():
    nicer = min(started() + 12, 19)  # os.nice adds to the niceness it starts from
    assert threads_niceness(5, started_at=12) == (nicer, [nicer, nicer, nicer])


def test_zero_leaves_the_process_as_it_was():
    assert process_niceness_raise(nice=0) == started()


def test_a_runner_refused_at_start_leaves_its_priority_as_it_was(settings):
    settings.JAIWEB_IMAGE_BACKEND = "comfyui"
    settings.JAIWEB_COMFYUI_WORKFLOW = "/nonexistent/workflow.json"
    before = started()
    with pytest.raises(CommandError):
        call_command("runagents", stdout=io.StringIO(), stderr=io.StringIO())
    assert started() == before  # this very process, had it been lowered


@pytest.mark.django_db(transaction=True)
def test_runagents_runs_at_the_niceness_it_is_given():
    nice = max(started(), 6)
    runner = Child(connection.settings_dict, "runagents", env={"JAIWEB_RUNNER_NICE": "6"})
    try:
        line = runner.wait_for("jaiweb runner ", 60)
        assert line.endswith(f"at niceness {nice}")
        tasks = Path(f"/proc/{runner.process.pid}/task")
        levels = {os.getpriority(os.PRIO_PROCESS, int(t.name)) for t in tasks.iterdir()}
        assert levels == {nice}
    finally:
        runner.stop()
