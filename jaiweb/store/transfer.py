"""Export and import of one session as canonical JSON lines (CONTRACT §5).

Line 1 is a header, then every entry in append order, then every operation's records
(operations in created order, each one's records in order). An import checks the whole
file before it writes anything, then writes it in one transaction: entries keep their
ids, the session and its operations get new ones.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from functools import reduce
from itertools import count, islice
from operator import or_
from typing import Annotated, Any, Literal, get_args

from django.db import connection, transaction
from django.db.models import Model
from pydantic import AwareDatetime, Field, TypeAdapter, ValidationError

from jaiweb.store.chains import chain_positions
from jaiweb.store.errors import SessionNotFound, StoreError
from jaiweb.store.ids import new_id
from jaiweb.store.models import ComicSession, Entry, Operation, OperationRecord
from journal import ids as journal_ids
from journal.entries import (
    AssistantMessage,
    EntryBase,
    Frozen,
    MessageEntry,
    NonNegative,
    entry_to_dict,
    parse_entry,
)
from journal.entries import Entry as JournalEntry
from journal.errors import JournalError
from journal.jsonvalues import Id, JsonObject, Text
from journal.records import (
    OperationFinished,
    ToolDispatched,
    parse_record,
    record_to_dict,
)
from journal.records import Record as JournalRecord
from journal.recovery import RecoveryEvidence, recover_operation
from journal.snapshot import SessionSnapshot, apply_entry

FORMAT = "jaiweb-session"
VERSION = 1
BATCH = 2000

_timestamp: TypeAdapter[datetime] = TypeAdapter(AwareDatetime)


def _models(annotated_union: Any) -> tuple[type[Any], ...]:
    """The models of ``Annotated[A | B | …, Field(discriminator=…)]``."""
    return get_args(get_args(annotated_union)[0])


def _type_tags(annotated_union: Any) -> frozenset[str]:
    return frozenset(model.model_fields["type"].default for model in _models(annotated_union))


ENTRY_TYPES = _type_tags(JournalEntry)
RECORD_TYPES = _type_tags(JournalRecord)
# Any line after the header: an entry or a record, told apart by ``type``.
_line_adapter: TypeAdapter[Any] = TypeAdapter(
    Annotated[
        reduce(or_, [*_models(JournalEntry), *_models(JournalRecord)]),
        Field(discriminator="type"),
    ]
)


class ImportRefused(StoreError):
    """The file cannot be imported; nothing was written."""

    code = "import_refused"

    def __init__(self, line_no: int, reason: str):
        self.line_no = line_no
        self.reason = reason
        super().__init__(f"line {line_no}: {reason}")


class SessionHeader(Frozen):
    id: Id
    title: Annotated[Text, Field(min_length=1, max_length=200)]
    initial_app_state: JsonObject
    leaf_id: Id | None
    created_at: AwareDatetime
    updated_at: AwareDatetime
    entry_count: NonNegative
    operation_count: NonNegative


class Header(Frozen):
    format: Literal["jaiweb-session"]
    version: Literal[1]
    session: SessionHeader


# -- export -------------------------------------------------------------------------


def session_export(*, session: ComicSession) -> Iterator[str]:
    """The session as canonical JSON lines (no trailing newlines), streamed from the database.

    Operations are listed before the session row is read: every entry their records
    name was committed by then, so the file is a consistent prefix even while the
    session grows; rows appended meanwhile are left out.
    """
    operations = dict(
        Operation.objects.filter(session_id=session.pk)
        .order_by("created_at", "id")
        .values_list("id", "record_count")
    )
    row = (
        ComicSession.objects.filter(pk=session.pk, deleting=False)
        .values(
            "id", "title", "initial_app_state", "leaf_id", "entry_count", "created_at", "updated_at"
        )
        .first()
    )
    if row is None:
        raise SessionNotFound(session.pk)
    header = {
        "format": FORMAT,
        "version": VERSION,
        "session": {
            **row,
            "created_at": _timestamp.dump_python(row["created_at"], mode="json"),
            "updated_at": _timestamp.dump_python(row["updated_at"], mode="json"),
            "operation_count": len(operations),
        },
    }
    yield journal_ids.canonical_json(header)

    entries = (
        Entry.objects.filter(session_id=session.pk, seq__lte=row["entry_count"])
        .order_by("seq")
        .values_list("payload", flat=True)
    )
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


# -- import -------------------------------------------------------------------------


@dataclass
class _OperationLines:
    old_id: str
    lines: list[int] = field(default_factory=list)
    records: list[JournalRecord] = field(default_factory=list)


@dataclass
class _Parsed:
    header: SessionHeader
    entries: list[JournalEntry]
    operations: list[_OperationLines]


def session_import(*, owner: Any, lines: Iterable[str | bytes]) -> ComicSession:
    """A new session of ``owner`` from an export; ``ImportRefused`` (nothing written) if invalid.

    ``lines`` may be bytes (a file opened in binary mode): each is decoded as UTF-8 on its
    own, so a bad byte is reported at its line.
    """
    parsed = _parse_file(lines)
    return _write(owner=owner, parsed=parsed)


def _decoded_lines(lines: Iterable[str | bytes]) -> Iterator[tuple[int, str]]:
    iterator = iter(lines)
    line_no = 0
    while True:
        line_no += 1
        try:
            line = next(iterator)
            if isinstance(line, bytes):
                line = line.decode("utf-8")
        except StopIteration:
            return
        except UnicodeDecodeError as exc:
            # A text stream decodes ahead in blocks: then the line is only where reading stopped.
            raise ImportRefused(line_no, f"not UTF-8 ({exc.reason})") from exc
        yield line_no, line


def _json_object(line_no: int, line: str) -> dict[str, Any]:
    try:
        value = json.loads(line)
    except ValueError as exc:
        raise ImportRefused(line_no, f"not JSON ({exc})") from exc
    if not isinstance(value, dict):
        raise ImportRefused(line_no, "not a JSON object")
    return value


def _pydantic_reason(what: str, exc: ValidationError, *, tagged: bool) -> str:
    problems = []
    for error in exc.errors(include_url=False):
        loc = error["loc"][1:] if tagged else error["loc"]  # the union's tag repeats the type
        where = ".".join(str(part) for part in loc)
        problems.append(f"{where}: {error['msg']}" if where else error["msg"])
    return f"invalid {what}: " + "; ".join(problems)


def _parse_line(line_no: int, text: str) -> JournalEntry | JournalRecord:
    try:
        return _line_adapter.validate_json(text)  # one pass in pydantic-core: the hot path
    except ValidationError as exc:
        error = exc
    # Say what is wrong in the file's terms: not JSON, not an object, which type is unknown.
    data = _json_object(line_no, text)
    kind = data.get("type")
    if kind in ENTRY_TYPES:
        what = f"{kind} entry"
    elif kind in RECORD_TYPES:
        what = f"{kind} record"
    else:
        raise ImportRefused(line_no, f"unknown type {kind!r}")
    raise ImportRefused(line_no, _pydantic_reason(what, error, tagged=True))


def _parse_header(line_no: int, line: str) -> SessionHeader:
    data = _json_object(line_no, line)
    if data.get("format") != FORMAT:
        raise ImportRefused(line_no, f"not a {FORMAT} header (format {data.get('format')!r})")
    if data.get("version") != VERSION:
        raise ImportRefused(line_no, f"unsupported version {data.get('version')!r}")
    try:
        return Header.model_validate(data).session
    except ValidationError as exc:
        raise ImportRefused(line_no, _pydantic_reason("header", exc, tagged=False)) from exc


def _parse_file(lines: Iterable[str | bytes]) -> _Parsed:
    """Read and check every line; raise ``ImportRefused`` at the first problem."""
    numbered = (
        (line_no, text)
        for line_no, line in _decoded_lines(lines)
        if (text := line.rstrip("\r\n")).strip()  # blank lines carry nothing
    )
    first = next(numbered, None)
    if first is None:
        raise ImportRefused(1, "the file is empty: no header")
    header = _parse_header(*first)

    snapshot = SessionSnapshot.empty(header.initial_app_state, header.created_at)
    entries: list[JournalEntry] = []
    final: dict[str, str] = {}
    operations: dict[str, _OperationLines] = {}
    current: _OperationLines | None = None
    for line_no, text in numbered:
        item = _parse_line(line_no, text)
        if isinstance(item, EntryBase):
            entry = item
            if operations:
                raise ImportRefused(line_no, "an entry after the operation records")
            try:
                snapshot = apply_entry(snapshot, entry)
            except JournalError as exc:
                raise ImportRefused(line_no, str(exc)) from exc
            entries.append(entry)
            message = entry.message if isinstance(entry, MessageEntry) else None
            if isinstance(message, AssistantMessage) and message.is_final:
                final[entry.id] = message.stop_reason
        else:
            record = item
            if isinstance(record, ToolDispatched):
                _check_derivations(line_no, record)
            if current is None or current.old_id != record.operation_id:
                if record.operation_id in operations:
                    raise ImportRefused(
                        line_no,
                        f"records of operation {record.operation_id!r} are not together",
                    )
                current = operations[record.operation_id] = _OperationLines(record.operation_id)
            current.lines.append(line_no)
            current.records.append(record)

    for what, said, found in (
        ("entries", header.entry_count, len(entries)),
        ("operations", header.operation_count, len(operations)),
    ):
        if said != found:
            raise ImportRefused(first[0], f"the header says {said} {what}, the file has {found}")
    if header.leaf_id != snapshot.leaf_id:
        raise ImportRefused(
            first[0],
            f"the header's leaf_id {header.leaf_id!r} is not the last entry {snapshot.leaf_id!r}",
        )

    evidence = RecoveryEvidence(
        entry_ids=frozenset(e.id for e in entries), final_assistant_entries=final
    )
    for op in operations.values():
        _check_operation(op, evidence)
    return _Parsed(header=header, entries=entries, operations=list(operations.values()))


def _check_derivations(line_no: int, record: ToolDispatched) -> None:
    # The runner relies on these exact derivations (CONTRACT §2); a file that breaks them
    # was edited by hand and would dispatch under the wrong key.
    expected = {
        "result_entry_id": journal_ids.result_entry_id(
            record.assistant_entry_id, record.tool_call_id
        ),
        "idempotency_key": journal_ids.idempotency_key(record.operation_id, record.tool_call_id),
        "args_hash": journal_ids.args_hash(record.args),
    }
    for name, value in expected.items():
        if getattr(record, name) != value:
            raise ImportRefused(
                line_no, f"tool_dispatched {name} {getattr(record, name)!r}, expected {value!r}"
            )


def _check_operation(op: _OperationLines, evidence: RecoveryEvidence) -> None:
    first, last = op.lines[0], op.lines[-1]
    try:
        recover_operation(op.records, evidence)
    except JournalError as exc:
        raise ImportRefused(first, f"{exc} (lines {first}-{last})") from exc
    if not isinstance(op.records[-1], OperationFinished):
        raise ImportRefused(
            last,
            f"operation {op.old_id!r} (lines {first}-{last}) has no operation_finished: "
            "a file with an unfinished operation is refused",
        )


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


def _write(*, owner: Any, parsed: _Parsed) -> ComicSession:
    header = parsed.header
    ops = connection.ops
    # Sorted fresh ids, given out in file order: operations created at the same instant
    # keep their order on the next export (ordered by created_at, then id).
    new_ids = sorted(new_id("op") for _ in parsed.operations)
    links = ((e.id, e.parent_id) for e in parsed.entries)
    with transaction.atomic():
        session = ComicSession.objects.create(
            id=new_id("s"),
            owner=owner,
            title=header.title,
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
    return session


def _moved_record(record: JournalRecord, operation_id: str) -> JournalRecord:
    """The record under its new operation id, with the key derived from it again."""
    update: dict[str, Any] = {"operation_id": operation_id}
    if isinstance(record, ToolDispatched):
        update["idempotency_key"] = journal_ids.idempotency_key(operation_id, record.tool_call_id)
    return record.model_copy(update=update)
