"""Fault points for crash tests (docs/ARCHITECTURE.md §11): JAIWEB_CRASH_AT and JAIWEB_PAUSE_AT.

``JAIWEB_CRASH_AT=<point>[:<tool>][@<n>]`` ends the process with ``os._exit(137)`` the
first time (the ``n``-th time, with ``@n``) the loop reaches that point (for that tool), so
a test can stop a run at the second of a reply's calls; ``JAIWEB_PAUSE_AT`` instead prints
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
    nth: int = 1  # fires the nth time the point is reached (for the tool)

    @classmethod
    def parse(cls, variable: str, value: str | None) -> FaultSpec | None:
        if not value:
            return None
        spec, at, nth = value.partition("@")
        point, _, tool = spec.partition(":")
        if point not in POINTS or (at and not (nth.isdigit() and nth.isascii() and int(nth) >= 1)):
            raise BadFaultSpec(
                f"{variable} must be one of {', '.join(POINTS)} (optionally :tool_name, "
                f"then optionally @n, n from 1), got {value!r}"
            )
        return cls(point, tool or None, int(nth) if at else 1)

    def matches(self, point: str, tool: str | None) -> bool:
        return self.point == point and (self.tool is None or self.tool == tool)


@dataclass
class Faults:
    """The fault points of one process; each fires at most once."""

    crash_at: FaultSpec | None = None
    pause_at: FaultSpec | None = None
    pause_file: str | None = None
    _fired: set[str] = field(default_factory=set)
    _reached: dict[str, int] = field(default_factory=dict)  # matching reaches, per fault

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None) -> Faults:
        env = os.environ if environ is None else environ
        return cls(
            crash_at=FaultSpec.parse("JAIWEB_CRASH_AT", env.get("JAIWEB_CRASH_AT")),
            pause_at=FaultSpec.parse("JAIWEB_PAUSE_AT", env.get("JAIWEB_PAUSE_AT")),
            pause_file=env.get("JAIWEB_PAUSE_FILE") or None,
        )

    def _due(self, name: str, spec: FaultSpec | None, point: str, tool: str | None) -> bool:
        """``spec`` matches and this is its nth matching reach (each fault fires once)."""
        if spec is None or name in self._fired or not spec.matches(point, tool):
            return False
        self._reached[name] = self._reached.get(name, 0) + 1
        return self._reached[name] == spec.nth

    def reach(self, point: str, tool: str | None = None) -> None:
        """The loop is at ``point`` (for ``tool``): crash or pause here if asked to."""
        if self._due("crash", self.crash_at, point, tool):
            self._fired.add("crash")
            sys.stderr.write(f"JAIWEB_CRASHED {point}\n")
            sys.stderr.flush()
            os._exit(137)
        if self._due("pause", self.pause_at, point, tool):
            self._fired.add("pause")
            sys.stderr.write(f"JAIWEB_PAUSED {point}\n")
            sys.stderr.flush()
            if self.pause_file:
                Path(self.pause_file).touch()
            while True:  # until someone kills the process
                time.sleep(3600)


NO_FAULTS = Faults()
