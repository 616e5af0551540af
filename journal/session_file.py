"""The session file, as data: its header, its lines, and the
See docs/ARCHITECTURE.md §9, docs/BUNDLES.md.
whole-file check.

An export is canonical JSON lines: a header, every entry in append order, then every
operation's records (operations in created order, each one's records in order); from
version 2 on, then the labels and bookmarks of the session's nodes, and the panel
images its entries name when they were asked for (a *bundle*). Reading one checks
everything a store relies on (the tree, the derivations of T1, every operation's log,
what each label names, each image's bytes against its digest) and says at which line it
first went wrong; nothing here writes. Version 1 files (no labels, no images) still read.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import reduce
from operator import or_
from typing import Annotated, Any, Literal, get_args

from pydantic import (
    AfterValidator,
    AwareDatetime,
    Field,
    StringConstraints,
    TypeAdapter,
    ValidationError,
)

from journal import ids as journal_ids
from journal.appstate import IMAGE_ID_PATTERN
from journal.entries import (
    AppStateEntry,
    AssistantMessage,
    EntryBase,
    Frozen,
    MessageEntry,
    NonNegative,
    ToolResultMessage,
    entry_to_dict,
    parse_entry,
)
from journal.entries import Entry as JournalEntry
from journal.errors import JournalError
from journal.jsonvalues import (
    Id,
    JsonObject,
    JsonTooDeep,
    Text,
    check_json_text,
    check_text,
    json_loads,
)
from journal.records import (
    OperationFinished,
    ToolDispatched,
    ToolResolved,
    parse_record,
    record_to_dict,
)
from journal.records import Record as JournalRecord
from journal.recovery import RecoveryEvidence, recover_operation
from journal.snapshot import SessionSnapshot, apply_entry

FORMAT = "jaiweb-session"
VERSION = 2  # what an export writes
READABLE_VERSIONS = (1, 2)

# A label's kinds and longest text (the store's ``Label`` model keeps the same ones).
LABEL_KINDS = ("label", "bookmark")
LABEL_TEXT_MAX = 80
# The panel images a bundle may carry, with the file name extension each is kept under,
# and how the first bytes of each kind look (an image is checked to be what it says).
IMAGE_TYPES = {
    "image/svg+xml": "svg",
    "image/png": "png",
    "image/jpeg": "jpg",
    "image/webp": "webp",
}


def _models(annotated_union: Any) -> tuple[type[Any], ...]:
    """The models of ``Annotated[A | B | …, Field(discriminator=…)]``."""
    return get_args(get_args(annotated_union)[0])


def _type_tags(annotated_union: Any) -> frozenset[str]:
    return frozenset(model.model_fields["type"].default for model in _models(annotated_union))


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


class SessionHeaderV2(SessionHeader):
    label_count: NonNegative
    image_count: NonNegative


class Header(Frozen):
    format: Literal["jaiweb-session"]
    version: Literal[1]
    session: SessionHeader


class HeaderV2(Frozen):
    format: Literal["jaiweb-session"]
    version: Literal[2]
    session: SessionHeaderV2


class LabelLine(Frozen):
    """A label or bookmark on a node (version 2): beside the journal, like the store's."""

    type: Literal["label"] = "label"
    entry_id: Id
    kind: Literal["label", "bookmark"]
    text: Annotated[str, StringConstraints(max_length=LABEL_TEXT_MAX), AfterValidator(check_text)]
    created_at: AwareDatetime


class ImageLine(Frozen):
    """A panel image an entry names (version 2, when images were asked for)."""

    type: Literal["image"] = "image"
    id: Annotated[str, StringConstraints(pattern=IMAGE_ID_PATTERN)]
    content_type: Literal["image/svg+xml", "image/png", "image/jpeg", "image/webp"]
    sha256: Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]
    size: NonNegative
    data: str  # base64 (RFC 4648, with padding)


