"""A run's writes: each one fenced transaction, checked against the log its step was decided on."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from django.utils import timezone

from jaiweb.agent.lease_keeper import LeaseKeeper
from jaiweb.agent.state import AppState
from jaiweb.store.services import run_append
from journal.entries import AppStateEntry, Entry
from journal.records import Record


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
    ) -> None:
        self.operation_id = operation_id
        self.session_id = session_id
        self.keeper = keeper
        self.emit = emit
        self.leaf: str | None = None
        self.state = AppState()
        self.version = 0

    def seen(self, version: int) -> None:
        """The log's length as the loop read it for the step it is about to take."""
        self.version = version

    def write(
        self,
        *,
        records: Sequence[Record] = (),
        entries: Sequence[Entry] = (),
        checked: bool = True,
    ) -> None:
        self.keeper.renew_if_due()
        run_append(
            operation_id=self.operation_id,
            fencing=self.keeper.fencing,
            records=list(records),
            entries=list(entries),
            expected_leaf_id=self.leaf,
            session_id=self.session_id,
            expected_seq=self.version if checked else None,
            now=timezone.now(),
        )
        self.version += len(records)
        for entry in entries:
            self.leaf = entry.id
            if isinstance(entry, AppStateEntry):
                self.state = AppState.of(entry.value)
            self.emit({"type": "entry_committed", "entry": entry.model_dump(mode="json")})
