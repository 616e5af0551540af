"""What a run knows of its operation between reads: read once, then followed by its own writes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from journal import steps
from journal.entries import AssistantMessage, Entry, MessageEntry
from journal.records import Record
from journal.recovery import RecoveryEvidence


@dataclass(frozen=True, slots=True)
class View:
    """The records, which of the entries they name exist (and which replies are final), and
    the active branch, as a read found them plus what the run wrote since.

    Only the runner writes entries while it holds the lease; a person's writes are records
    (a prompt, a stop, a decision), and the run's next checked write refuses them as stale
    (``StaleLog``). So a step decided from the view is acted on only when its first write
    is checked (``acted_on_from_view``); otherwise the loop reads again.
    """

    records: tuple[Record, ...]
    evidence: RecoveryEvidence
    branch: tuple[Entry, ...]

    def extended(self, entries: Sequence[Entry], records: Sequence[Record]) -> View:
        ids = set(self.evidence.entry_ids)
        final = dict(self.evidence.final_assistant_entries)
        for entry in entries:
            ids.add(entry.id)
            message = entry.message if isinstance(entry, MessageEntry) else None
            if isinstance(message, AssistantMessage) and message.is_final:
                final[entry.id] = message.stop_reason
        return View(
            (*self.records, *records),
            RecoveryEvidence(entry_ids=frozenset(ids), final_assistant_entries=final),
            (*self.branch, *entries),
        )


def acted_on_from_view(step: steps.Step) -> bool:
    """Whether the step's first write is checked against the log (so a stale view fails it).

    A compaction is written unchecked and a park is not a journal write; an approval
    already asked for writes nothing until it is decided: those are decided from a read.
    """
    if isinstance(step, steps.Compact | steps.Park):
        return False
    return not (isinstance(step, steps.HandleCall) and step.approval == "pending")