ENTRY_TYPES = _type_tags(JournalEntry)
RECORD_TYPES = _type_tags(JournalRecord)
# Any line after the header: an entry, a record, a label or an image, told apart by ``type``.
_line_adapter: TypeAdapter[Any] = TypeAdapter(
    Annotated[
        reduce(or_, [*_models(JournalEntry), *_models(JournalRecord), LabelLine, ImageLine]),
        Field(discriminator="type"),
    ]
)
# The sections of a file, in their order, and how one line of each is called.
_SECTIONS = ("entries", "operation records", "labels", "images")
_ONE = ("an entry", "a record", "a label", "an image")


@dataclass(frozen=True, slots=True)
class BundleImage:
    """An image of a bundle, its bytes decoded and checked against its digest."""

    id: str
    content_type: str
    sha256: str
    data: bytes
    line_no: int = 0


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
    labels: list[LabelLine] = field(default_factory=list)
    images: list[BundleImage] = field(default_factory=list)
    version: int = VERSION
    source: str = "jaiweb"  # or the importer that made it: "pi", "claude_code"
    entry_lines: list[int] = field(default_factory=list)  # the line of each entry, when known


# -- reading lines ------------------------------------------------------------------


def numbered_lines(lines: Iterable[str | bytes]) -> Iterator[tuple[int, str]]:
    """``(line_no, text)`` of every line that is not blank, its line ending taken off.

    ``lines`` may be bytes (a file opened in binary mode): each is decoded as UTF-8 on its
    own, so a bad byte is reported at its line."""
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
        text = line.rstrip("\r\n")
        if text.strip():  # blank lines carry nothing
            yield line_no, text


def json_object(line_no: int, line: str) -> dict[str, Any]:
    """The JSON object on line ``line_no``; ``FileRefused`` when it is not JSON, nests
    deeper than ``JSON_DEPTH_MAX`` or is not an object."""
    try:
        value = json_loads(line)
    except JsonTooDeep as exc:
        raise FileRefused(line_no, str(exc)) from exc
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


def _parse_line(line_no: int, text: str) -> Any:
    try:  # every reader of a line refuses the same depth, whichever parser reads it
        check_json_text(text)
    except JsonTooDeep as exc:
        raise FileRefused(line_no, str(exc)) from exc
    try:
        return _line_adapter.validate_json(text)  # one pass in pydantic-core: the hot path
    except ValidationError as exc:
        error = exc
    # Say what is wrong in the file's terms: not JSON, not an object, which type is unknown.
    data = json_object(line_no, text)
    kind = data.get("type")
    if not isinstance(kind, str):  # a list or an object is no type (and cannot be hashed)
        raise FileRefused(line_no, f"unknown type {kind!r}")
    if kind in ENTRY_TYPES:
        what = f"{kind} entry"
    elif kind in RECORD_TYPES:
        what = f"{kind} record"
    elif kind in ("label", "image"):
        what = f"{kind} line"
    else:
        raise FileRefused(line_no, f"unknown type {kind!r}")
    raise FileRefused(line_no, _pydantic_reason(what, error, tagged=True))


def _parse_header(line_no: int, line: str) -> tuple[int, SessionHeader]:
    data = json_object(line_no, line)
    if data.get("format") != FORMAT:
        raise FileRefused(line_no, f"not a {FORMAT} header (format {data.get('format')!r})")
    version = data.get("version")
    if version not in READABLE_VERSIONS:
        raise FileRefused(line_no, f"unsupported version {version!r}")
    model = Header if version == 1 else HeaderV2
    try:
        return version, model.model_validate(data).session
    except ValidationError as exc:
        raise FileRefused(line_no, _pydantic_reason("header", exc, tagged=False)) from exc


def _section(item: Any) -> int:
    if isinstance(item, EntryBase):
        return 0
    if isinstance(item, LabelLine):
        return 2
    if isinstance(item, ImageLine):
        return 3
    return 1


