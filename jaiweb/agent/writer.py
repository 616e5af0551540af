"""A run's writes: each one fenced transaction, checked against the log its step was decided on."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar

from django.utils import timezone

from jaiweb.agent.lease_keeper import LeaseKeeper
from jaiweb.agent.state import AppState
from jaiweb.store.services import run_append
from journal.entries import AppStateEntry, Entry, Message, MessageEntry
from journal.records import Record, RecordBase

R = TypeVar("R", bound=RecordBase)


class FencedWriter:
    """Appends for one run, tracking the leaf, the app state and the log version it knows.

    ``version`` is the seq of the last record the loop has seen (read, or written itself).
    A *checked* write names it, so a record that another writer appended meanwhile (a
    steering prompt, a stop, an approval) makes the store refuse the write with
    ``StaleLog``, nothing written, and the loop decides again. Facts about an effect that
    already happened (a streamed reply, its usage, a tool's result) are written unchecked:
    refusing them would lose what they record.
    """

    def __init__(
        self,
        *,
        operation_id: str,
        session_id: str,
        keeper: LeaseKeeper,
        emit: Callable[[dict[str, Any]], None],
        wrote: Callable[[Sequence[Entry], Sequence[Record]], None] = lambda e, r: None,
    ) -> None:
        self.operation_id = operation_id
        self.session_id = session_id
        self.keeper = keeper
        self.emit = emit
        self.wrote = wrote  # the run's view follows its own writes
        self.leaf: str | None = None
        self.state = AppState()
        self.version = 0

    def record(self, cls: type[R], **fields: Any) -> R:
        """Make a record of this run's operation, stamped now."""
        return cls(operation_id=self.operation_id, timestamp=timezone.now(), **fields)

    def message_entry(self, entry_id: str, message: Message) -> MessageEntry:
        """Make a message entry that goes under the current leaf."""
        return MessageEntry(
            id=entry_id, parent_id=self.leaf, timestamp=timezone.now(), message=message
        )

    def seen(self, version: int) -> None:
        """The log's length as the loop read it for the step it is about to take."""
        self.version = version

    def write(
        self,
        *,
        records: Sequence[Record] = (),
        entries: Sequence[Entry] = (),
        checked: bool = True,
        then: Sequence[Record] = (),
    ) -> bool:
        """Write records and entries in one transaction, and say whether ``then`` joined it.

        ``then`` holds the next step's first records and goes with an unchecked write only. They
        are committed with it if the log is still the one the loop knows. Return False when they
        were left out: someone wrote meanwhile, so the loop reads and decides again."""
        assert not (then and checked), "then-records are checked alone"
        self.keeper.renew_if_due()
        records, entries, then = list(records), list(entries), list(then)
        joined = run_append(
            operation_id=self.operation_id,
            fencing=self.keeper.fencing,
            records=records,
            entries=entries,
            expected_leaf_id=self.leaf,
            session_id=self.session_id,
            expected_seq=self.version if checked or then else None,
            then=then,
            now=timezone.now(),
        )
        written = [*records, *then] if joined else records
        self.version += len(written)
        self.wrote(entries, written)
        for entry in entries:
            self.leaf = entry.id
            if isinstance(entry, AppStateEntry):
                self.state = AppState.of(entry.value)
            self.emit({"type": "entry_committed", "entry": entry.model_dump(mode="json")})
        return joined


class FactsWrite(Protocol):
    """Writes the facts of an effect that happened, with the next step's first records if they join.

    ``OperationRun.write_facts_and_begin_next`` is the one such write."""

    def __call__(self, *, entries: list[Entry], records: list[Record]) -> None: ...
