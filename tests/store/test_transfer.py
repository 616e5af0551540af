"""Export and import of a session: canonical lines, exact round trips, all-or-nothing refusals."""

from __future__ import annotations

import io
import json
import re
from datetime import UTC, datetime, timedelta

import pytest
from django.core.management import CommandError, call_command

from jaiweb.render.services import render_request
from jaiweb.store import transfer
from jaiweb.store.demo import article_session_create
from jaiweb.store.errors import ImportRefused
from jaiweb.store.leases import operation_claim
from jaiweb.store.models import ComicSession, Entry, Operation, OperationRecord
from jaiweb.store.selectors import operation_records
from jaiweb.store.services import operation_accept, run_append
from jaiweb.store.transfer import session_export, session_import
from journal import ids
from journal.entries import AssistantMessage, MessageEntry, ToolResultMessage
from journal.records import ModelAttempted, OperationFinished, ToolDispatched, UsageSettled

pytestmark = pytest.mark.django_db
NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)
RECORD_TYPES = {"operation_accepted", "model_attempted", "usage_settled", "tool_dispatched"}
RECORD_TYPES |= {"operation_finished"}


@pytest.fixture(autouse=True)
def media(tmp_path, settings):
    settings.MEDIA_ROOT = tmp_path / "media"


def _finish_with_reply(op_id, fencing, leaf, *, attempt, reply_id, at):
    attempted = ModelAttempted(
        operation_id=op_id, timestamp=at, attempt_id=attempt, assistant_entry_id=reply_id, model="m"
    )
    run_append(operation_id=op_id, fencing=fencing, records=[attempted])
    reply = MessageEntry(
        id=reply_id,
        parent_id=leaf,
        timestamp=at,
        message=AssistantMessage(content="第三格画好了。", stop_reason="stop"),
    )
    finished = OperationFinished(operation_id=op_id, timestamp=at, outcome="completed")
    run_append(
        operation_id=op_id,
        fencing=fencing,
        entries=[reply],
        expected_leaf_id=leaf,
        records=[finished],
    )


def session_with_operations(owner, *, second_after=timedelta(seconds=5)):
    """The article's session, then a run with a tool call and a short run, both finished.
    Its panel is an image of the owner's, so only the owner may import the file."""
    session = article_session_create(owner=owner, now=NOW)
    image_id = render_request(user=owner, key="k_panel", params={"prompt": "p"}, now=NOW).image_id
    at = NOW + timedelta(seconds=10)
    got = operation_accept(session_id=session.id, text="画第三格：一掌拍飞超人强", now=at)
    op = got.operation_id
    lease = operation_claim(owner="r1", now=at, lease_seconds=15, operation_id=op)
    attempted = ModelAttempted(
        operation_id=op, timestamp=at, attempt_id="a1", assistant_entry_id="A1", model="m"
    )
    run_append(operation_id=op, fencing=lease.fencing, records=[attempted])
    args = {"prompt": "猪猪侠一掌拍飞超人强", "panel": 3}
    reply = MessageEntry(
        id="A1",
        parent_id=got.input_entry_id,
        timestamp=at,
        message=AssistantMessage(
            content="开画！",
            tool_calls=[{"id": "call_1", "name": "generate_image", "arguments": args}],
            stop_reason="tool_use",
            usage={"input_tokens": 812, "output_tokens": 64},
        ),
    )
    usage = UsageSettled(
        operation_id=op,
        timestamp=at,
        attempt_id="a1",
        usage={"input_tokens": 812, "output_tokens": 64},
    )
    run_append(
        operation_id=op,
        fencing=lease.fencing,
        entries=[reply],
        expected_leaf_id=got.input_entry_id,
        records=[usage],
    )
    result_id = ids.result_entry_id("A1", "call_1")
    dispatched = ToolDispatched(
        operation_id=op,
        timestamp=at,
        tool_call_id="call_1",
        tool_name="generate_image",
        assistant_entry_id="A1",
        args=args,
        args_hash=ids.args_hash(args),
        result_entry_id=result_id,
        idempotency_key=ids.idempotency_key(op, "call_1"),
        policy="idempotent",
    )
    run_append(operation_id=op, fencing=lease.fencing, records=[dispatched])
    result = MessageEntry(
        id=result_id,
        parent_id="A1",
        timestamp=at,
        message=ToolResultMessage(
            tool_call_id="call_1",
            tool_name="generate_image",
            content="panel rendered",
            details={"image_id": image_id},
        ),
    )
    run_append(operation_id=op, fencing=lease.fencing, entries=[result], expected_leaf_id="A1")
    _finish_with_reply(op, lease.fencing, result_id, attempt="a2", reply_id="A2", at=at)

    at += second_after
    second = operation_accept(session_id=session.id, text="再来一格", now=at)
    lease = operation_claim(owner="r1", now=at, lease_seconds=15, operation_id=second.operation_id)
    _finish_with_reply(
        second.operation_id,
        lease.fencing,
        second.input_entry_id,
        attempt="b1",
        reply_id="B1",
        at=at,
    )
    session.refresh_from_db()
    return session


