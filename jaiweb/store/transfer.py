"""Export and import of one session as a session file (``journal.session_file``).

The export streams the file from the database: the entries, the operations' records, the
labels and, when asked for, the panel images the entries name (a bundle, docs/BUNDLES.md).
An import reads and checks the whole file first (the pure core's readers: a jaiweb file
of any readable version, or a pi or Claude Code session), then writes it in one
transaction: entries keep their ids, the session and its operations get new ones, and
images keep theirs unless another image has it (then each gets a derived one, written
wherever the entries name it). An import charges nothing and grants nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import datetime
from itertools import count, islice
from typing import Any, Literal

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import Model, Q
from django.utils import timezone
from django.utils.translation import gettext_lazy
from pydantic import AwareDatetime, TypeAdapter

from jaiweb.render.imports import image_bytes, image_import, images_known, images_of_owner
from jaiweb.store.chains import chain_positions
from jaiweb.store.errors import BundleTooLarge, ImportConflict, ImportRefused, SessionNotFound
from jaiweb.store.ids import new_id
from jaiweb.store.models import ComicSession, Entry, Label, Operation, OperationRecord
from journal import ids as journal_ids
from journal.entries import (
    entry_to_dict,
    parse_entry,
)
from journal.importers import session_read
from journal.records import (
    OperationFinished,
    ToolDispatched,
    ToolResolved,
    parse_record,
    record_to_dict,
)
from journal.records import Record as JournalRecord
from journal.session_file import (
    IMAGE_TYPES,
    FileRefused,
    SessionFile,
    header_line,
    image_line,
    images_mentioned,
    images_named,
    images_renamed,
    label_line,
    renamed_image_id,
)

# How many derived ids an image may try before the import is refused (each is a fresh
# 80-bit hash: a second one taken already would take a deliberate collision).
RENAME_ATTEMPTS = 8


def max_bundle_bytes() -> int:
    return settings.JAIWEB_MAX_BUNDLE_BYTES


BATCH = 2000
_timestamp: TypeAdapter[datetime] = TypeAdapter(AwareDatetime)


# -- export -------------------------------------------------------------------------


def session_export(*, session: ComicSession, images: bool = False) -> Iterator[str]:
    """The session as canonical JSON lines (no trailing newlines), streamed from the database.

    Operations are listed before the session row is read: every entry their records
    name was committed by then, so the file is a consistent prefix even while the
    session grows; rows appended meanwhile are left out, and so are labels on them.
    With ``images``, the panel images the entries name follow, those of the session's
    owner whose file is there (an image of someone else's is never exported).
    """
    operations = dict(
        Operation.objects.filter(session_id=session.pk)
        .order_by("created_at", "id")
        .values_list("id", "record_count")
    )
    row = (
        ComicSession.objects.filter(pk=session.pk, deleting=False)
        .values(
            "id",
            "owner_id",
            "title",
            "initial_app_state",
            "leaf_id",
            "entry_count",
            "created_at",
            "updated_at",
        )
        .first()
    )
    if row is None:
        raise SessionNotFound(session.pk)
    owner_id = row.pop("owner_id")
    in_file = Entry.objects.filter(session_id=session.pk, seq__lte=row["entry_count"])
    labels = list(Label.objects.filter(session_id=session.pk).order_by("id"))
    if labels:
        present = set(
            in_file.filter(entry_id__in={label.entry_id for label in labels}).values_list(
                "entry_id", flat=True
            )
        )
        labels = [label for label in labels if label.entry_id in present]
    image_ids = _images_to_export(in_file, row["initial_app_state"], owner_id) if images else []

    yield header_line(
        {
            **row,
            "created_at": _timestamp.dump_python(row["created_at"], mode="json"),
            "updated_at": _timestamp.dump_python(row["updated_at"], mode="json"),
            "operation_count": len(operations),
        },
        label_count=len(labels),
        image_count=len(image_ids),
    )

    entries = in_file.order_by("seq").values_list("payload", flat=True)
    for payload in entries.iterator(chunk_size=BATCH):
        yield journal_ids.canonical_json(entry_to_dict(parse_entry(payload)))

    records = (
        OperationRecord.objects.filter(operation__session_id=session.pk)
        .order_by("operation__created_at", "operation_id", "seq")
        .values_list("operation_id", "seq", "payload")
    )
    for operation_id, seq, payload in records.iterator(chunk_size=BATCH):
        if seq <= operations.get(operation_id, 0):
            yield journal_ids.canonical_json(record_to_dict(parse_record(payload)))

    for label in labels:
        yield label_line(
            entry_id=label.entry_id, kind=label.kind, text=label.text, created_at=label.created_at
        )
    for image_id in image_ids:  # one in memory at a time
        found = image_bytes(image_id=image_id, owner_id=owner_id)
        if found is None:  # images are never deleted: a file gone now is a broken disk
            raise RuntimeError(f"image {image_id!r} disappeared during the export")
        content_type, data = found
        yield image_line(image_id=image_id, content_type=content_type, data=data)


def _images_to_export(in_file, initial_app_state: dict, owner_id: Any) -> list[str]:
    """The images the exported session names (its panels, its characters' looks) that are
    the owner's and still on disk."""
    rows = (
        in_file.filter(
            Q(type="message", payload__message__details__has_key="image_id") | Q(type="app_state")
        )
        .order_by("seq")
        .values_list("payload", flat=True)
    )
    named = images_named(
        (parse_entry(payload) for payload in rows.iterator(chunk_size=BATCH)), initial_app_state
    )
    return images_of_owner(ids=named, owner_id=owner_id)


# -- import -------------------------------------------------------------------------


def session_import(
    *,
    owner: Any,
    lines: Iterable[str | bytes],
    max_bytes: int | Literal["setting"] | None = "setting",
    title_format: str = "%(title)s",
) -> ComicSession:
    """Make a new session of ``owner`` from a session file.

    The file may be in any format ``journal.importers`` reads. Raise ``ImportRefused`` when it
    is invalid; nothing is written then. Raise ``BundleTooLarge`` when it passes ``max_bytes``,
    which defaults to the ``JAIWEB_MAX_BUNDLE_BYTES`` setting; None means no limit.

    ``title_format`` makes the new session's title from the file's (``%(title)s``). The page
    and the API say "… (imported)" in the user's language, so the copy is told apart from its
    source in the sessions list. The command, an admin's restore, keeps the title as it is.

    ``lines`` may be bytes, from a file opened in binary mode. Each line is decoded as UTF-8 on
    its own, so a bad byte is reported at its line."""
    limit = max_bundle_bytes() if max_bytes == "setting" else max_bytes
    try:
        parsed = session_read(lines if limit is None else _capped(lines, limit))
    except FileRefused as exc:
        raise ImportRefused(exc.line_no, exc.reason) from exc
    return _write(owner=owner, parsed=parsed, title_format=title_format)


TITLE_MAX = 200  # ComicSession.title
# The title of an imported session, in the language active when it is made into a str.
IMPORTED_TITLE = gettext_lazy("%(title)s (imported)")


def imported_title(title: str, title_format: str) -> str:
    """The title made by ``title_format`` from ``title``, the source's cut at a word so that
    the whole fits the column."""
    made = title_format % {"title": title}
    if len(made) <= TITLE_MAX:
        return made
    room = TITLE_MAX - (len(made) - len(title)) - 1
    return title_format % {"title": title[: max(room, 0)].rstrip() + "…"}


def _capped(lines: Iterable[str | bytes], limit: int) -> Iterator[str | bytes]:
    total = 0
    for line in lines:
        total += len(line) if isinstance(line, bytes) else len(line.encode("utf-8", "replace"))
        if total > limit:
            raise BundleTooLarge(limit)
        yield line


def _batches(items: Iterable[Any], size: int = BATCH) -> Iterator[list[Any]]:
    iterator = iter(items)
    while batch := list(islice(iterator, size)):
        yield batch


def _insert(model: type[Model], columns: list[str], rows: Iterable[tuple]) -> None:
    """Insert many rows fast: ``bulk_create`` spent 6 of a 100k-entry import's 9 s building
    model instances; on PostgreSQL, COPY beats both that and a round trip per row.
    """
    quote = connection.ops.quote_name
    table = quote(model._meta.db_table)
    names = ", ".join(quote(model._meta.get_field(c).column) for c in columns)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            with cursor.cursor.copy(f"COPY {table} ({names}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
            return
        values = ", ".join(["%s"] * len(columns))
        for batch in _batches(rows):
            cursor.executemany(f"INSERT INTO {table} ({names}) VALUES ({values})", batch)


_ENTRY_COLUMNS = [
    *("session", "seq", "entry_id", "parent_id", "type", "payload", "timestamp"),
    *("chain", "chain_pos"),
]


def _write(*, owner: Any, parsed: SessionFile, title_format: str) -> ComicSession:
    header = parsed.header
    ops = connection.ops
    # Sorted fresh ids, given out in file order: operations created at the same instant
    # keep their order on the next export (ordered by created_at, then id).
    new_ids = sorted(new_id("op") for _ in parsed.operations)
    with transaction.atomic():
        reused, renames = _image_ids(owner, parsed)
        parsed = images_renamed(parsed, renames)
        _check_images_reachable(owner, parsed)
        links = ((e.id, e.parent_id) for e in parsed.entries)
        session = ComicSession.objects.create(
            id=new_id("s"),
            owner=owner,
            title=imported_title(header.title, title_format),
            initial_app_state=header.initial_app_state,
            leaf_id=header.leaf_id,
            entry_count=len(parsed.entries),
            created_at=header.created_at,
            updated_at=header.updated_at,
        )
        _insert(
            Entry,
            _ENTRY_COLUMNS,
            (
                (
                    session.id,
                    seq,
                    entry.id,
                    entry.parent_id,
                    entry.type,
                    ops.adapt_json_value(entry_to_dict(entry), None),
                    ops.adapt_datetimefield_value(entry.timestamp),
                    *chain,
                )
                for seq, entry, chain in zip(
                    count(1), parsed.entries, chain_positions(links), strict=False
                )
            ),
        )
        operations = []
        for op_id, op in zip(new_ids, parsed.operations, strict=True):
            accepted, finished = op.records[0], op.records[-1]
            assert isinstance(finished, OperationFinished)
            operations.append(
                Operation(
                    id=op_id,
                    session=session,
                    kind=accepted.kind,
                    created_at=accepted.timestamp,
                    record_count=len(op.records),
                    outcome=finished.outcome,
                    finished_at=finished.timestamp,
                )
            )
        Operation.objects.bulk_create(operations, batch_size=BATCH)
        _insert(
            OperationRecord,
            ["operation", "seq", "type", "payload", "timestamp"],
            (
                (
                    op_id,
                    seq,
                    record.type,
                    ops.adapt_json_value(record_to_dict(_moved_record(record, op_id)), None),
                    ops.adapt_datetimefield_value(record.timestamp),
                )
                for op_id, op in zip(new_ids, parsed.operations, strict=True)
                for seq, record in enumerate(op.records, 1)
            ),
        )
        Label.objects.bulk_create(
            [
                Label(
                    session=session,
                    entry_id=label.entry_id,
                    kind=label.kind,
                    text=label.text,
                    created_at=label.created_at,
                )
                for label in parsed.labels
            ],
            batch_size=BATCH,
        )
        # Last, so that a refusal above writes no file.
        now = timezone.now()
        for image in parsed.images:
            if image.id in reused:
                continue
            try:
                with transaction.atomic():
                    image_import(
                        user=owner,
                        image_id=image.id,
                        content_type=image.content_type,
                        extension=IMAGE_TYPES[image.content_type],
                        data=image.data,
                        now=now,
                        source=f"session {session.id}",
                    )
            except IntegrityError as exc:
                raise ImportConflict(image.id) from exc
    return session


def _image_ids(owner: Any, parsed: SessionFile) -> tuple[set[str], dict[str, str]]:
    """Which of the file's images are the importer's already (the same bytes under the same
    id: kept as they are), and the new id of each whose id is taken by another image.

    An image keeps its id when no image has it. When one has it — someone else's, or
    other bytes — it takes ``renamed_image_id`` (attempt 1, 2, …), the first that is free
    or is that very image of the importer's already: the same file imported twice by one
    person gives the same ids, and entries only change where an image had to move.
    """
    if not parsed.images:
        return set(), {}
    bundle_ids = {image.id for image in parsed.images}
    owner_key = str(owner.pk)
    candidates = {
        image.id: [
            image.id,
            *(
                renamed_image_id(image.id, image.sha256, owner_key, attempt)
                for attempt in range(1, RENAME_ATTEMPTS + 1)
            ),
        ]
        for image in parsed.images
    }
    known = images_known(ids=[c for ids in candidates.values() for c in ids])
    reused: set[str] = set()
    renames: dict[str, str] = {}
    taken: set[str] = set()
    for image in parsed.images:
        for candidate in candidates[image.id]:
            if candidate in taken or (candidate != image.id and candidate in bundle_ids):
                continue
            there = known.get(candidate)
            if there is None or (there.user_id == owner.pk and there.sha256 == image.sha256):
                if there is not None:
                    reused.add(candidate)
                if candidate != image.id:
                    renames[image.id] = candidate
                taken.add(candidate)
                break
        else:
            raise ImportRefused(
                image.line_no, f"image {image.id!r}: no free id after {RENAME_ATTEMPTS} attempts"
            )
    return reused, renames


def _check_images_reachable(owner: Any, parsed: SessionFile) -> None:
    """Refuse a file that names an image it does not carry and the importer does not own.

    An image id works like a key to its bytes wherever the studio shows a panel, so an
    import may only name the images of its own bundle or images of the importer's; any
    other id (another user's, or none at all) is refused at its line, before any write."""
    mentions = images_mentioned(parsed)
    if not mentions:
        return
    carried = {image.id for image in parsed.images}
    outside = list(dict.fromkeys(m.image_id for m in mentions if m.image_id not in carried))
    owned = set(images_of_owner(ids=outside, owner_id=owner.pk)) if outside else set()
    for mention in mentions:
        if mention.image_id not in carried and mention.image_id not in owned:
            raise ImportRefused(
                mention.line_no,
                f"image {mention.image_id!r} is neither in this file nor one of yours",
            )


def _moved_record(record: JournalRecord, operation_id: str) -> JournalRecord:
    """The record under its new operation id, with the key derived from it again."""
    update: dict[str, Any] = {"operation_id": operation_id}
    if isinstance(record, ToolDispatched):
        update["idempotency_key"] = journal_ids.idempotency_key(operation_id, record.tool_call_id)
    if isinstance(record, ToolResolved) and "idempotency_key" in (record.evidence or {}):
        # the reconciler's evidence names the call's key: it moves with it
        key = journal_ids.idempotency_key(operation_id, record.tool_call_id)
        update["evidence"] = {**record.evidence, "idempotency_key": key}
    return record.model_copy(update=update)
