"""Golden operation logs: recorded runs and what the pure core decides for each.

A golden log is a JSON file under ``tests/fixtures/oplogs/``: an operation's records, the
active branch and the evidence as a real run left them at one moment (a crash point, or
a person's write between a read and an append), and the decision the pure core took
from them when it was recorded: ``recover_operation``'s verdict and ``next_step``'s
step. ``tests/journal/test_golden_oplogs.py`` decides again from the same facts, so a
change to a decision rule shows up as a difference to review, like a Temporal replay
test over recorded histories. ``tests/agent/oplog_recording.py`` records them.

Pure: no Django, so the replay runs with the rest of the core's tests.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from journal.entries import parse_entry
from journal.records import parse_record
from journal.recovery import RecoveryEvidence, fold_operation, recover_operation
from journal.steps import Limits, next_step

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "oplogs"
EPOCH = "2026-01-01T00:00:00+00:00"


def fixture_paths() -> list[Path]:
    return sorted(FIXTURES.glob("*.json"))


def load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def decide(golden: dict[str, Any]) -> dict[str, Any]:
    """The verdict and the next step the core takes today from a golden log's facts."""
    records = [parse_record(r) for r in golden["records"]]
    branch = [parse_entry(e) for e in golden["branch"]]
    evidence = RecoveryEvidence(
        entry_ids=frozenset(golden["evidence"]["entry_ids"]),
        final_assistant_entries=dict(golden["evidence"]["final_assistant_entries"]),
    )
    log = fold_operation(records)
    decision: dict[str, Any] = {"verdict": plain(recover_operation(records, evidence))}
    if log.finished is None:
        step = next_step(log, evidence, branch, Limits(**golden["limits"]))
        decision["next_step"] = {"step": type(step).__name__, **plain(step)}
    else:
        decision["next_step"] = None
    return decision


def plain(value: Any) -> Any:
    """``value`` as JSON data: pydantic models dumped, dataclasses as dicts, tuples as lists."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted(plain(v) for v in value)
    return value


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=1, sort_keys=True) + "\n"


def difference(recorded: Any, decided: Any) -> str:
    """A unified diff of the recorded decision against today's, for a failing test."""
    return "".join(
        difflib.unified_diff(
            dumps(recorded).splitlines(keepends=True),
            dumps(decided).splitlines(keepends=True),
            fromfile="recorded",
            tofile="decided now",
        )
    )


def steady_timestamps(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The items with their wall-clock timestamps replaced by one fixed instant.

    No decision reads a timestamp; dropping them keeps a re-recorded file's diff to what
    changed in the run itself."""
    return [{**item, "timestamp": EPOCH} for item in items]
