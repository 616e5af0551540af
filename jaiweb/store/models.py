"""The two journals as tables.

Entries and operation records are facts: once written they never change and are never
removed, except when their whole session is deleted at its owner's request. Database
triggers (migration 0002) enforce that below the ORM; the ORM refuses it above.
Columns that repeat a fold — a session's leaf and entry count, an operation's outcome
and record count — are written in the same transaction as the fact they derive from.
"""

from __future__ import annotations

from typing import Any, Literal

from django.conf import settings
from django.db import models
from django.db.models import Q

from journal.entries import Entry as JournalEntry
from journal.entries import parse_entry
from journal.records import Record as JournalRecord
from journal.records import parse_record


class AppendOnlyError(Exception):
    """Raised by the ORM when code tries to change or remove a journal fact."""


class AppendOnlyQuerySet(models.QuerySet):
    """Bulk ``update()`` and ``delete()`` are refused: facts are appended, never rewritten."""

    def update(self, **kwargs: Any) -> int:
        raise AppendOnlyError(f"{self.model.__name__} rows are append-only: update() refused")

    def delete(self) -> tuple[int, dict[str, int]]:
        raise AppendOnlyError(f"{self.model.__name__} rows are append-only: delete() refused")


class AppendOnlyModel(models.Model):
    """A row that can be inserted once and then only read."""

    objects = AppendOnlyQuerySet.as_manager()

    class Meta:
        abstract = True

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self._state.adding:
            raise AppendOnlyError(f"{type(self).__name__} rows are append-only: save() refused")
        kwargs["force_insert"] = True
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        raise AppendOnlyError(f"{type(self).__name__} rows are append-only: delete() refused")


class ComicSession(models.Model):
    """One comic episode: a tree of entries with a stored leaf."""

    id = models.CharField(primary_key=True, max_length=40)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="comic_sessions"
    )
    title = models.CharField(max_length=200)
    initial_app_state = models.JSONField()
    # Folds of the entries, written with each append: the entry appended last, and how many.
    leaf_id = models.CharField(max_length=128, null=True, blank=True)
    entry_count = models.PositiveIntegerField(default=0)
    # Set in the transaction that deletes the session: the triggers let its facts go.
    deleting = models.BooleanField(default=False)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()
    # Where the session came from, when not made empty: {"forked_from": {"session_id",
    # "entry_id"}} for a fork. Written once, at creation.
    origin = models.JSONField(null=True, blank=True)

    # No index may cover leaf_id, entry_count or updated_at: every append rewrites them,
    # and on PostgreSQL an unindexed update stays on its page (HOT), which keeps appends cheap.

    def __str__(self) -> str:
        return f"{self.title} ({self.id})"

    def save(self, *args: Any, **kwargs: Any) -> None:
        """A stale copy must never write back the leaf or the count: name the fields."""
        fields = kwargs.get("update_fields")
        if not self._state.adding and (fields is None or {"leaf_id", "entry_count"} & set(fields)):
            raise AppendOnlyError(
                "save an existing session with update_fields that leave leaf_id and "
                "entry_count alone: only appends move them"
            )
        super().save(*args, **kwargs)


class Entry(AppendOnlyModel):
    """A Session Journal entry; ``payload`` is the whole entry as JSON."""

    session = models.ForeignKey(ComicSession, on_delete=models.CASCADE, related_name="entries")
    seq = models.PositiveIntegerField()
    entry_id = models.CharField(max_length=128)
    parent_id = models.CharField(max_length=128, null=True, blank=True)
    type = models.CharField(max_length=16)
    payload = models.JSONField()
    timestamp = models.DateTimeField()
    # A fold of the tree that makes a path cheap to read: a node's first child continues its
    # chain (chain_pos + 1), any later child starts a chain of its own (chain = its seq).
    # A path root → leaf is then a few index range scans, one per fork it passes.
    chain = models.PositiveIntegerField()
    chain_pos = models.PositiveIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["session", "entry_id"], name="entry_id_per_session"),
            models.UniqueConstraint(fields=["session", "seq"], name="entry_seq_per_session"),
            models.UniqueConstraint(
                fields=["session", "chain", "chain_pos"], name="entry_chain_position"
            ),
        ]
        # A node's children in append order: (session, parent_id) alone let SQLite prefer
        # the (session, seq) index to skip the sort, and read the whole session.
        indexes = [
            models.Index(fields=["session", "parent_id", "seq"], name="entry_children"),
            # The heads of a session's chains (its root, each fork and rewind): the sessions
            # list counts a session's branches by them, not by reading every entry, and a
            # path read finds a chain's head by (session, chain) among them.
            models.Index(
                fields=["session", "chain"], condition=Q(chain_pos=0), name="entry_chain_head"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.entry_id} ({self.type})"

    def to_journal(self) -> JournalEntry:
        """The entry as the pure core's model."""
        return parse_entry(self.payload)


OperationState = Literal["running", "parked", "finished"]


def operation_state(*, outcome: str | None, parked_at: Any) -> OperationState:
    """The one rule for an operation's state, from its two columns (for bulk reads too)."""
    if outcome is not None:
        return "finished"
    return "parked" if parked_at is not None else "running"


class Operation(models.Model):
    """One run of the agent for a session: the claim and lease a runner needs, and folds."""

    id = models.CharField(primary_key=True, max_length=40)
    session = models.ForeignKey(ComicSession, on_delete=models.CASCADE, related_name="operations")
    kind = models.CharField(max_length=16, default="prompt")
    # The language of the page the prompt came from (a Django language code): the offline
    # director narrates in it, across crashes and restarts. Null: the settings' default.
    # (Nullable and without a default, so SQLite adds the column in place instead of
    # copying the table, which would break the append-only triggers on it.)
    language = models.CharField(max_length=16, null=True, blank=True)
    created_at = models.DateTimeField()
    # Folds of the records, written with each append.
    record_count = models.PositiveIntegerField(default=0)
    outcome = models.CharField(max_length=16, null=True, blank=True)  # set by operation_finished
    finished_at = models.DateTimeField(null=True, blank=True)
    # Who runs it. ``fencing`` grows with every claim; each fenced write checks it.
    lease_owner = models.CharField(max_length=200, null=True, blank=True)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    fencing = models.PositiveBigIntegerField(default=0)
    attempts = models.PositiveIntegerField(default=0)  # claims so far: a crash loop shows here
    # Set when the runner hands the operation to the recovery inbox: no lease while parked.
    parked_at = models.DateTimeField(null=True, blank=True)
    attention = models.CharField(max_length=500, blank=True)  # why it was parked, for admins
    # Set when the run waits for a person (an approval): no runner holds it, or a worker,
    # until the decision (or a stop) clears it in the transaction that records it.
    waiting_since = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["session"],
                condition=Q(outcome__isnull=True),
                name="one_unfinished_operation_per_session",
            )
        ]
        indexes = [
            models.Index(
                fields=["lease_expires_at"],
                condition=Q(outcome__isnull=True),
                name="operation_claimable",
            )
        ]

    def __str__(self) -> str:
        return f"{self.id} ({self.outcome or 'unfinished'})"

    @property
    def state(self) -> OperationState:
        """Running, parked (waiting for an admin) or finished."""
        return operation_state(outcome=self.outcome, parked_at=self.parked_at)

    @property
    def is_finished(self) -> bool:
        return self.state == "finished"

    @property
    def is_parked(self) -> bool:
        return self.state == "parked"

    @property
    def is_waiting(self) -> bool:
        """Waiting for a person's decision, with no runner on it."""
        return self.outcome is None and self.waiting_since is not None