def export(session):
    return list(session_export(session=session))


def kinds(lines):
    """'header', 'entry' or 'record' per line."""
    out = []
    for line in lines:
        data = json.loads(line)
        out.append(
            "header" if "format" in data else "record" if "operation_id" in data else "entry"
        )
    return out


def without_operation_ids(lines):
    """The lines with what an import must change taken out."""
    out = []
    for line in lines:
        data = json.loads(line)
        if "format" in data:
            del data["session"]["id"]
        elif "operation_id" in data:
            del data["operation_id"]
            data.pop("idempotency_key", None)
        out.append(data)
    return out


def counts():
    return tuple(m.objects.count() for m in (ComicSession, Entry, Operation, OperationRecord))


def assert_round_trip(first, second):
    assert kinds(first) == kinds(second)
    entries = [i for i, k in enumerate(kinds(first)) if k == "entry"]
    assert [first[i] for i in entries] == [second[i] for i in entries]
    assert without_operation_ids(first) == without_operation_ids(second)
    assert json.loads(first[0])["session"]["id"] != json.loads(second[0])["session"]["id"]


# -- the format ----------------------------------------------------------------------


def test_lines_are_canonical_and_exact(alice):
    session = article_session_create(owner=alice, now=NOW)
    lines = export(session)
    assert len(lines) == 1 + 7
    assert lines[0] == (
        '{"format":"jaiweb-session","session":{"created_at":"2026-11-30T12:00:00Z",'
        f'"entry_count":7,"id":"{session.id}","image_count":0,"initial_app_state":'
        '{"characters":{"猪猪侠":{"buff":"无","mood":"平静","skill":"无"}},'
        '"permission_mode":"ask"},"label_count":0,"leaf_id":"e6","operation_count":0,'
        '"title":"猪猪侠大战超人强","updated_at":"2026-11-30T12:00:06Z"},"version":2}'
    )
    assert lines[1] == (
        '{"id":"e0","message":{"content":"画一张猪猪侠在武林大会擂台上对决超人强，'
        '掏出超级棒棒糖吃下！","role":"user"},"parent_id":null,'
        '"timestamp":"2026-11-30T12:00:00Z","type":"message"}'
    )
    assert lines[6] == (
        '{"from_id":"e4","id":"e5","parent_id":"e2","timestamp":"2026-11-30T12:00:05Z",'
        '"type":"branch"}'
    )
    for line in lines:
        assert line == ids.canonical_json(json.loads(line))
        assert "\\u" not in line and "\n" not in line
    assert [json.loads(line)["id"] for line in lines[1:]] == [f"e{i}" for i in range(7)]


def test_records_follow_entries_per_operation_in_order(alice):
    session = session_with_operations(alice)
    lines = export(session)
    header = json.loads(lines[0])["session"]
    assert (header["entry_count"], header["operation_count"]) == (13, 2)
    assert kinds(lines) == ["header"] + ["entry"] * 13 + ["record"] * 9
    records = [json.loads(line) for line in lines[14:]]
    ops = Operation.objects.filter(session=session).order_by("created_at", "id")
    expected = [r for op in ops for r in operation_records(operation_id=op.id)]
    assert [(r["operation_id"], r["type"]) for r in records] == [
        (r.operation_id, r.type) for r in expected
    ]


# -- round trips ---------------------------------------------------------------------


