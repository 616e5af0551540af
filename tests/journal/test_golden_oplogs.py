"""The pure core decides today what it decided when each golden operation log was recorded.

Each file of tests/fixtures/oplogs/ is a real run stopped at a crash point or between a
person's write and the loop's append (tests/agent/oplog_recording.py records them). A
change to a rule of ``next_step`` or of recovery fails here with the difference between
the recorded decision and today's. When the change is meant, re-record the logs and
review the fixture diff like any other change of behaviour.
"""

from __future__ import annotations

import pytest

from tests.support.oplogs import decide, difference, fixture_paths, load

PATHS = fixture_paths()
# Every fault point of the crash matrix, and every kind of step, has a recorded log.
CRASH_POINTS = {
    "after_accept",
    "after_model_attempted",
    "mid_stream",
    "after_assistant_entry",
    "after_usage",
    "after_t1",
    "during_tool",
    "after_tool_effect",
    "after_t2",
    "after_input_entry",
    "before_finish",
}
STEPS = {
    "ModelCall",
    "HandleCall",
    "DispatchAgain",
    "Park",
    "SettleUsage",
    "WriteInputs",
    "Compact",
    "Finish",
    "Stop",
}


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_the_core_decides_as_recorded(path):
    golden = load(path)
    decided = decide(golden)
    assert decided == golden["decision"], f"{path.name}: {golden['about']}\n" + difference(
        golden["decision"], decided
    )


def test_the_logs_cover_every_crash_point_and_every_step():
    names = {p.stem for p in PATHS}
    missing = {p for p in CRASH_POINTS if not any(p in n for n in names)}
    assert not missing, f"no golden log for {sorted(missing)}"
    steps = {(load(p)["decision"]["next_step"] or {}).get("step") for p in PATHS}
    assert steps >= STEPS, f"no golden log decides {sorted(STEPS - steps)}"
