"""A runner judges another runner dead by its pid only on the same host and pid namespace."""

from __future__ import annotations

import os
import subprocess
import sys

from jaiweb.agent.runner import HOST, _start_ticks, holder_is_gone, runner_identity

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_this_process_is_alive():
    assert not holder_is_gone(runner_identity())


def test_a_process_that_ended_is_gone_and_a_reused_pid_is_told_apart():
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    ticks = _start_ticks(child.pid)
    child.wait()
    assert holder_is_gone(f"{HOST}:{child.pid}:{ticks}")
    me = os.getpid()
    assert holder_is_gone(f"{HOST}:{me}:{int(_start_ticks(me)) + 1}")  # same pid, not us


def test_another_hosts_runner_waits_for_its_lease():
    assert not holder_is_gone(f"elsewhere:{2**22 + 1}:1")


def test_a_runner_in_another_pid_namespace_is_another_host():
    """Like a container sharing our hostname: its pids mean nothing here."""
    code = "from jaiweb.agent.runner import runner_identity; print(runner_identity())"
    out = (
        subprocess.run(
            [
                "unshare",
                "--pid",
                "--fork",
                "--mount-proc",
                sys.executable,
                "manage.py",
                "shell",
                "-c",
                code,
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        .stdout.strip()
        .splitlines()[-1]
    )
    host, pid, _ = out.split(":")
    assert host != HOST and host.split(".pidns")[0] == HOST.split(".pidns")[0]
    assert pid == "1" or int(pid) < 100  # numbered inside its own namespace
    assert not holder_is_gone(out)
