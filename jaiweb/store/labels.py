"""Labels and bookmarks on a session's nodes: add, remove, list (``Label`` says why they are
a side table and not entries)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db import IntegrityError, transaction
from django.utils import timezone

from jaiweb.prepared import Prepared
from jaiweb.store.errors import InvalidEntry, LabelNotFound
from jaiweb.store.models import Label
from jaiweb.store.selectors import entry_exists, session_get
from journal.errors import UnknownEntry
from journal.jsonvalues import check_text

TEXT_MAX = 80


@dataclass(frozen=True, slots=True)
class NodeLabel:
    id: int
    entry_id: str
    kind: str
    text: str
    created_at: datetime


def _out(label: Label) -> NodeLabel:
    return NodeLabel(label.id, label.entry_id, label.kind, label.text, label.created_at)


def label_add(
    *, session_id: str, entry_id: str, text: str, kind: str = "label", now=None
) -> NodeLabel:
    """A label (or a bookmark) on a node; the same one twice is the one that exists."""
    if kind not in Label.KINDS:
        raise InvalidEntry(f"kind is one of {', '.join(Label.KINDS)}")
    try:
        text = check_text(text.strip())
    except ValueError as exc:
        raise InvalidEntry(f"text: {exc}") from None
    if not text:
        raise InvalidEntry("a label (or a bookmark) has a text")
    if len(text) > TEXT_MAX:
        raise InvalidEntry(f"a label has at most {TEXT_MAX} characters")
    session = session_get(session_id=session_id)
    if not entry_exists(session=session, entry_id=entry_id):
        raise UnknownEntry(entry_id)
    try:
        with transaction.atomic():
            label = Label.objects.create(
                session=session,
                entry_id=entry_id,
                kind=kind,
                text=text,
                created_at=now or timezone.now(),
            )
    except IntegrityError:  # that very label exists already
        label = Label.objects.get(session=session, entry_id=entry_id, kind=kind, text=text)
    return _out(label)


def label_remove(*, session_id: str, label_id: int) -> None:
    deleted, _ = Label.objects.filter(session_id=session_id, pk=label_id).delete()
    if not deleted:
        raise LabelNotFound(label_id)


def labels_on(*, session_id: str, entry_ids: list[str]) -> list[NodeLabel]:
    """The labels and bookmarks on the given nodes, oldest first (the session's few labels
    are read and sorted out here: a page's hundreds of ids would make a long ``IN``)."""
    wanted = set(entry_ids)
    return [label for label in labels_of(session_id=session_id) if label.entry_id in wanted]


def labels_version(*, session_id: str) -> tuple[int, ...]:
    """What tells one set of a session's labels from another: their ids (a label never
    changes; it is added or removed). Part of what a cached drawing of the tree shows."""
    return tuple(row[0] for row in _LABEL_IDS.rows(session_id=session_id))


def labels_of(*, session_id: str) -> list[NodeLabel]:
    """Every label and bookmark of the session, oldest first."""
    return [NodeLabel(*row) for row in _LABELS.rows(session_id=session_id)]


_LABEL_IDS = Prepared(
    lambda session_id: Label.objects.filter(session_id=session_id).order_by("id").values_list("id"),
    session_id=str,
)
_LABELS = Prepared(
    lambda session_id: (
        Label.objects.filter(session_id=session_id)
        .order_by("id")
        .values_list("id", "entry_id", "kind", "text", "created_at")
    ),
    session_id=str,
)