def test_round_trip_through_the_services(alice):
    original = session_with_operations(alice)
    first = export(original)
    imported = session_import(owner=alice, lines=first)
    assert imported.owner == alice and imported.id != original.id
    second = export(imported)
    assert_round_trip(first, second)
    assert second[1:14] == first[1:14]

    old_ops = [op.id for op in Operation.objects.filter(session=original)]
    new_ops = list(Operation.objects.filter(session=imported).order_by("created_at", "id"))
    assert len(new_ops) == 2 and not {op.id for op in new_ops} & set(old_ops)
    for op in new_ops:
        assert op.outcome == "completed" and op.finished_at is not None
        records = operation_records(operation_id=op.id)
        assert op.record_count == len(records) and op.created_at == records[0].timestamp
        assert {r.operation_id for r in records} == {op.id}
    dispatch = next(
        r
        for op in new_ops
        for r in operation_records(operation_id=op.id)
        if isinstance(r, ToolDispatched)
    )
    assert dispatch.idempotency_key == ids.idempotency_key(dispatch.operation_id, "call_1")
    assert dispatch.result_entry_id == ids.result_entry_id("A1", "call_1")

    # export → import → export → import: the lines stay fixed from the first export on
    third = export(session_import(owner=alice, lines=second))
    assert_round_trip(second, third)


def test_operations_created_at_one_instant_keep_their_order(alice):
    first = export(session_with_operations(alice, second_after=timedelta(0)))
    for _ in range(5):  # fresh random ids each time: the order must not depend on them
        assert_round_trip(first, export(session_import(owner=alice, lines=first)))


def test_import_into_the_same_database_twice(alice, capsys):
    original = session_with_operations(alice)
    lines = export(original)
    one = session_import(owner=alice, lines=lines)
    two = session_import(owner=alice, lines=lines)
    assert len({original.id, one.id, two.id}) == 3
    op_ids = list(Operation.objects.values_list("id", flat=True))
    assert len(op_ids) == len(set(op_ids)) == 6
    for session in (one, two):
        assert session.entry_count == 13 and session.leaf_id == original.leaf_id
        assert Entry.objects.filter(session=session).count() == 13
    call_command("journal_check")
    assert "3 sessions, 39 entries, 6 operations checked: OK" in capsys.readouterr().out


def test_round_trip_through_the_commands(alice, bob, tmp_path):
    original = session_with_operations(alice)
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    call_command("export_session", original.id, "-o", str(first))
    with pytest.raises(CommandError, match="neither in this file nor one of yours"):
        call_command("import_session", str(first), "--owner", "bob")
    out = io.StringIO()
    call_command("import_session", str(first), "--owner", "alice", stdout=out)
    match = re.fullmatch(r"imported session (s_\w+): 13 entries, 2 operations\n", out.getvalue())
    assert match
    imported = ComicSession.objects.get(pk=match[1])
    assert imported.owner == alice
    call_command("export_session", imported.id, "-o", str(second))
    text = first.read_text(encoding="utf-8")
    assert text.endswith("}\n") and "猪猪侠" in text
    assert_round_trip(text.splitlines(), second.read_text(encoding="utf-8").splitlines())

    stdout = io.StringIO()
    call_command("export_session", original.id, stdout=stdout)
    assert stdout.getvalue() == text


def test_import_from_stdin(alice, monkeypatch):
    original = article_session_create(owner=alice, now=NOW)
    data = "\n".join(export(original)).encode() + b"\n"
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data), encoding="ascii"))
    out = io.StringIO()
    call_command("import_session", "-", "--owner", "alice", stdout=out)
    assert "7 entries, 0 operations" in out.getvalue()
    imported = ComicSession.objects.exclude(pk=original.pk).get()
    assert imported.title == "猪猪侠大战超人强"


def test_command_errors(alice, tmp_path):
    with pytest.raises(CommandError, match="no session 'nope'"):
        call_command("export_session", "nope")
    path = tmp_path / "s.jsonl"
    call_command("export_session", article_session_create(owner=alice).id, "-o", str(path))
    with pytest.raises(CommandError, match="no user 'zed'"):
        call_command("import_session", str(path), "--owner", "zed")
    with pytest.raises(CommandError, match="cannot read"):
        call_command("import_session", str(tmp_path / "missing"), "--owner", "alice")


# -- refusals ------------------------------------------------------------------------


