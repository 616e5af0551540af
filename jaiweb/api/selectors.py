"""Reads the API shows: the store's and the agent's selectors, shaped as the API's bodies."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from jaiweb.commands.status import session_status
from jaiweb.render.selectors import credits_view, ledger_for
from jaiweb.store.models import ComicSession, Operation
from jaiweb.store.rows import StoredEntry, parse_rows
from jaiweb.store.selectors import app_state_at, operation_reading, operation_records
from journal.entries import entry_to_dict
from journal.errors import CorruptedOperationLog


def sessions_of(*, owner: Any) -> list[ComicSession]:
    """The owner's sessions, the most recently changed first."""
    return list(
        ComicSession.objects.filter(owner=owner, deleting=False)
        .order_by("-updated_at", "-id")
        .only("id", "title", "leaf_id", "entry_count", "created_at", "updated_at")
    )


def session_detail(*, session: ComicSession) -> dict[str, Any]:
    """The session with the app state at its leaf and whether a run holds it."""
    status = session_status(session=session)
    return {
        "id": session.id,
        "title": session.title,
        "owner": session.owner.get_username(),
        "leaf_id": session.leaf_id,
        "entry_count": session.entry_count,
        "created_at": session.created_at,
        "updated_at": session.updated_at,
        "app_state": app_state_at(session=session),
        "state": status.state,
        "operation_id": status.operation_id,
        "parked_reason": status.parked_reason,
    }


def entries_out(rows: Iterable[StoredEntry]) -> list[dict[str, Any]]:
    """Entries as exported, each with its ``seq``."""
    rows = list(rows)
    parse_rows(rows)  # one pydantic call per entry type, not one per row
    return [{**entry_to_dict(row.entry), "seq": row.seq} for row in rows]


def operation_detail(*, operation: Operation) -> dict[str, Any]:
    """State, what recovery would decide now, and every record."""
    records = operation_records(operation_id=operation.id)
    try:
        verdict = operation_reading(
            operation_id=operation.id, session=operation.session, records=records
        ).verdict()
    except CorruptedOperationLog:
        verdict = None  # the records are still shown: they are what an admin needs
    return {
        "id": operation.id,
        "session_id": operation.session_id,
        "state": operation.state,
        "outcome": operation.outcome,
        "created_at": operation.created_at,
        "finished_at": operation.finished_at,
        "parked_reason": operation.attention or None,
        "verdict": verdict,
        "records": records,
    }


def wallet_of(*, user: Any) -> dict[str, Any]:
    """The balance (what the user can spend: ``wallet_balance``), the monthly top-up, how
    many panels are left, the open ask for credits and the ledger, newest first."""
    view = credits_view(user=user)
    return {
        "balance": view.balance,
        "monthly_topup": view.monthly_topup,
        "panel_cost": view.panel_cost,
        "level": view.level,
        "open_request": view.open_request,
        "ledger": ledger_for(user=user),
    }
