"""Writes to the two journals. Each service is one transaction: all of it commits, or nothing.

Writes from web requests (prompts, navigation, stop, approvals) hold no lease; they lock
the session or operation row and check its state. A runner's writes go through
``run_append`` with its fencing number (see ``leases``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from pydantic import ValidationError

from jaiweb.prepared import Prepared, from_row, model_columns
from jaiweb.store.appends import append_entries, append_records, fencing_check
from jaiweb.store.errors import (
    InvalidEntry,
    LeaseLost,
    OperationNotFound,
    OperationStateConflict,
    PromptTooLong,
    SessionBusy,
    SessionNotFound,
    SessionParked,
    StaleLeaf,
    StaleLog,
)
from jaiweb.store.ids import new_id
from jaiweb.store.looks import looks_check
from jaiweb.store.models import ComicSession, Operation
from jaiweb.store.rows import index_of
from jaiweb.store.selectors import (
    app_state_at,
    branch_rows,
    entry_exists,
    entry_ids_among,
    operation_records,
)
from journal.appstate import UnreadableAppState, app_state_check
from journal.entries import AppStateEntry, MessageEntry, ToolResultMessage, UserMessage
from journal.entries import Entry as JournalEntry
from journal.errors import UnknownEntry
from journal.jsonvalues import check_json as _check_json
from journal.jsonvalues import check_text as _check_text
from journal.jsonvalues import json_copy
from journal.navigation import rewind_entry, state_keeping_characters
from journal.records import (
    ApprovalDecided,
    InputQueued,
    OperationAccepted,
    StopRequested,
    ToolResolved,
)
from journal.records import Record as JournalRecord
from journal.recovery import fold_operation


def check_text(value: str) -> str:
    """User text without NUL characters, or ``InvalidEntry`` saying so (nothing written)."""
    try:
        return _check_text(value)
    except ValueError as exc:
        raise InvalidEntry(str(exc)) from None


def check_json(value):
    """A JSON value as the journal can keep it, or ``InvalidEntry`` saying why not."""
    try:
        return _check_json(value)
    except ValueError as exc:
        raise InvalidEntry(str(exc)) from None


_LOCKED_SESSION = Prepared(
    lambda session_id: (
        ComicSession.objects.select_for_update()
        .filter(pk=session_id, deleting=False)
        .order_by("pk")
        .values_list(*model_columns(ComicSession))[:1]
    ),
    session_id=str,
)
_LOCKED_UNFINISHED = Prepared(
    lambda session_id: (
        Operation.objects.select_for_update()
        .filter(session_id=session_id, outcome__isnull=True)
        .order_by("pk")
        .values_list(*model_columns(Operation))[:1]
    ),
    session_id=str,
)


def _locked_session(session_id: str) -> ComicSession:
    session = from_row(ComicSession, _LOCKED_SESSION.first(session_id=session_id))
    if session is None:
        raise SessionNotFound(session_id)
    return session


def _locked_unfinished(session: ComicSession) -> Operation | None:
    return from_row(Operation, _LOCKED_UNFINISHED.first(session_id=session.pk))


def session_create(
    *,
    owner: Any,
    title: str,
    initial_app_state: dict | None = None,
    now: datetime | None = None,
) -> ComicSession:
    """A new, empty session; its initial state is one the agent can read (journal.appstate)
    whose characters' looks name only the owner's images (``ImageNotYours`` otherwise)."""
    now = now or timezone.now()
    title = check_text(title.strip())
    if not title or len(title) > 200:
        raise InvalidEntry("a title has 1 to 200 characters")
    state = {"characters": {}, "permission_mode": "ask"} if initial_app_state is None else None
    if state is None:
        try:
            app_state_check(initial_app_state)
        except UnreadableAppState as exc:
            raise InvalidEntry(f"initial_app_state: {exc}") from None
        state = json_copy(check_json(initial_app_state))  # the caller's dict stays theirs
        looks_check(owner_id=getattr(owner, "pk", owner), state=state)
    return ComicSession.objects.create(
        id=new_id("s"),
        owner=owner,
        title=title,
        initial_app_state=state,
        created_at=now,
        updated_at=now,
    )


def session_rename(*, session_id: str, title: str) -> ComicSession:
    title = check_text(title.strip())
    if not title or len(title) > 200:
        raise InvalidEntry("a title has 1 to 200 characters")
    with transaction.atomic():
        session = _locked_session(session_id)
        session.title = title
        session.save(update_fields=["title"])
    return session


def session_delete(*, session_id: str) -> None:
    """Delete a session and all its facts; refused while it has an unfinished operation."""
    with transaction.atomic():
        session = _locked_session(session_id)
        op = _locked_unfinished(session)
        if op is not None:
            raise SessionBusy(session_id, op.id, parked=op.is_parked)
        # The flag is what lets the append-only triggers release this session's rows.
        ComicSession.objects.filter(pk=session_id).update(deleting=True)
        session.refresh_from_db()
        session.delete()


def entry_append(
    *,
    session_id: str,
    entries: Sequence[JournalEntry],
    expected_leaf_id: str | None,
    now: datetime | None = None,
) -> int:
    """Append entries to an idle session (user edits, imports); returns the new leaf's seq.

    The checks run inside the append's own statement, so one entry is one round trip.
    """
    return append_entries(
        session_id,
        entries,
        expected_leaf_id=expected_leaf_id,
        now=now or timezone.now(),
        require_idle=True,
    )


@dataclass(frozen=True, slots=True)
class Rewind:
    leaf_id: str | None
    app_state: dict
    branch_entry: JournalEntry | None  # None when the target already was the leaf


def rewind_append(
    *,
    session_id: str,
    target_id: str,
    expected_leaf_id: str | None = None,
    entry_id: str | None = None,
    now: datetime | None = None,
    keep_characters: bool = False,
) -> Rewind:
    """Rewind or fork to any node: append a ``branch`` entry (nothing for the leaf itself).

    ``keep_characters`` ("story only: keep today's characters"): an ``app_state`` entry
    follows the branch entry in the same transaction, the target's state with the
    characters the leaf had, so the story goes back and the characters stay as they are.
    No such entry when the target has those characters already."""
    now = now or timezone.now()
    with transaction.atomic():
        session = _locked_session(session_id)
        op = _locked_unfinished(session)
        if op is not None:
            if op.is_parked:
                raise SessionParked(session_id, op.id)
            raise SessionBusy(session_id, op.id, parked=False)
        if expected_leaf_id is not None and expected_leaf_id != session.leaf_id:
            raise StaleLeaf(session_id, expected_leaf_id, session.leaf_id)
        if not entry_exists(session=session, entry_id=target_id):
            raise UnknownEntry(target_id)
        entry = rewind_entry(session.leaf_id, target_id, entry_id=entry_id or new_id("e"), now=now)
        if entry is None:
            return Rewind(session.leaf_id, app_state_at(session=session), entry)
        entries: list[JournalEntry] = [entry]
        if keep_characters:
            kept = state_keeping_characters(
                app_state_at(session=session, leaf_id=target_id), app_state_at(session=session)
            )
            if kept is not None:
                entries.append(
                    AppStateEntry(id=new_id("e"), parent_id=entry.id, timestamp=now, value=kept)
                )
        append_entries(session_id, entries, expected_leaf_id=session.leaf_id, now=now)
        session.leaf_id = entries[-1].id
        session.entry_count += len(entries)
        return Rewind(session.leaf_id, app_state_at(session=session), entry)


@dataclass(frozen=True, slots=True)
class Accepted:
    operation_id: str
    queued: bool
    input_entry_id: str  # the entry the text is (or will be) written under


def _on_active_branch(session: ComicSession, entry_id: str) -> bool:
    """The node is the leaf or one of its ancestors: a page that shows it was only behind
    on the same branch (a run it had not seen end yet), not on a branch left since."""
    if entry_id == session.leaf_id:
        return True
    return index_of(branch_rows(session=session, lazy=True), entry_id) is not None


def operation_accept(
    *,
    session_id: str,
    text: str,
    by: str = "user",
    expected_leaf_id: str | None = None,
    language: str = "",
    now: datetime | None = None,
    framing: int = 0,
) -> Accepted:
    """A prompt: starts an operation on an idle session, or queues as steering on a running one.

    ``language``: of the page it came from; a new operation narrates in it. ``framing``:
    characters the studio added around what the user typed (a variants request), which
    the prompt limit does not count.

    The user's message entry and ``operation_accepted`` commit together. Two prompts racing
    for an idle session queue behind the session row's lock: one starts, the other steers.
    ``expected_leaf_id`` is the leaf the sender's page shows: on an idle session that left
    that node's branch since (another tab rewound or forked), ``StaleLeaf`` and nothing is
    written; a page merely behind on the same branch continues from the leaf, and on a
    running session the prompt steers the run as usual.
    """
    now = now or timezone.now()
    limit = settings.JAIWEB_MAX_PROMPT_CHARS
    if len(text) - framing > limit:
        raise PromptTooLong(len(text) - framing, limit)
    if not text.strip():
        raise InvalidEntry("the prompt is empty")
    check_text(text)
    with transaction.atomic():  # in a caller's transaction, a refusal leaves it usable
        session = _locked_session(session_id)
        op = _locked_unfinished(session)
        if op is None:
            if expected_leaf_id is not None and not _on_active_branch(session, expected_leaf_id):
                raise StaleLeaf(session_id, expected_leaf_id, session.leaf_id)
            op_id, entry_id = new_id("op"), new_id("e")
            entry = MessageEntry(
                id=entry_id,
                parent_id=session.leaf_id,
                timestamp=now,
                message=UserMessage(content=text),
            )
            append_entries(  # no savepoint of its own: a refusal refuses this prompt whole
                session_id, [entry], expected_leaf_id=session.leaf_id, now=now, savepoint=False
            )
            Operation.objects.create(
                id=op_id,
                session=session,
                kind="prompt",
                created_at=now,
                language=language[:16] or None,
            )
            accepted = OperationAccepted(
                operation_id=op_id,
                timestamp=now,
                input_entry_id=entry_id,
                start_leaf_id=session.leaf_id,
            )
            append_records(op_id, [accepted], fencing=None, now=now)
            return Accepted(op_id, queued=False, input_entry_id=entry_id)
        if op.is_parked:
            raise SessionParked(session_id, op.id)
        queued = InputQueued(
            operation_id=op.id,
            timestamp=now,
            input_id=new_id("in"),
            input_entry_id=new_id("e"),
            text=text,
        )
        append_records(op.id, [queued], fencing=None, now=now)
        return Accepted(op.id, queued=True, input_entry_id=queued.input_entry_id)


def _locked_running(operation_id: str) -> Operation:
    op = Operation.objects.select_for_update().filter(pk=operation_id).first()
    if op is None:
        raise OperationNotFound(operation_id)
    if op.outcome is not None:
        raise OperationStateConflict(f"operation {operation_id!r} is finished ({op.outcome})")
    return op


def operation_stop_request(*, operation_id: str, by: str, now: datetime | None = None) -> None:
    """Ask the run to stop at its next safe point; refused unless it is running."""
    now = now or timezone.now()
    with transaction.atomic():
        op = _locked_running(operation_id)
        if op.is_parked:
            raise SessionParked(op.session_id, op.id)
        if fold_operation(operation_records(operation_id=op.id)).stop is not None:
            return  # asked already: stopping twice is stopping once
        stop = StopRequested(operation_id=op.id, timestamp=now, by=by)
        append_records(op.id, [stop], fencing=None, now=now, waiting_end=True)


def operation_approval_decide(
    *,
    operation_id: str,
    tool_call_id: str,
    decision: str,
    by: str,
    auto_from_now: bool = False,
    now: datetime | None = None,
) -> None:
    """Record a decision for a call that is awaiting one; refused otherwise."""
    now = now or timezone.now()
    with transaction.atomic():
        op = _locked_running(operation_id)
        log = fold_operation(operation_records(operation_id=op.id))
        call = log.calls.get(tool_call_id)
        if call is None or call.approval != "pending":
            raise OperationStateConflict(f"call {tool_call_id!r} is not awaiting a decision")
        record = ApprovalDecided(
            operation_id=op.id,
            timestamp=now,
            tool_call_id=tool_call_id,
            decision=decision,
            auto_from_now=auto_from_now,
            by=by,
        )
        append_records(op.id, [record], fencing=None, now=now, waiting_end=True)


def run_append(
    *,
    operation_id: str,
    fencing: int,
    records: Sequence[JournalRecord] = (),
    entries: Sequence[JournalEntry] = (),
    expected_leaf_id: str | None = None,
    session_id: str | None = None,
    expected_seq: int | None = None,
    then: Sequence[JournalRecord] = (),
    now: datetime | None = None,
) -> bool:
    """A runner's write: entries and records of its run in one transaction, fenced.

    Refused with ``LeaseLost`` when another runner has claimed the operation since, and
    with ``StaleLog`` when ``expected_seq`` is given and the log has grown past it (a
    person's write came between the runner's read and this append); then nothing is
    written. Locks the session row before the operation row, in the same order as the
    web's writes, so the two never deadlock. A runner that knows its session passes
    ``session_id`` and saves a lookup.

    ``then``: the first records of the step the runner decided from what this write
    leaves (a T1, a ``model_attempted``, the finish), appended after ``records`` only if
    the log still ends at ``expected_seq`` (which then checks them alone); otherwise the
    rest is written without them. True when ``then`` went in (or there was none).
    """
    now = now or timezone.now()
    with transaction.atomic():
        if entries:
            if session_id is None:
                session_id = (
                    Operation.objects.filter(pk=operation_id)
                    .values_list("session_id", flat=True)
                    .first()
                )
                if session_id is None:
                    raise OperationNotFound(operation_id)
            append_entries(
                session_id, entries, expected_leaf_id=expected_leaf_id, now=now, savepoint=False
            )
        if then:
            try:
                append_records(
                    operation_id,
                    [*records, *then],
                    fencing=fencing,
                    now=now,
                    expected_seq=expected_seq,
                )
                return True
            except StaleLog:  # the refusing UPDATE changed nothing: the rest goes in alone
                expected_seq = None
        if records:
            append_records(
                operation_id, records, fencing=fencing, now=now, expected_seq=expected_seq
            )
        else:
            fencing_check(operation_id, fencing, expected_seq)
    return not then


def operation_park(
    *, operation_id: str, fencing: int, reason: str, now: datetime | None = None
) -> None:
    """Hand the operation to the recovery inbox: it keeps no lease while an admin decides."""
    with transaction.atomic():
        parked = (
            Operation.objects.select_for_update()
            .filter(pk=operation_id, fencing=fencing, outcome__isnull=True)
            .update(
                parked_at=now or timezone.now(),
                attention=reason[:500],
                lease_owner=None,
                lease_expires_at=None,
            )
        )
        if not parked:
            raise LeaseLost(operation_id, fencing)


def operation_tool_resolve(
    *,
    operation_id: str,
    tool_call_id: str,
    resolution: str,
    by: str,
    reason: str,
    content: str = "",
    details: dict | None = None,
    resolved_by: str = "admin",
    evidence: dict | None = None,
    fencing: int | None = None,
    now: datetime | None = None,
) -> MessageEntry | None:
    """A decision on an open call, committed with its consequence; returns the result entry
    it wrote (None for ``retry``).

    ``retry``: the call awaits a new dispatch under the same key. ``confirmed``: the
    effect happened; ``content``/``details`` become its result entry. ``failed``: an error
    result (``content``, or one saying the outcome is unknown and was not repeated).

    An admin (``fencing`` None) decides a call of a parked operation; the operation leaves
    the inbox once none of its calls is open, and a runner takes it from there. The
    reconciler decides from evidence (``resolved_by="reconciler"``, with ``evidence``):
    inside a run, with the run's ``fencing`` (refused with ``LeaseLost`` once another
    runner holds it), or, like an admin, on a parked operation.
    """
    if resolution not in ("retry", "confirmed", "failed"):
        raise OperationStateConflict(f"unknown resolution {resolution!r}")
    reason = check_text(reason.strip())
    if not reason:
        raise InvalidEntry("a resolution needs a reason (it is kept in the journal)")
    now = now or timezone.now()
    with transaction.atomic():
        op = Operation.objects.select_related("session").filter(pk=operation_id).first()
        if op is None:
            raise OperationNotFound(operation_id)
        session = _locked_session(op.session_id)
        op = _locked_running(operation_id)
        if fencing is not None:
            if op.fencing != fencing or op.is_parked:
                raise LeaseLost(operation_id, fencing)
        elif not op.is_parked:
            raise OperationStateConflict(f"operation {operation_id!r} is not in the inbox")
        records = operation_records(operation_id=op.id)
        log = fold_operation(records)
        call = log.calls.get(tool_call_id)
        dispatch = call.dispatch if call else None
        present = entry_ids_among(
            session=session,
            ids=[d.result_entry_id for c in log.calls.values() for d in c.dispatches],
        )
        if dispatch is None or dispatch.result_entry_id in present or call.retry_after_dispatch:
            raise OperationStateConflict(f"call {tool_call_id!r} is not waiting in the inbox")
        try:
            resolved = ToolResolved(
                operation_id=op.id,
                timestamp=now,
                tool_call_id=tool_call_id,
                resolution=resolution,
                by=by,
                reason=reason,
                resolved_by=resolved_by,
                evidence=check_json(evidence) if evidence is not None else None,
            )
        except ValidationError as exc:
            raise InvalidEntry(f"the resolution cannot be kept: {exc.errors()[0]['msg']}") from None
        result = None
        if resolution != "retry":
            failed = resolution == "failed"
            result = MessageEntry(
                id=dispatch.result_entry_id,
                parent_id=session.leaf_id,
                timestamp=now,
                message=ToolResultMessage(
                    tool_call_id=tool_call_id,
                    tool_name=dispatch.tool_name,
                    content=check_text(content.strip())
                    or (
                        f"the outcome is unknown and it was not repeated ({reason})"
                        if failed
                        else f"confirmed by {by}: {reason}"
                    ),
                    is_error=failed,
                    details=check_json(details or {}),
                ),
            )
            append_entries(session.id, [result], expected_leaf_id=session.leaf_id, now=now)
            present.add(result.id)
        append_records(op.id, [resolved], fencing=fencing, now=now)
        still_open = [
            c
            for c in log.calls.values()
            if c.dispatch is not None
            and c.tool_call_id != tool_call_id
            and c.dispatch.result_entry_id not in present
            and not c.retry_after_dispatch
        ]
        if op.is_parked and not still_open:
            Operation.objects.filter(pk=op.id).update(parked_at=None, attention="")
    return result