def _edit(index, **changes):
    def edit(lines):
        data = json.loads(lines[index])
        for key, value in changes.items():
            target = data
            *path, last = key.split("__")
            for part in path:
                target = target[part]
            target[last] = value
        lines[index] = json.dumps(data, ensure_ascii=False)
        return lines

    return edit


def _replace(index, text):
    def edit(lines):
        lines[index] = text
        return lines

    return edit


def _record(lines, type_, nth=0):
    found = [i for i, line in enumerate(lines) if json.loads(line).get("type") == type_]
    return found[nth]


def _drop_record(type_, nth=0):
    def edit(lines):
        del lines[_record(lines, type_, nth)]
        return lines

    return edit


def _dispatch_key(lines):
    i = _record(lines, "tool_dispatched")
    return _edit(i, idempotency_key="k_" + "0" * 32)(lines)


def _move_last_entry_to_the_end(lines):
    lines.append(lines.pop(13))
    return lines


def _mix_operations(lines):
    # the second operation's first record before the first operation's last one
    i = _record(lines, "operation_finished")
    lines[i], lines[i + 1] = lines[i + 1], lines[i]
    return lines


# Line numbers are 1-based: header 1, e0…e6 on 2…8, the runs' entries on 9…14; the first
# run's records on 15…20 (accepted, attempted, usage, dispatched, attempted, finished),
# the second's on 21…23 (accepted, attempted, finished).
REFUSALS = [
    ("empty", lambda lines: [], 1, "the file is empty"),
    ("not json", _replace(2, "{oops"), 3, "not JSON"),
    ("not an object", _replace(2, "[1, 2]"), 3, "not a JSON object"),
    ("no header", lambda lines: lines[1:], 1, "not a jaiweb-session header"),
    ("wrong format", _edit(0, format="other"), 1, "not a jaiweb-session header"),
    ("version", _edit(0, version=3), 1, "unsupported version 3"),
    ("bad header", _edit(0, session__title=""), 1, "invalid header: session.title"),
    ("unknown type", _edit(3, type="sticker"), 4, "unknown type 'sticker'"),
    (
        "entry payload",
        _edit(3, message={"role": "assistant", "content": 5, "stop_reason": "stop"}),
        4,
        "invalid message entry: message.assistant.content: Input should be a valid string",
    ),
    (
        "record payload",
        _edit(-1, outcome="maybe"),
        23,
        "invalid operation_finished record: outcome: Input should be",
    ),
    ("entry after records", _move_last_entry_to_the_end, 23, "an entry after the operation"),
    ("duplicate id", _edit(4, id="e1"), 5, "duplicate entry id (entry 'e1')"),
    ("unknown parent", _edit(5, parent_id="zz"), 6, "parent 'zz' is not in the session"),
    ("second root", _edit(4, parent_id=None), 5, "a session has one root"),
    ("leaf", _edit(0, session__leaf_id="e4"), 1, "leaf_id 'e4' is not the last entry 'B1'"),
    ("entry count", _edit(0, session__entry_count=12), 1, "says 12 entries, the file has 13"),
    ("op count", _edit(0, session__operation_count=3), 1, "says 3 operations, the file has 2"),
    ("corrupted", _drop_record("model_attempted"), 15, "corrupted operation log"),
    ("key", _dispatch_key, 18, "idempotency_key 'k_000"),
    ("not together", _mix_operations, 21, "records of operation"),
    (
        "unfinished",
        _drop_record("operation_finished", 1),
        22,
        "a file with an unfinished operation is refused",
    ),
]


@pytest.mark.parametrize(
    ("edit", "line_no", "reason"),
    [case[1:] for case in REFUSALS],
    ids=[case[0] for case in REFUSALS],
)
def test_refusals_name_the_line_and_write_nothing(alice, bob, edit, line_no, reason):
    lines = edit(export(session_with_operations(alice)))
    before = counts()
    with pytest.raises(ImportRefused) as refused:
        session_import(owner=bob, lines=lines)
    assert refused.value.line_no == line_no, str(refused.value)
    assert str(refused.value).startswith(f"line {line_no}: ")
    assert reason in str(refused.value)
    assert counts() == before


