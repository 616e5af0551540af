"""How deep JSON may nest: one limit for every text from outside (a session file's line, a
request body, a frame) and one for every value the journal keeps, each decided by counting,
never by a RecursionError. Every reader of a session file refuses a line past it naming
the line, at any depth, and no line of any field's shape makes a reader fail otherwise.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import TypeAdapter

from journal.entries import (
    AppStateEntry,
    AssistantMessage,
    MessageEntry,
    ToolCall,
    ToolResultMessage,
    entry_to_dict,
    parse_entry,
)
from journal.ids import args_hash, canonical_json, idempotency_key, result_entry_id
from journal.importers import detect_format, session_read
from journal.jsonvalues import (
    JSON_DEPTH_MAX,
    JSON_VALUE_DEPTH_MAX,
    JsonTooDeep,
    check_json,
    json_loads,
    json_text_depth,
)
from journal.records import ToolDispatched, record_to_dict
from journal.session_file import FileRefused, header_line
from tests.support.deep_json import DEEP_FILES, TOO_DEEP, nested, nested_value, refusal

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
WHEN = "2026-01-01T00:00:00Z"


def depth_of(value: Any) -> int:
    """How deep a (shallow) value nests arrays and objects, by recursion: the reference."""
    if isinstance(value, dict):
        return 1 + max(map(depth_of, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(depth_of, value), default=0)
    return 0


# Strings full of what a bracket counter could mistake for structure.
tricky_text = st.text(alphabet='[]{}"\\/ ,:ab\n\u2028猪', max_size=8)
tricky_json = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), tricky_text),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(tricky_text, inner, max_size=3)
    ),
    max_leaves=12,
)


# -- the count ------------------------------------------------------------------------


@given(tricky_json, st.booleans(), st.sampled_from([None, 0, 2]))
def test_the_text_depth_is_the_values_depth(value, ascii_only, indent):
    text = json.dumps(value, ensure_ascii=ascii_only, indent=indent)
    assert json_text_depth(text) == depth_of(value)
    assert check_json(value, depth_max=depth_of(value)) is value
    if depth_of(value):
        with pytest.raises(JsonTooDeep):
            check_json(value, depth_max=depth_of(value) - 1)


@pytest.mark.parametrize(
    ("text", "depth"),
    [("0", 0), ("[]", 1), ("{}", 1), ('[{"a":[]}]', 3), ('"[[[[["', 0), ('["\\"[[", [[]]]', 3)],
)
def test_brackets_inside_strings_do_not_count(text, depth):
    assert json_text_depth(text) == depth == depth_of(json.loads(text))


def test_the_limits_are_exact():
    assert json_loads(nested(JSON_DEPTH_MAX)) == nested_value(JSON_DEPTH_MAX)
    with pytest.raises(JsonTooDeep, match=f"deeper than {JSON_DEPTH_MAX} levels"):
        json_loads(nested(JSON_DEPTH_MAX + 1))
    assert check_json(nested_value(JSON_VALUE_DEPTH_MAX - 1, leaf=[]))  # [] is a level too
    with pytest.raises(JsonTooDeep, match=f"deeper than {JSON_VALUE_DEPTH_MAX} levels"):
        check_json(nested_value(JSON_VALUE_DEPTH_MAX, leaf={}))


@pytest.mark.parametrize("depth", TOO_DEEP)
def test_any_depth_is_refused_by_its_count_not_by_a_recursion_error(depth):
    for text in (nested(depth), nested(depth).encode(), nested(depth).encode("utf-16")):
        with pytest.raises(JsonTooDeep) as refused:
            json_loads(text)
        assert isinstance(refused.value, ValueError)  # what every caller already catches
    with pytest.raises(JsonTooDeep):
        check_json(nested_value(depth))  # built without recursion, checked without it too


def test_a_value_that_contains_itself_is_refused_not_walked_forever():
    cycle: dict[str, Any] = {}
    cycle["self"] = cycle
    with pytest.raises(JsonTooDeep):
        check_json(cycle)


def test_pydantic_reads_every_text_the_limit_lets_through():
    """pydantic-core reads the journals' rows and the file's lines and has a limit of its
    own: below it, one rule decides for both."""
    assert TypeAdapter(Any).validate_json(nested(JSON_DEPTH_MAX)) == nested_value(JSON_DEPTH_MAX)


# -- what the journal keeps fits in a line ---------------------------------------------


def _deepest_lines(value: dict) -> list[str]:
    """Lines of an export with ``value`` in every place a free JSON value can be kept."""
    call = ToolCall(id="c1", name="draw", arguments=value)
    dispatched = ToolDispatched(
        operation_id="op_1",
        tool_call_id="c1",
        assistant_entry_id="e1",
        result_entry_id=result_entry_id("e1", "c1"),
        tool_name="draw",
        args=value,
        args_hash=args_hash(value),
        idempotency_key=idempotency_key("op_1", "c1"),
        policy="at_most_once",
        dispatch_attempt=1,
        timestamp=WHEN,
    )
    entries = [
        AppStateEntry(id="e0", parent_id=None, timestamp=WHEN, value=value),
        MessageEntry(
            id="e1",
            parent_id="e0",
            timestamp=WHEN,
            message=AssistantMessage(content="", tool_calls=[call], stop_reason="tool_use"),
        ),
        MessageEntry(
            id="e2",
            parent_id="e1",
            timestamp=WHEN,
            message=ToolResultMessage(
                tool_call_id="c1", tool_name="draw", content="drawn", details=value
            ),
        ),
    ]
    header = header_line(
        {
            "id": "s",
            "title": "t",
            "initial_app_state": value,
            "leaf_id": "e2",
            "created_at": WHEN,
            "updated_at": WHEN,
            "entry_count": 3,
            "operation_count": 1,
        },
        label_count=0,
        image_count=0,
    )
    return [
        header,
        *(canonical_json(entry_to_dict(e)) for e in entries),
        canonical_json(record_to_dict(dispatched)),
    ]


def test_a_value_as_deep_as_the_journal_keeps_fits_in_every_line_it_travels_in():
    deepest = {"a": nested_value(JSON_VALUE_DEPTH_MAX - 1)}
    for line in _deepest_lines(deepest):
        assert json_text_depth(line) <= JSON_DEPTH_MAX, line[:80]
        assert json_loads(line)
    entry = _deepest_lines(deepest)[3]
    assert parse_entry(json.loads(entry)).message.details == deepest  # and reads back


# -- the readers ----------------------------------------------------------------------


@pytest.mark.parametrize("kind", DEEP_FILES)
@pytest.mark.parametrize("depth", TOO_DEEP)
def test_every_reader_refuses_a_line_nested_past_the_limit_naming_it(kind, depth):
    build, line_no = DEEP_FILES[kind]
    lines = build(depth)
    with pytest.raises(FileRefused) as refused:
        session_read(lines)
    assert str(refused.value) == refusal(line_no)
    assert session_read(build(3)).entries  # the same file, shallow, reads


@pytest.mark.parametrize("depth", TOO_DEEP)
def test_a_first_line_nested_past_the_limit_is_refused_as_line_1(depth):
    first = '{"type":"session","version":3,"id":"x","cwd":' + nested(depth) + "}"
    assert detect_format(first) == "jaiweb"  # too deep to tell: jaiweb's reader says why
    with pytest.raises(FileRefused) as refused:
        session_read([first])
    assert str(refused.value) == refusal(1)


def test_a_pi_custom_entry_too_deep_to_keep_is_refused_at_its_line():
    """Within the line's limit, but kept under ``pi.custom`` it would nest deeper than a
    value may: refused there, not stored to fail later."""
    build, line_no = DEEP_FILES["pi"]
    with pytest.raises(FileRefused) as refused:
        session_read(build(JSON_VALUE_DEPTH_MAX))
    assert refused.value.line_no == line_no
    assert f"JSON nested deeper than {JSON_VALUE_DEPTH_MAX} levels" in refused.value.reason


def _paths(value: Any, at: tuple = ()):
    yield at
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _paths(child, (*at, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from _paths(child, (*at, index))


def _with(value: Any, path: tuple, text: str) -> str:
    """The line ``value`` with the value at ``path`` written as ``text``."""
    copy = json.loads(json.dumps(value))
    spot = copy
    for step in path[:-1]:
        spot = spot[step]
    spot[path[-1]] = "__spot__"
    return json.dumps(copy, ensure_ascii=False).replace('"__spot__"', text)


# A field's value replaced by each of these: nested at the limits and far past them, and
# of every other JSON shape (a list or an object where text was, and the other way round).
SHAPES = [
    nested(JSON_VALUE_DEPTH_MAX - 3),
    nested(JSON_DEPTH_MAX - 1),
    nested(3_000),
    '{"a":{}}',
    "7",
    "null",
]


@pytest.mark.parametrize(
    "fixture",
    ["pi/episode.jsonl", "claude_code/session.jsonl", "jaiweb/article_v1.jsonl"],
)
def test_no_field_of_any_shape_makes_a_reader_fail_but_by_refusing(fixture):
    """Each field of each line, in turn, of each shape: the file reads, or is refused
    naming a line; and what reads is kept in lines no deeper than the limit."""
    lines = (FIXTURES / fixture).read_text(encoding="utf-8").splitlines()
    outcomes = {"read": 0, "refused": 0}
    for n, line in enumerate(lines):
        data = json.loads(line)
        for path in list(_paths(data))[1:]:
            for shape in SHAPES:
                changed = [*lines[:n], _with(data, path, shape), *lines[n + 1 :]]
                try:
                    parsed = session_read(changed)
                except FileRefused as exc:
                    assert 1 <= exc.line_no <= len(lines), str(exc)
                    outcomes["refused"] += 1
                    continue
                for entry in parsed.entries:
                    assert json_text_depth(canonical_json(entry_to_dict(entry))) <= JSON_DEPTH_MAX
                outcomes["read"] += 1
    assert outcomes["read"] and outcomes["refused"]