def session_file_read(lines: Iterable[str | bytes]) -> SessionFile:
    """Read and check every line; ``FileRefused`` at the first problem.

    ``lines`` may be bytes (a file opened in binary mode): each is decoded as UTF-8 on its
    own, so a bad byte is reported at its line."""
    numbered = numbered_lines(lines)
    first = next(numbered, None)
    if first is None:
        raise FileRefused(1, "the file is empty: no header")
    version, header = _parse_header(*first)

    snapshot = SessionSnapshot.empty(header.initial_app_state, header.created_at)
    entries: list[JournalEntry] = []
    entry_lines: list[int] = []
    final: dict[str, str] = {}
    operations: dict[str, OperationLines] = {}
    current: OperationLines | None = None
    labels: list[LabelLine] = []
    label_keys: set[tuple[str, str, str]] = set()
    images: list[BundleImage] = []
    named: set[str] | None = None  # the image ids the entries name, once the entries are read
    section = 0
    for line_no, text in numbered:
        item = _parse_line(line_no, text)
        at = _section(item)
        if at < section:
            raise FileRefused(line_no, f"{_ONE[at]} after the {_SECTIONS[section]}")
        if at >= 2 and version < 2:
            raise FileRefused(line_no, f"{_ONE[at]} in a version 1 file")
        section = at
        if at == 0:
            entry = item
            try:
                snapshot = apply_entry(snapshot, entry)
            except JournalError as exc:
                raise FileRefused(line_no, str(exc)) from exc
            entries.append(entry)
            entry_lines.append(line_no)
            message = entry.message if isinstance(entry, MessageEntry) else None
            if isinstance(message, AssistantMessage) and message.is_final:
                final[entry.id] = message.stop_reason
        elif at == 1:
            record = item
            if isinstance(record, ToolDispatched):
                _check_derivations(line_no, record)
            elif isinstance(record, ToolResolved):
                _check_evidence_key(line_no, record)
            if current is None or current.old_id != record.operation_id:
                if record.operation_id in operations:
                    raise FileRefused(
                        line_no,
                        f"records of operation {record.operation_id!r} are not together",
                    )
                current = operations[record.operation_id] = OperationLines(record.operation_id)
            current.lines.append(line_no)
            current.records.append(record)
        elif at == 2:
            _check_label(line_no, item, snapshot, label_keys)
            labels.append(item)
        else:
            if named is None:
                named = set(images_named(entries, header.initial_app_state))
            images.append(_checked_image(line_no, item, named, images))

    counts = [
        ("entries", header.entry_count, len(entries)),
        ("operations", header.operation_count, len(operations)),
    ]
    if isinstance(header, SessionHeaderV2):
        counts += [("labels", header.label_count, len(labels))]
        counts += [("images", header.image_count, len(images))]
    for what, said, found in counts:
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
    return SessionFile(
        header=header,
        entries=entries,
        operations=list(operations.values()),
        labels=labels,
        images=images,
        version=version,
        entry_lines=entry_lines,
    )


def _check_derivations(line_no: int, record: ToolDispatched) -> None:
    # The runner relies on these exact derivations (ARCHITECTURE §6); a file that breaks them
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


