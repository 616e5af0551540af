"""The pure side of bundles (journal.session_file): an image id renamed wherever the entries
and records say it — details, tool arguments, text — never in the ids of the tree and the
logs, with T1's args_hash derived again; and how an image's first bytes are checked."""

from __future__ import annotations

import base64
import hashlib
import json
from datetime import UTC, datetime

import pytest

from journal import ids
from journal.session_file import (
    FileRefused,
    image_line,
    image_looks_like,
    images_named,
    images_renamed,
    renamed_image_id,
    session_file_read,
)

T = "2026-11-30T12:00:00Z"
OLD = "img_0123456789abcdef0123"
SVG = b'<svg xmlns="http://www.w3.org/2000/svg"/>'


def entry(id_, parent, message):
    return {"type": "message", "id": id_, "parent_id": parent, "timestamp": T, "message": message}


def file_lines(*, image_id=OLD, data=SVG, entry_named_like_the_image=False):
    """A finished run that drew a panel and published it, the panel carried along."""
    op = "op_1"
    args = {"image_id": image_id, "caption": f"see {image_id}"}
    result_id = ids.result_entry_id("A1", "call_2")
    entries = [
        entry("e0", None, {"role": "user", "content": "画吧"}),
        entry(
            "A0",
            "e0",
            {
                "role": "assistant",
                "content": "",
                "stop_reason": "tool_use",
                "tool_calls": [
                    {"id": "call_1", "name": "generate_image", "arguments": {"prompt": "猪"}}
                ],
            },
        ),
        entry(
            "R0",
            "A0",
            {
                "role": "tool_result",
                "tool_call_id": "call_1",
                "tool_name": "generate_image",
                "content": "panel rendered",
                "details": {"image_id": image_id},
            },
        ),
        entry(
            "A1",
            "R0",
            {
                "role": "assistant",
                "content": f"发布 {image_id}。",
                "stop_reason": "tool_use",
                "tool_calls": [{"id": "call_2", "name": "publish_panel", "arguments": args}],
            },
        ),
        entry(
            result_id,
            "A1",
            {
                "role": "tool_result",
                "tool_call_id": "call_2",
                "tool_name": "publish_panel",
                "content": "published",
                "details": {"image_id": image_id, "post_id": "p1"},
            },
        ),
        entry("A2", result_id, {"role": "assistant", "content": "好了", "stop_reason": "stop"}),
    ]
    if entry_named_like_the_image:
        entries.append(entry(image_id, "A2", {"role": "user", "content": image_id}))
    records = [
        {
            "type": "operation_accepted",
            "operation_id": op,
            "timestamp": T,
            "kind": "prompt",
            "input_entry_id": "e0",
            "start_leaf_id": None,
        },
        {
            "type": "model_attempted",
            "operation_id": op,
            "timestamp": T,
            "attempt_id": "a1",
            "assistant_entry_id": "A1",
            "model": "m",
        },
        {
            "type": "tool_dispatched",
            "operation_id": op,
            "timestamp": T,
            "tool_call_id": "call_2",
            "tool_name": "publish_panel",
            "assistant_entry_id": "A1",
            "args": args,
            "args_hash": ids.args_hash(args),
            "result_entry_id": result_id,
            "idempotency_key": ids.idempotency_key(op, "call_2"),
            "policy": "at_most_once",
        },
        {
            "type": "model_attempted",
            "operation_id": op,
            "timestamp": T,
            "attempt_id": "a2",
            "assistant_entry_id": "A2",
            "model": "m",
        },
        {"type": "operation_finished", "operation_id": op, "timestamp": T, "outcome": "completed"},
    ]
    # A0's call came before this operation (a hand-made file): entries need no operation
    header = {
        "format": "jaiweb-session",
        "version": 2,
        "session": {
            "id": "s_1",
            "title": "t",
            "initial_app_state": {},
            "leaf_id": entries[-1]["id"],
            "created_at": T,
            "updated_at": T,
            "entry_count": len(entries),
            "operation_count": 1,
            "label_count": 0,
            "image_count": 1,
        },
    }
    image = image_line(image_id=image_id, content_type="image/svg+xml", data=data)
    return [json.dumps(header), *map(json.dumps, entries), *map(json.dumps, records), image]


