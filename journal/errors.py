"""Errors of the journal core. Each one names what it found, so a report can be acted on."""

from __future__ import annotations


class JournalError(Exception):
    """Base of every error the pure core raises."""


class BrokenSessionTree(JournalError):
    """The session's entries do not form a tree that reaches the root from the leaf."""

    def __init__(self, reason: str, *, leaf_id: str | None = None, entry_id: str | None = None):
        self.reason = reason
        self.leaf_id = leaf_id
        self.entry_id = entry_id
        where = f" at leaf {leaf_id!r}" if leaf_id is not None else ""
        what = f" (entry {entry_id!r})" if entry_id is not None else ""
        super().__init__(f"broken session tree{where}: {reason}{what}")


class UnknownEntry(JournalError, LookupError):
    """An entry id that is not in the session."""

    def __init__(self, entry_id: str):
        self.entry_id = entry_id
        super().__init__(f"unknown entry {entry_id!r}")

    def __str__(self) -> str:  # LookupError would quote the message again
        return self.args[0]


class CorruptedOperationLog(JournalError):
    """An operation log that no correct run of the loop could have written."""

    def __init__(self, reason: str, *, operation_id: str | None = None):
        self.reason = reason
        self.operation_id = operation_id
        where = f" {operation_id!r}" if operation_id is not None else ""
        super().__init__(f"corrupted operation log{where}: {reason}")