def test_a_refusal_through_the_command_writes_nothing(alice, tmp_path):
    lines = export(session_with_operations(alice))
    path = tmp_path / "unfinished.jsonl"
    del lines[_record(lines, "operation_finished")]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    before = counts()
    with pytest.raises(CommandError, match=r"line 19: .*unfinished operation is refused"):
        call_command("import_session", str(path), "--owner", "alice")
    path.write_bytes(lines[0].encode() + b"\n" + lines[1].encode()[:-3] + b"\xff}\n")
    with pytest.raises(CommandError, match="line 2: not UTF-8"):
        call_command("import_session", str(path), "--owner", "alice")
    assert counts() == before


def test_a_failed_write_rolls_everything_back(alice, monkeypatch):
    lines = export(session_with_operations(alice))
    before = counts()

    def broken(*args, **kwargs):
        raise RuntimeError("disk full")

    # fails while the records are written: the session, entries and operations are in by then
    monkeypatch.setattr(transfer, "_moved_record", broken)
    with pytest.raises(RuntimeError, match="disk full"):
        session_import(owner=alice, lines=lines)
    assert counts() == before


# -- a call recovery settled itself ------------------------------------------------------


def session_settled_by_the_reconciler(owner):
    """A session whose at-most-once generate_image call was left open by a crash after its
    render was stored, settled by a recovery pass, then finished."""
    from jaiweb.agent.runner import Runner
    from jaiweb.store.services import session_create
    from tests.support.builders import operation_stopped_at

    session = session_create(owner=owner, title="settled")
    args = {"prompt": "猪猪侠吃下超级棒棒糖"}
    op = operation_stopped_at(
        session, "dispatched", tool="generate_image", args=args, policy="at_most_once"
    )
    key = ids.idempotency_key(op, "call_1")
    render_request(user=owner, key=key, params={**args, "characters": {}})
    [line] = Runner().recover()
    assert "settled by the reconciler" in line, line
    session.refresh_from_db()
    lease = operation_claim(owner="r1", now=NOW, lease_seconds=15, operation_id=op)
    leaf = session.leaf_id
    _finish_with_reply(op, lease.fencing, leaf, attempt="a2", reply_id="A2", at=NOW)
    session.refresh_from_db()
    return session


def without_keys(lines):
    """``without_operation_ids``, and the key the reconciler's evidence names taken out."""
    out = without_operation_ids(lines)
    for data in out:
        if isinstance(data.get("evidence"), dict):
            data["evidence"] = {k: v for k, v in data["evidence"].items() if k != "idempotency_key"}
    return out


def test_a_reconciler_resolution_round_trips_with_its_evidence(alice):
    first = export(session_settled_by_the_reconciler(alice))
    [resolved] = [json.loads(line) for line in first if '"tool_resolved"' in line]
    assert resolved["resolved_by"] == "reconciler" and resolved["by"] == "reconciler"
    assert resolved["evidence"]["kind"] == "render_job"
    assert resolved["evidence"]["idempotency_key"] == ids.idempotency_key(
        resolved["operation_id"], "call_1"
    )

    imported = session_import(owner=alice, lines=first)
    second = export(imported)
    entries = [i for i, kind in enumerate(kinds(first)) if kind == "entry"]
    assert [first[i] for i in entries] == [second[i] for i in entries]  # byte for byte
    assert without_keys(first) == without_keys(second)
    [op] = Operation.objects.filter(session=imported)
    records = operation_records(operation_id=op.id)
    [t1] = [r for r in records if r.type == "tool_dispatched"]
    [moved] = [r for r in records if r.type == "tool_resolved"]
    assert moved.resolved_by == "reconciler"
    assert moved.evidence["idempotency_key"] == t1.idempotency_key  # the key moved with it
    assert moved.evidence["image_id"] == resolved["evidence"]["image_id"]
    third = export(session_import(owner=alice, lines=second))
    assert without_keys(second) == without_keys(third)
    call_command("journal_check", stdout=io.StringIO())


def test_a_reconciler_evidence_under_another_key_is_refused(alice, bob):
    lines = export(session_settled_by_the_reconciler(alice))
    at = _record(lines, "tool_resolved")
    data = json.loads(lines[at])
    data["evidence"]["idempotency_key"] = "k_" + "0" * 32
    lines[at] = json.dumps(data, ensure_ascii=False)
    before = counts()
    with pytest.raises(ImportRefused, match="evidence idempotency_key 'k_000") as refused:
        session_import(owner=alice, lines=lines)
    assert refused.value.line_no == at + 1
    assert counts() == before
