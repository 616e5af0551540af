"""The session file (CONTRACT §5), as data: its header, its lines, and the whole-file check.

An export is canonical JSON lines: a header, every entry in append order, then every
operation's records (operations in created order, each one's records in order). Reading
one checks everything a store relies on (the tree, the derivations of T1, every
operation's log) and says at which line it first went wrong; nothing here writes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import reduce
from operator import or_
from typing import Annotated, Any, Literal, get_args

from pydantic import AwareDatetime, Field, TypeAdapter, ValidationError

from journal import ids as journal_ids
from journal.entries import AssistantMessage, EntryBase, Frozen, MessageEntry, NonNegative
from journal.entries import Entry as JournalEntry
from journal.errors import JournalError
from journal.jsonvalues import Id, JsonObject, Text
from journal.records import OperationFinished, ToolDispatched
from journal.records import Record as JournalRecord
from journal.recovery import RecoveryEvidence, recover_operation
from journal.snapshot import SessionSnapshot, apply_entry

FORMAT = "jaiweb-session"
VERSION = 1


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


class FileRefused(JournalError):
    """The file is not a session file this version can read; ``line_no`` says where."""

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


@dataclass
class OperationLines:
    old_id: str
    lines: list[int] = field(default_factory=list)
    records: list[JournalRecord] = field(default_factory=list)


@dataclass
class SessionFile:
    header: SessionHeader
    entries: list[JournalEntry]
    operations: list[OperationLines]


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
            raise FileRefused(line_no, f"not UTF-8 ({exc.reason})") from exc
        yield line_no, line


def _json_object(line_no: int, line: str) -> dict[str, Any]:
    try:
        value = json.loads(line)
    except ValueError as exc:
        raise FileRefused(line_no, f"not JSON ({exc})") from exc
    if not isinstance(value, dict):
        raise FileRefused(line_no, "not a JSON object")
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
        raise FileRefused(line_no, f"unknown type {kind!r}")
    raise FileRefused(line_no, _pydantic_reason(what, error, tagged=True))


def _parse_header(line_no: int, line: str) -> SessionHeader:
    data = _json_object(line_no, line)
    if data.get("format") != FORMAT:
        raise FileRefused(line_no, f"not a {FORMAT} header (format {data.get('format')!r})")
    if data.get("version") != VERSION:
        raise FileRefused(line_no, f"unsupported version {data.get('version')!r}")
    try:
        return Header.model_validate(data).session
    except ValidationError as exc:
        raise FileRefused(line_no, _pydantic_reason("header", exc, tagged=False)) from exc


def session_file_read(lines: Iterable[str | bytes]) -> SessionFile:
    """Read and check every line; ``FileRefused`` at the first problem.

    ``lines`` may be bytes (a file opened in binary mode): each is decoded as UTF-8 on its
    own, so a bad byte is reported at its line."""
    numbered = (
        (line_no, text)
        for line_no, line in _decoded_lines(lines)
        if (text := line.rstrip("\r\n")).strip()  # blank lines carry nothing
    )
    first = next(numbered, None)
    if first is None:
        raise FileRefused(1, "the file is empty: no header")
    header = _parse_header(*first)

    snapshot = SessionSnapshot.empty(header.initial_app_state, header.created_at)
    entries: list[JournalEntry] = []
    final: dict[str, str] = {}
    operations: dict[str, OperationLines] = {}
    current: OperationLines | None = None
    for line_no, text in numbered:
        item = _parse_line(line_no, text)
        if isinstance(item, EntryBase):
            entry = item
            if operations:
                raise FileRefused(line_no, "an entry after the operation records")
            try:
                snapshot = apply_entry(snapshot, entry)
            except JournalError as exc:
                raise FileRefused(line_no, str(exc)) from exc
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
                    raise FileRefused(
                        line_no,
                        f"records of operation {record.operation_id!r} are not together",
                    )
                current = operations[record.operation_id] = OperationLines(record.operation_id)
            current.lines.append(line_no)
            current.records.append(record)

    for what, said, found in (
        ("entries", header.entry_count, len(entries)),
        ("operations", header.operation_count, len(operations)),
    ):
        if said != found:
            raise FileRefused(first[0], f"the header says {said} {what}, the file has {found}")
    if header.leaf_id != snapshot.leaf_id:
        raise FileRefused(
            first[0],
            f"the header's leaf_id {header.leaf_id!r} is not the last entry {snapshot.leaf_id!r}",
        )

    evidence = RecoveryEvidence(
        entry_ids=frozenset(e.id for e in entries), final_assistant_entries=final
    )
    for op in operations.values():
        _check_operation(op, evidence)
    return SessionFile(header=header, entries=entries, operations=list(operations.values()))


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
            raise FileRefused(
                line_no, f"tool_dispatched {name} {getattr(record, name)!r}, expected {value!r}"
            )


def _check_operation(op: OperationLines, evidence: RecoveryEvidence) -> None:
    first, last = op.lines[0], op.lines[-1]
    try:
        recover_operation(op.records, evidence)
    except JournalError as exc:
        raise FileRefused(first, f"{exc} (lines {first}-{last})") from exc
    if not isinstance(op.records[-1], OperationFinished):
        raise FileRefused(
            last,
            f"operation {op.old_id!r} (lines {first}-{last}) has no operation_finished: "
            "a file with an unfinished operation is refused",
        )
