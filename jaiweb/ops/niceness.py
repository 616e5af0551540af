"""A runner process's CPU priority: below the web processes' when they share a machine.

A runner's work (the agent loops, their model calls and renders) is background work: an
artist waits for a prompt's answer, while a run's next step a moment later changes
nothing they are waiting on. When web and runner processes share the cores, the kernel
shares them out equally, and a web process's answers queued behind the runners'
steps. A runner process lowers its own priority at start (``JAIWEB_RUNNER_NICE``), so a
web process that needs a core gets it first; on a machine of its own a runner loses
nothing, as niceness only orders processes that want a core at the same time.

Linux keeps the niceness per thread and a new thread takes its creator's, so every
thread the process has is set, and those it starts later follow.
"""

from __future__ import annotations

import os
from pathlib import Path


def process_niceness_raise(*, nice: int) -> int:
    """Raise the niceness of every thread of this process to at least ``nice`` (never
    lower it: that needs privileges, and an operator may have set it higher); return the
    process's niceness now."""
    for task in _threads():
        try:
            if os.getpriority(os.PRIO_PROCESS, task) < nice:
                os.setpriority(os.PRIO_PROCESS, task, nice)
        except ProcessLookupError:  # the thread ended meanwhile
            continue
    return os.getpriority(os.PRIO_PROCESS, 0)


def _threads() -> list[int]:
    """This process's thread ids (Linux), or just the process where /proc has none."""
    tasks = Path("/proc/self/task")
    if tasks.is_dir():
        return [int(t.name) for t in tasks.iterdir()]
    return [0]