def _check_evidence_key(line_no: int, record: ToolResolved) -> None:
    # The reconciler's evidence was found under the call's key: it names that key.
    said = (record.evidence or {}).get("idempotency_key")
    if said is not None:
        expected = journal_ids.idempotency_key(record.operation_id, record.tool_call_id)
        if said != expected:
            raise FileRefused(
                line_no, f"tool_resolved evidence idempotency_key {said!r}, expected {expected!r}"
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


def _check_label(
    line_no: int, label: LabelLine, snapshot: SessionSnapshot, seen: set[tuple[str, str, str]]
) -> None:
    if label.entry_id not in snapshot.index:
        raise FileRefused(line_no, f"the label names entry {label.entry_id!r}, not in the session")
    if label.text != label.text.strip():
        raise FileRefused(line_no, "a label's text has no leading or trailing whitespace")
    if not label.text:
        raise FileRefused(line_no, "a label (or a bookmark) has a text")
    key = (label.entry_id, label.kind, label.text)
    if key in seen:
        raise FileRefused(line_no, f"the same {label.kind} twice on entry {label.entry_id!r}")
    seen.add(key)


# -- images -------------------------------------------------------------------------


def images_named(
    entries: Iterable[JournalEntry], initial_app_state: Mapping[str, Any] | None = None
) -> list[str]:
    """The image ids the session names (a tool result's ``details.image_id``: a drawn panel,
    a published one; a character's ``reference_image_id`` in the initial state or an
    ``app_state`` entry: its look), each once, in the order they first appear."""
    found: dict[str, None] = {}
    for image in looks_named(initial_app_state):
        found.setdefault(image)
    for entry in entries:
        if isinstance(entry, AppStateEntry):
            for image in looks_named(entry.value):
                found.setdefault(image)
        if not isinstance(entry, MessageEntry):
            continue
        message = entry.message
        if isinstance(message, ToolResultMessage):
            image = message.details.get("image_id")
            if isinstance(image, str):
                found.setdefault(image)
    return list(found)


def looks_named(state: Any) -> list[str]:
    """The ``reference_image_id`` of each character of an app state (as JSON) that has one."""
    characters = state.get("characters") if isinstance(state, Mapping) else None
    if not isinstance(characters, Mapping):
        return []
    return [
        c["reference_image_id"]
        for c in characters.values()
        if isinstance(c, Mapping) and isinstance(c.get("reference_image_id"), str)
    ]


@dataclass(frozen=True, slots=True)
class ImageMention:
    """An image id that a line of a session file names, and that line (0 when unknown)."""

    line_no: int
    image_id: str


def _names_an_image(key: str) -> bool:
    return key == "image_id" or key.endswith("_image_id")


def _image_ids_in(value: Any) -> Iterator[str]:
    """The strings held under an ``image_id`` (or ``…_image_id``) key anywhere in ``value``.
    The walk keeps its own stack, so no depth of nesting makes it recurse."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, inner in item.items():
                if isinstance(inner, str) and _names_an_image(key):
                    yield inner
                elif isinstance(inner, dict | list):
                    stack.append(inner)
        elif isinstance(item, list):
            stack.extend(inner for inner in item if isinstance(inner, dict | list))


def images_mentioned(parsed: SessionFile) -> list[ImageMention]:
    """List every image id the file names, with the line that names it.

    The header (a character's look in the initial state), the entries and the records are
    searched in every field that can hold an image id: a result's details, a tool call's
    arguments, a dispatch's args, a character's look. An import checks each id against the
    images it may give the importer."""
    found = [ImageMention(1, i) for i in _image_ids_in(dict(parsed.header.initial_app_state))]
    lines = parsed.entry_lines if len(parsed.entry_lines) == len(parsed.entries) else None
    for at, entry in enumerate(parsed.entries):
        line_no = lines[at] if lines else 0
        found += [ImageMention(line_no, i) for i in _image_ids_in(entry_to_dict(entry))]
    for op in parsed.operations:
        for at, record in enumerate(op.records):
            line_no = op.lines[at] if len(op.lines) == len(op.records) else 0
            found += [ImageMention(line_no, i) for i in _image_ids_in(record_to_dict(record))]
    return found


def image_looks_like(content_type: str, data: bytes) -> bool:
    """The bytes start the way an image of that type starts."""
    if content_type == "image/png":
        return data.startswith(b"\x89PNG\r\n\x1a\n")
    if content_type == "image/jpeg":
        return data.startswith(b"\xff\xd8\xff")
    if content_type == "image/webp":
        return data[:4] == b"RIFF" and data[8:12] == b"WEBP"
    if content_type == "image/svg+xml":
        head = data[:4096].lstrip(b"\xef\xbb\xbf \t\r\n")
        return (
            head.startswith((b"<svg", b"<?xml", b"<!--", b"<!DOCTYPE")) and b"<svg" in data[:65536]
        )
    return False


def _checked_image(
    line_no: int, line: ImageLine, named: set[str], earlier: list[BundleImage]
) -> BundleImage:
    what = f"image {line.id!r}"
    if line.id not in named:
        raise FileRefused(line_no, f"{what} is named by no entry of the session")
    if any(image.id == line.id for image in earlier):
        raise FileRefused(line_no, f"{what} twice")
    try:
        data = base64.b64decode(line.data, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise FileRefused(line_no, f"{what}: data is not base64 ({exc})") from exc
    if len(data) != line.size:
        raise FileRefused(line_no, f"{what}: size {line.size}, but the data has {len(data)} bytes")
    digest = hashlib.sha256(data).hexdigest()
    if digest != line.sha256:
        raise FileRefused(line_no, f"{what}: sha256 {line.sha256}, but the data's is {digest}")
    if not image_looks_like(line.content_type, data):
        raise FileRefused(line_no, f"{what}: the data is not {line.content_type}")
    return BundleImage(line.id, line.content_type, digest, data, line_no)


def renamed_image_id(image_id: str, sha256: str, owner_key: str, attempt: int = 1) -> str:
    """The id an imported image takes when its own is taken: the same for the same image,
    importer and attempt, whatever the clock (docs/BUNDLES.md)."""
    text = f"{image_id}\x00{sha256}\x00{owner_key}\x00{attempt}"
    return "img_" + hashlib.sha256(text.encode()).hexdigest()[:20]


# Keys whose values are ids of the journals' structure, never an image's: a rename leaves
# them alone, so it cannot change the tree or an operation's log.
_STRUCTURAL = frozenset(
    {
        *("id", "parent_id", "from_id", "first_kept_entry_id", "operation_id", "attempt_id"),
        *("assistant_entry_id", "result_entry_id", "input_entry_id", "start_leaf_id"),
        *("tool_call_id", "idempotency_key", "args_hash", "input_id", "type", "role"),
    }
)


def _renamer(renames: Mapping[str, str]):
    pattern = re.compile(
        r"(?<![A-Za-z0-9_-])("
        + "|".join(re.escape(old) for old in sorted(renames, key=len, reverse=True))
        + r")(?![A-Za-z0-9_-])"
    )

    def walk(value: Any) -> Any:
        if isinstance(value, str):
            return pattern.sub(lambda m: renames[m.group(1)], value)
        if isinstance(value, list):
            return [walk(item) for item in value]
        if isinstance(value, dict):
            return {k: v if k in _STRUCTURAL else walk(v) for k, v in value.items()}
        return value

    return walk


def images_renamed(parsed: SessionFile, renames: Mapping[str, str]) -> SessionFile:
    """Return the file with each image id ``old`` written as ``renames[old]``.

    The ids change wherever the header's initial state, the entries and the records say them:
    details, tool arguments, text, a character's look. T1's ``args_hash`` is derived again from
    the arguments so changed. The ids of the tree and of the logs never change."""
    if not renames:
        return parsed
    walk = _renamer(renames)
    entries = [parse_entry(walk(entry_to_dict(entry))) for entry in parsed.entries]
    operations = []
    for op in parsed.operations:
        records = []
        for record in op.records:
            data = walk(record_to_dict(record))
            if data["type"] == "tool_dispatched":
                data["args_hash"] = journal_ids.args_hash(data["args"])
            records.append(parse_record(data))
        operations.append(OperationLines(op.old_id, list(op.lines), records))
    images = [replace(image, id=renames.get(image.id, image.id)) for image in parsed.images]
    header = parsed.header.model_copy(
        update={"initial_app_state": walk(dict(parsed.header.initial_app_state))}
    )
    return replace(parsed, header=header, entries=entries, operations=operations, images=images)


# -- writing lines ------------------------------------------------------------------


def header_line(session: Mapping[str, Any], *, label_count: int, image_count: int) -> str:
    """The header of a version 2 file; ``session`` has the header's other fields (JSON)."""
    return journal_ids.canonical_json(
        {
            "format": FORMAT,
            "version": VERSION,
            "session": {**session, "label_count": label_count, "image_count": image_count},
        }
    )


_timestamp: TypeAdapter[datetime] = TypeAdapter(AwareDatetime)


def label_line(*, entry_id: str, kind: str, text: str, created_at: datetime) -> str:
    return journal_ids.canonical_json(
        {
            "type": "label",
            "entry_id": entry_id,
            "kind": kind,
            "text": text,
            "created_at": _timestamp.dump_python(created_at, mode="json"),
        }
    )


def image_line(*, image_id: str, content_type: str, data: bytes) -> str:
    return journal_ids.canonical_json(
        {
            "type": "image",
            "id": image_id,
            "content_type": content_type,
            "sha256": hashlib.sha256(data).hexdigest(),
            "size": len(data),
            "data": base64.b64encode(data).decode("ascii"),
        }
    )