def test_a_rename_reaches_details_arguments_and_text_and_rederives_args_hash():
    parsed = session_file_read(file_lines())
    assert images_named(parsed.entries) == [OLD]
    new = renamed_image_id(OLD, parsed.images[0].sha256, "42")
    assert new.startswith("img_") and len(new) == 24
    assert new == renamed_image_id(OLD, parsed.images[0].sha256, "42")  # deterministic
    assert new != renamed_image_id(OLD, parsed.images[0].sha256, "43")
    assert new != renamed_image_id(OLD, parsed.images[0].sha256, "42", attempt=2)

    renamed = images_renamed(parsed, {OLD: new})
    text = json.dumps([e.model_dump(mode="json") for e in renamed.entries], ensure_ascii=False)
    # two results' details, the call's argument and caption, the narration
    assert OLD not in text and text.count(new) == 5
    publish = renamed.entries[3].message
    assert publish.tool_calls[0].arguments == {"image_id": new, "caption": f"see {new}"}
    assert publish.content == f"发布 {new}。"
    dispatched = next(
        r for op in renamed.operations for r in op.records if r.type == "tool_dispatched"
    )
    assert dispatched.args == {"image_id": new, "caption": f"see {new}"}
    assert dispatched.args_hash == ids.args_hash(dispatched.args)
    assert dispatched.idempotency_key == ids.idempotency_key("op_1", "call_2")  # ids unchanged
    assert [e.id for e in renamed.entries] == [e.id for e in parsed.entries]
    assert renamed.images[0].id == new and renamed.images[0].data == SVG
    # the original is untouched
    assert parsed.entries[2].message.details == {"image_id": OLD}


def test_ids_of_the_tree_are_never_renamed():
    """An entry whose id happens to be an image's keeps it; its text (content) does change."""
    parsed = session_file_read(file_lines(entry_named_like_the_image=True))
    renamed = images_renamed(parsed, {OLD: "img_new"})
    last = renamed.entries[-1]
    assert (last.id, last.message.content) == (OLD, "img_new")


def test_a_rename_only_replaces_the_whole_id():
    parsed = session_file_read(file_lines(image_id="img_ab"))
    renamed = images_renamed(parsed, {"img_ab": "img_zz"})
    # "img_ab" inside a longer token is not the image
    assert renamed.entries[3].message.content == "发布 img_zz。"
    walk = images_renamed(parsed, {"img_a": "img_x"})
    assert walk.entries[3].message.content == "发布 img_ab。"


def test_no_rename_is_the_same_file():
    parsed = session_file_read(file_lines())
    assert images_renamed(parsed, {}) is parsed


@pytest.mark.parametrize(
    ("content_type", "data", "ok"),
    [
        ("image/svg+xml", SVG, True),
        ("image/svg+xml", b'\xef\xbb\xbf<?xml version="1.0"?>\n<svg/>', True),
        ("image/svg+xml", b"<html><svg/></html>", False),
        ("image/png", b"\x89PNG\r\n\x1a\n\x00\x00", True),
        ("image/png", SVG, False),
        ("image/jpeg", b"\xff\xd8\xff\xe0", True),
        ("image/webp", b"RIFF\x00\x00\x00\x00WEBPVP8 ", True),
        ("image/webp", b"RIFF\x00\x00\x00\x00WAVE", False),
        ("text/html", SVG, False),
    ],
)
def test_an_image_is_what_it_says(content_type, data, ok):
    assert image_looks_like(content_type, data) is ok


def test_an_image_line_is_checked_against_its_bytes():
    lines = file_lines()
    image = json.loads(lines[-1])
    assert image["sha256"] == hashlib.sha256(SVG).hexdigest()
    assert base64.b64decode(image["data"]) == SVG and image["size"] == len(SVG)
    image["data"] = base64.b64encode(SVG + b" ").decode()
    lines[-1] = json.dumps(image)
    with pytest.raises(FileRefused, match=f"line {len(lines)}: image .*size {len(SVG)}"):
        session_file_read(lines)


def test_label_lines_are_dated():
    from journal.session_file import label_line

    line = label_line(
        entry_id="e0", kind="bookmark", text="", created_at=datetime(2026, 1, 1, tzinfo=UTC)
    )
    assert line == (
        '{"created_at":"2026-01-01T00:00:00Z","entry_id":"e0","kind":"bookmark","text":"",'
        '"type":"label"}'
    )