class OperationRecord(AppendOnlyModel):
    """An Operation Journal record; ``payload`` is the whole record as JSON."""

    operation = models.ForeignKey(Operation, on_delete=models.CASCADE, related_name="records")
    seq = models.PositiveIntegerField()
    type = models.CharField(max_length=32)
    payload = models.JSONField()
    timestamp = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["operation", "seq"], name="record_seq_per_operation")
        ]
        indexes = [
            # The inbox's "settled automatically" list: the latest resolutions, newest first.
            models.Index(
                fields=["-timestamp"],
                name="record_resolutions",
                condition=models.Q(type="tool_resolved"),
            )
        ]

    def __str__(self) -> str:
        return f"{self.operation_id}#{self.seq} {self.type}"

    def to_journal(self) -> JournalRecord:
        return parse_record(self.payload)


class Label(models.Model):
    """A person's label or bookmark on a node: beside the journal, not in it.

    A label names a node, not a moment of the story, so it is not an entry: an entry would
    sit on a path, move the leaf and roll back with a rewind, and a label must stay on its
    node whichever branch is active. Being no fact of the story, a label may be removed;
    the journals stay append-only. Exports carry labels beside the entries.
    """

    KINDS = ("label", "bookmark")

    id = models.BigAutoField(primary_key=True)
    session = models.ForeignKey(ComicSession, on_delete=models.CASCADE, related_name="labels")
    entry_id = models.CharField(max_length=128)
    kind = models.CharField(max_length=16, default="label")
    text = models.CharField(max_length=80)
    created_at = models.DateTimeField()

    class Meta:
        indexes = [models.Index(fields=["session", "entry_id"], name="label_node")]
        constraints = [
            models.UniqueConstraint(
                fields=["session", "entry_id", "kind", "text"], name="one_label_per_text"
            )
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.text!r} on {self.entry_id}"


class ShareLink(models.Model):
    """A read-only link pinned to one node: whoever holds its token sees that branch's strip.

    Only the token's SHA-256 is kept, so the table cannot be read back into links. The
    branch it shows never changes: entries are never rewritten, so root → ``leaf_id`` is
    the same path for ever. Revoking keeps the row (who shared what, and when).
    """

    id = models.BigAutoField(primary_key=True)
    session = models.ForeignKey(ComicSession, on_delete=models.CASCADE, related_name="shares")
    leaf_id = models.CharField(max_length=128)
    token_sha256 = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField()
    revoked_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"share of {self.session_id} at {self.leaf_id}"


class BranchRead(models.Model):
    """A person has opened a branch of a session: the reading state behind the tree's
    unread dots (issue 30).

    A branch is a chain of the tree (a run of first children, ``Entry.chain``), named here
    by its head's entry id, which an export and an import keep. It is each reader's own
    state, not a fact of the story: a side table, like labels, that no rewind moves and
    that the journals never see.
    """

    id = models.BigAutoField(primary_key=True)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="branches_read"
    )
    session = models.ForeignKey(ComicSession, on_delete=models.CASCADE, related_name="reads")
    head_id = models.CharField(max_length=128)  # the chain's head entry
    read_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["user", "session", "head_id"], name="one_read_per_branch"
            )
        ]

    def __str__(self) -> str:
        return f"user {self.user_id} read {self.head_id} of {self.session_id}"
