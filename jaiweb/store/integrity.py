"""Integrity of the stored journals: what ``manage.py journal_check`` verifies.

For each session: entries numbered 1..n without gaps; rows agree with their payloads;
the entries fold into a well-formed tree (one root, every parent appended before its
child, no duplicate id); the stored leaf, count and chain positions equal the fold.
For each operation: records numbered without gaps and all its own; every input it
accepted is in the tree unless it ended ``interrupted`` (a lost prompt is named with its
text); the log is recoverable; the stored outcome and record count equal the fold.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from pydantic import ValidationError

from jaiweb.store.chains import chain_positions
from jaiweb.store.models import ComicSession, Entry, Operation, OperationRecord
from journal.entries import AssistantMessage, MessageEntry, parse_entry
from journal.errors import JournalError
from journal.records import parse_record
from journal.recovery import RecoveryEvidence, fold_operation, verdict_for
from journal.snapshot import replay


@dataclass
class SessionReport:
    session_id: str
    entries: int = 0
    operations: int = 0
    problems: list[str] = field(default_factory=list)


def session_check(session: ComicSession) -> SessionReport:
    """Every check of one session and its operations."""
    report = SessionReport(session.id)
    problems = report.problems
    rows = list(
        Entry.objects.filter(session=session)
        .order_by("seq")
        .values_list(
            "seq", "entry_id", "parent_id", "type", "payload", "timestamp", "chain", "chain_pos"
        )
    )
    report.entries = len(rows)
    entries = []
    folds = chain_positions((row[1], row[2]) for row in rows)
    for expected_seq, (row, folded) in enumerate(zip(rows, folds, strict=True), 1):
        seq, entry_id, parent_id, type_, payload, timestamp, chain, chain_pos = row
        if (chain, chain_pos) != folded:
            problems.append(
                f"entry seq {seq} ({entry_id!r}) has chain {(chain, chain_pos)}, "
                f"but the tree says {folded}"
            )
        if seq != expected_seq:
            problems.append(f"entry seq {seq} found where {expected_seq} was expected (gap)")
        try:
            entry = parse_entry(payload)
        except ValidationError as exc:
            problems.append(f"entry seq {seq} ({entry_id!r}) has an invalid payload: {exc}")
            continue
        if (entry.id, entry.parent_id, entry.type) != (entry_id, parent_id, type_):
            problems.append(f"entry seq {seq} ({entry_id!r}) disagrees with its payload")
        if entry.timestamp != timestamp:
            problems.append(f"entry seq {seq} ({entry_id!r}) timestamp disagrees with its payload")
        entries.append(entry)
    if session.entry_count != len(rows):
        problems.append(f"stored entry_count {session.entry_count}, but {len(rows)} entries")
    last = rows[-1][1] if rows else None
    if session.leaf_id != last:
        problems.append(f"stored leaf {session.leaf_id!r}, but the last append is {last!r}")
    try:
        replay(entries, session.initial_app_state, session.created_at)
    except JournalError as exc:
        problems.append(f"the entries do not form a tree: {exc}")

    present = {e.id for e in entries}
    final = {
        e.id: e.message.stop_reason
        for e in entries
        if isinstance(e, MessageEntry)
        and isinstance(e.message, AssistantMessage)
        and e.message.is_final
    }
    evidence = RecoveryEvidence(entry_ids=frozenset(present), final_assistant_entries=final)
    unfinished = []
    for op in Operation.objects.filter(session=session).order_by("created_at", "id"):
        report.operations += 1
        problems.extend(f"operation {op.id!r}: {p}" for p in _operation_problems(op, evidence))
        if op.outcome is None:
            unfinished.append(op.id)
    if len(unfinished) > 1:
        problems.append(f"more than one unfinished operation: {unfinished}")
    return report


def _operation_problems(op: Operation, evidence: RecoveryEvidence) -> Iterator[str]:
    rows = list(
        OperationRecord.objects.filter(operation=op).order_by("seq").values_list("seq", "payload")
    )
    records = []
    for expected_seq, (seq, payload) in enumerate(rows, 1):
        if seq != expected_seq:
            yield f"record seq {seq} found where {expected_seq} was expected (gap)"
        try:
            record = parse_record(payload)
        except ValidationError as exc:
            yield f"record seq {seq} has an invalid payload: {exc}"
            continue
        if record.operation_id != op.id:
            yield f"record seq {seq} belongs to operation {record.operation_id!r}"
        records.append(record)
    if op.record_count != len(rows):
        yield f"stored record_count {op.record_count}, but {len(rows)} records"
    try:
        log = fold_operation(records)
    except JournalError as exc:
        yield f"log is not recoverable: {exc}"
        return
    lost = [
        i
        for i in log.inputs
        if i.input_entry_id not in evidence.entry_ids
        and log.finished is not None
        and log.finished.outcome != "interrupted"
    ]
    for queued in lost:
        yield (
            f"input {queued.input_id!r} was accepted but never written to the tree "
            f"(operation finished {log.finished.outcome}): {queued.text!r}"
        )
    try:
        verdict_for(log, evidence)
    except JournalError as exc:
        if not (lost and "has no entry" in str(exc)):  # said above, input by input
            yield f"log is not recoverable: {exc}"
        return
    folded = log.finished.outcome if log.finished else None
    if op.outcome != folded:
        yield f"stored outcome {op.outcome!r}, but the log says {folded!r}"


def journal_check_all() -> Iterator[SessionReport]:
    """Check every session, one at a time (a large database is never loaded at once)."""
    for session in ComicSession.objects.filter(deleting=False).order_by("created_at", "id"):
        yield session_check(session)
