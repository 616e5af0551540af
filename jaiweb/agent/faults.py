"""Fault points for crash tests (docs/ARCHITECTURE.md §11): JAIWEB_CRASH_AT and JAIWEB_PAUSE_AT.

``JAIWEB_CRASH_AT=<point>[:<tool>]`` ends the process with ``os._exit(137)`` the first
time the loop reaches that point (for that tool); ``JAIWEB_PAUSE_AT`` instead prints
``JAIWEB_PAUSED <point>`` to stderr, creates ``JAIWEB_PAUSE_FILE`` if set, and sleeps, so
a test can SIGKILL the process from outside at exactly that moment.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

POINTS = (
    "after_accept",
    "after_model_attempted",
    "mid_stream",
    "after_assistant_entry",
    "after_usage",
    "awaiting_approval",
    "after_t1",
    "during_tool",
    "after_tool_effect",
    "after_t2",
    "after_input_entry",
    "before_finish",
)


class BadFaultSpec(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class FaultSpec:
    point: str
    tool: str | None = None

    @classmethod
    def parse(cls, variable: str, value: str | None) -> FaultSpec | None:
        if not value:
            return None
        point, _, tool = value.partition(":")
        if point not in POINTS:
            raise BadFaultSpec(
                f"{variable} must be one of {', '.join(POINTS)} (optionally :tool_name), "
                f"got {value!r}"
            )
        return cls(point, tool or None)

    def matches(self, point: str, tool: str | None) -> bool:
        return self.point == point and (self.tool is None or self.tool == tool)


@dataclass
class Faults:
    """The fault points of one process; each fires at most once."""

    crash_at: FaultSpec | None = None
    pause_at: FaultSpec | None = None
    pause_file: str | None = None
    _fired: set[str] = field(default_factory=set)

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None) -> Faults:
        env = os.environ if environ is None else environ
        return cls(
            crash_at=FaultSpec.parse("JAIWEB_CRASH_AT", env.get("JAIWEB_CRASH_AT")),
            pause_at=FaultSpec.parse("JAIWEB_PAUSE_AT", env.get("JAIWEB_PAUSE_AT")),
            pause_file=env.get("JAIWEB_PAUSE_FILE") or None,
        )

    def reach(self, point: str, tool: str | None = None) -> None:
        """The loop is at ``point`` (for ``tool``): crash or pause here if asked to."""
        if self.crash_at and "crash" not in self._fired and self.crash_at.matches(point, tool):
            self._fired.add("crash")
            sys.stderr.write(f"JAIWEB_CRASHED {point}\n")
            sys.stderr.flush()
            os._exit(137)
        if self.pause_at and "pause" not in self._fired and self.pause_at.matches(point, tool):
            self._fired.add("pause")
            sys.stderr.write(f"JAIWEB_PAUSED {point}\n")
            sys.stderr.flush()
            if self.pause_file:
                Path(self.pause_file).touch()
            while True:  # until someone kills the process
                time.sleep(3600)


NO_FAULTS = Faults()
