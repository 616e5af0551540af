"""Fault points that fire at their nth reach (``<point>[:<tool>]@<n>``), so a crash test can
stop a run at the second of a reply's calls."""

from __future__ import annotations

import pytest

from jaiweb.agent import faults as faults_module
from jaiweb.agent.faults import BadFaultSpec, Faults, FaultSpec


class Crashed(Exception):
    pass


def test_a_fault_fires_at_its_nth_matching_reach_only(monkeypatch):
    def crash(code):
        raise Crashed(code)

    monkeypatch.setattr(faults_module.os, "_exit", crash)
    faults = Faults.from_environ({"JAIWEB_CRASH_AT": "after_tool_effect:generate_image@2"})
    faults.reach("after_tool_effect", "set_character_state")  # another tool: not counted
    faults.reach("after_t1", "generate_image")  # another point: not counted
    faults.reach("after_tool_effect", "generate_image")  # the first reach
    with pytest.raises(Crashed):
        faults.reach("after_tool_effect", "generate_image")
    faults.reach("after_tool_effect", "generate_image")  # fired once: never again


def test_without_n_a_fault_fires_at_its_first_reach():
    assert FaultSpec.parse("JAIWEB_CRASH_AT", "after_t1") == FaultSpec("after_t1", None, 1)
    assert FaultSpec.parse("X", "after_t1:generate_image@3") == FaultSpec(
        "after_t1", "generate_image", 3
    )


@pytest.mark.parametrize(
    "value", ["after_t1@0", "after_t1@x", "after_t1@", "after_t1@-1", "nope@2", "after_t1@２"]
)
def test_a_bad_n_is_refused(value):
    with pytest.raises(BadFaultSpec):
        FaultSpec.parse("JAIWEB_CRASH_AT", value)
