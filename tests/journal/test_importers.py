"""Readers of other tools' session files (journal.importers): pi's JSONL v3 and Claude Code's
transcripts become the expected jaiweb trees; a malformed file is refused naming its line.

The fixtures under tests/fixtures/ were written from the formats' documentation (pi-mono's
packages/coding-agent/docs/session.md; the community's notes on Claude Code's transcripts),
never fetched at run time.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from journal.context import derive_messages
from journal.entries import AppStateEntry, CompactionEntry, MessageEntry
from journal.importers import detect_format, session_read
from journal.importers.claude_code import claude_code_session_read
from journal.importers.pi import pi_session_read
from journal.session_file import FileRefused
from journal.snapshot import branch_app_state

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
IMPORTERS = Path(__file__).resolve().parents[2] / "journal" / "importers"


def read(path: Path):
    with open(path, "rb") as lines:
        return session_read(lines)


def shape(entry) -> tuple:
    """(id, parent, kind): a message's kind is its role."""
    kind = entry.message.role if isinstance(entry, MessageEntry) else entry.type
    return (entry.id, entry.parent_id, kind)


def by_id(parsed):
    return {e.id: e for e in parsed.entries}


# -- pi ------------------------------------------------------------------------------

PI_TREE = [
    ("a1b2c3d4", None, "user"),
    ("b2c3d4e5", "a1b2c3d4", "assistant"),
    ("c3d4e5f6", "b2c3d4e5", "tool_result"),
    ("d4e5f6a7", "c3d4e5f6", "assistant"),
    ("e5f6a7b8", "d4e5f6a7", "app_state"),  # model_change
    ("f6a7b8c9", "e5f6a7b8", "app_state"),  # thinking_level_change
    ("a7b8c9d0", "f6a7b8c9", "user"),
    ("b8c9d0e1", "a7b8c9d0", "assistant"),
    ("c9d0e1f2", "d4e5f6a7", "user"),  # branch_summary: back at d4e5f6a7
    ("d0e1f2a3", "c9d0e1f2", "user"),
    ("e1f2a3b4", "d0e1f2a3", "assistant"),
    ("f2a3b4c5", "e1f2a3b4", "app_state"),  # label
    ("a3b4c5d6", "f2a3b4c5", "app_state"),  # session_info
    ("b4c5d6e7", "a3b4c5d6", "app_state"),  # custom
    ("c5d6e7f8", "b4c5d6e7", "user"),  # custom_message
    ("d6e7f8a9", "c5d6e7f8", "compaction"),
    ("e7f8a9b0", "d6e7f8a9", "user"),  # bashExecution
    ("f8a9b0c1", "e7f8a9b0", "assistant"),
    ("a9b0c1d2", "f8a9b0c1", "tool_result"),
    ("b0c1d2e3", "a9b0c1d2", "app_state"),  # label
    ("c1d2e3f4", "b0c1d2e3", "app_state"),  # the label cleared
]


def test_a_pi_session_becomes_the_same_tree():
    parsed = read(FIXTURES / "pi" / "episode.jsonl")
    assert parsed.source == "pi"
    assert [shape(e) for e in parsed.entries] == PI_TREE
    header = parsed.header
    assert header.title == "猪猪侠大战超人强"  # the session_info name
    assert header.leaf_id == "c1d2e3f4" and header.entry_count == 21
    assert header.id == "e99116ac-a6da-48fc-ad8b-2feca1c51550"
    assert header.created_at.isoformat() == "2026-01-24T16:22:26.831000+00:00"
    # the labels: the latest per target, a cleared one gone
    assert [(la.entry_id, la.kind, la.text) for la in parsed.labels] == [
        ("b2c3d4e5", "label", "第一次调用")
    ]


def test_pi_messages_map_and_the_rest_is_kept():
    entries = by_id(read(FIXTURES / "pi" / "episode.jsonl"))
    reply = entries["b2c3d4e5"].message
    assert reply.content == "[thinking]\nFirst look at the panels folder.\n\n我先看看已有的分镜。"
    assert [(c.id, c.name, c.arguments) for c in reply.tool_calls] == [
        ("toolu_01A", "bash", {"command": "ls panels"})
    ]
    assert (reply.stop_reason, reply.usage.input_tokens, reply.usage.output_tokens) == (
        "tool_use",
        812,
        64,
    )
    result = entries["c3d4e5f6"].message
    assert (result.tool_call_id, result.tool_name, result.content, result.is_error) == (
        "toolu_01A",
        "bash",
        "panel-1.svg\npanel-2.svg",
        False,
    )
    assert result.details == {"exitCode": 0}
    # a call id jaiweb cannot keep gets a derived one, the same in the call and its result
    call = entries["f8a9b0c1"].message.tool_calls[0]
    assert call.id.startswith("c_") and entries["a9b0c1d2"].message.tool_call_id == call.id
    assert entries["a9b0c1d2"].message.is_error is True
    assert entries["e1f2a3b4"].message.stop_reason == "error"
    assert entries["e1f2a3b4"].message.content == "[error] overloaded_error"
    assert entries["a7b8c9d0"].message.content == "照这张图画\n\n[image image/png, about 9 bytes]"
    assert entries["c9d0e1f2"].message.content.startswith("[branch summary, from b8c9d0e1] ")
    assert entries["c5d6e7f8"].message.content == "[reminder] 记得加拟声词"
    assert entries["e7f8a9b0"].message.content == "[bash] $ ls panels\npanel-1.svg\n\n[exit 0]"
    compaction = entries["d6e7f8a9"]
    assert isinstance(compaction, CompactionEntry)
    assert (compaction.first_kept_entry_id, compaction.tokens_before) == ("d0e1f2a3", 50000)
    assert "panels/panel-1.svg" in compaction.summary
    # settings pi keeps on the path are app state: they roll back with a rewind
    state = entries["b4c5d6e7"].value
    assert state["pi"] == {
        "label": {"targetId": "b2c3d4e5", "label": "第一次调用"},
        "session_info": {"name": "猪猪侠大战超人强"},
        "custom": {"todo": {"items": ["画第三格"]}},
    }  # the model change is on the branch left at d4e5f6a7, not on this path
    assert state["characters"] == {} and state["permission_mode"] == "ask"
    # back at d4e5f6a7 (the branch summary's side), the model change is not on the path
    initial = {"characters": {}, "permission_mode": "ask"}
    assert "pi" not in branch_app_state(list(entries.values()), "d0e1f2a3", initial)
    assert branch_app_state(list(entries.values()), "b8c9d0e1", initial)["pi"] == {
        "model_change": {"provider": "openai", "modelId": "gpt-4o"},
        "thinking_level_change": {"thinkingLevel": "high"},
    }


def test_the_context_of_an_imported_pi_session_can_be_derived():
    parsed = read(FIXTURES / "pi" / "episode.jsonl")
    messages = derive_messages(parsed.entries, parsed.header.leaf_id)
    assert messages[0].role == "summary"  # the compaction on the path
    assert [m.role for m in messages[1:]] == [
        "user",  # d0e1f2a3, the first kept
        "assistant",
        "user",  # custom_message
        "user",  # bashExecution
        "assistant",
        "tool_result",
    ]


def test_pi_roots_beyond_the_first_hang_from_one_more_node():
    parsed = read(FIXTURES / "pi" / "two_roots.jsonl")
    assert [shape(e) for e in parsed.entries] == [
        ("pi-root", None, "app_state"),
        ("11111111", "pi-root", "user"),
        ("22222222", "11111111", "assistant"),
        ("33333333", "pi-root", "user"),
    ]
    assert parsed.header.title == "hello"


def pi_lines(*entries, header=None):
    head = header or {
        "type": "session",
        "version": 3,
        "id": "x",
        "timestamp": "2026-01-01T00:00:00Z",
    }
    return [json.dumps(head), *(json.dumps(e) if isinstance(e, dict) else e for e in entries)]


def msg(id_, parent, role="user", **message):
    message.setdefault("content", "hi")
    return {
        "type": "message",
        "id": id_,
        "parentId": parent,
        "timestamp": "2026-01-01T00:00:01Z",
        "message": {"role": role, **message},
    }


PI_REFUSALS = [
    ("empty", [], 1, "the file is empty"),
    ("not json", pi_lines(msg("a", None), "{oops"), 3, "not JSON"),
    ("not an object", pi_lines("[1]"), 2, "not a JSON object"),
    (
        "version 1",
        pi_lines(header={"type": "session", "timestamp": "2026-01-01T00:00:00Z"}),
        1,
        "version 1",
    ),
    (
        "version 9",
        pi_lines(header={"type": "session", "version": 9, "timestamp": "x"}),
        1,
        "unsupported pi",
    ),
    ("no id", pi_lines(msg("a", None), {"type": "message", "parentId": "a"}), 3, "has no id"),
    ("no type", pi_lines({"id": "a", "parentId": None}), 2, "without a type"),
    ("unknown parent", pi_lines(msg("a", None), msg("b", "zz")), 3, "parent 'zz' is not earlier"),
    (
        "later parent",
        pi_lines(msg("a", None), msg("b", "c"), msg("c", "a")),
        3,
        "'c' is not earlier",
    ),
    ("id twice", pi_lines(msg("a", None), msg("a", None, content="other")), 3, "'a' twice"),
    (
        "second header",
        pi_lines(msg("a", None), {"type": "session", "version": 3}),
        3,
        "second session",
    ),
    (
        "no message",
        pi_lines({"type": "message", "id": "a", "parentId": None}),
        2,
        "without a message",
    ),
    ("bad time", pi_lines({**msg("a", None), "timestamp": "yesterday"}), 2, "not an ISO 8601"),
    (
        "label target",
        pi_lines(
            msg("a", None),
            {"type": "label", "id": "l", "parentId": "a", "targetId": "q", "label": "x"},
        ),
        3,
        "a label on 'q'",
    ),
    (
        "calls twice",
        pi_lines(
            msg("a", None),
            msg(
                "b",
                "a",
                "assistant",
                content=[
                    {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {}},
                    {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {}},
                ],
                stopReason="toolUse",
            ),
        ),
        3,
        "tool call ids must be unique",
    ),
    ("bad utf-8", [pi_lines()[0].encode(), b'{"type":"message","id":"\xff"}'], 2, "not UTF-8"),
]


@pytest.mark.parametrize(
    ("lines", "line_no", "reason"),
    [case[1:] for case in PI_REFUSALS],
    ids=[case[0] for case in PI_REFUSALS],
)
def test_a_malformed_pi_file_is_refused_naming_the_line(lines, line_no, reason):
    with pytest.raises(FileRefused) as refused:
        pi_session_read(lines)
    assert refused.value.line_no == line_no, str(refused.value)
    assert reason in refused.value.reason


def test_the_same_pi_line_twice_is_one_entry():
    lines = pi_lines(msg("a", None), msg("a", None))
    assert [e.id for e in pi_session_read(lines).entries] == ["a"]


# -- Claude Code ---------------------------------------------------------------------


def U(n: int) -> str:
    return f"{n:08d}-aaaa-4bbb-8ccc-{n:012d}"


CLAUDE_TREE = [
    (U(1), None, "user"),
    (U(2), U(1), "assistant"),  # three lines of one streamed message (U(2), U(3), U(4))
    (U(5), U(2), "tool_result"),
    (U(6), U(5), "assistant"),  # two parallel calls
    (U(7), U(6), "tool_result"),  # one line, three entries in a chain
    (U(7) + ".2", U(7), "tool_result"),
    (U(7) + ".3", U(7) + ".2", "user"),
    (U(8), U(7) + ".3", "assistant"),
    (U(9), U(8), "user"),
    (U(10), U(9), "assistant"),
    (U(11), U(8), "user"),  # redo from here: a second child of U(8)
    (U(12), U(11), "assistant"),
    (U(13), U(12), "app_state"),  # a system line, kept as data
    (U(14), U(13), "compaction"),  # a new root in Claude Code, under its logical parent here
    (U(15), U(14), "user"),  # the compaction's summary
    (U(16), U(15), "assistant"),
]


def test_a_claude_code_session_becomes_the_same_tree():
    parsed = read(FIXTURES / "claude_code" / "session.jsonl")
    assert parsed.source == "claude_code"
    assert [shape(e) for e in parsed.entries] == CLAUDE_TREE
    # the summary whose leaf is in this file; one naming another session's is not a title
    assert parsed.header.title == "Kung fu pig panels, then a cat"
    assert parsed.header.leaf_id == U(16)
    assert parsed.header.id == "95e6f011-ec33-4b37-91ad-5d242b40ae3d"
    assert parsed.labels == [] and parsed.operations == []


def test_claude_code_messages_map_and_the_rest_is_kept():
    entries = by_id(read(FIXTURES / "claude_code" / "session.jsonl"))
    reply = entries[U(2)].message
    assert reply.content == "[thinking]\nRead the script first.\n\nLet me read the script."
    assert [(c.id, c.name) for c in reply.tool_calls] == [
        ("toolu_01NzjV452AGVQR51StZtarfB", "Read")
    ]
    assert reply.stop_reason == "tool_use" and reply.usage.output_tokens == 25
    read_result = entries[U(5)].message
    assert (read_result.tool_name, read_result.content) == ("Read", "     1→猪猪侠吃下超级棒棒糖\n")
    assert read_result.details["tool_use_result"]["file"]["numLines"] == 1
    assert [c.name for c in entries[U(6)].message.tool_calls] == ["Bash", "Grep"]
    bash, grep = entries[U(7)].message, entries[U(7) + ".2"].message
    assert (bash.tool_call_id, bash.content, bash.is_error) == ("toolu_02", "panel-1.svg", False)
    assert bash.details == {
        "tool_use_result": {
            "stdout": "panel-1.svg",
            "stderr": "",
            "interrupted": False,
            "isImage": False,
        }
    }
    assert (grep.tool_name, grep.is_error, grep.details) == ("Grep", True, {})
    assert grep.content == "no match\ufffd"  # U+0000 cannot be kept: U+FFFD
    assert entries[U(7) + ".3"].message.content == "also: hurry up"
    assert entries[U(8)].message.stop_reason == "stop"
    assert entries[U(12)].message.stop_reason == "length"  # max_tokens
    system = entries[U(13)]
    assert isinstance(system, AppStateEntry)
    kept = system.value["claude_code"]["system"]
    assert (kept["subtype"], kept["content"], kept["level"]) == (
        "informational",
        "Context low",
        "info",
    )
    assert "sessionId" not in kept and "cwd" not in kept
    compaction = entries[U(14)]
    assert (compaction.tokens_before, compaction.first_kept_entry_id) == (155000, U(14))
    messages = derive_messages(list(entries.values()), U(16))
    assert [m.role for m in messages] == ["summary", "user", "assistant"]


def test_claude_code_sidechain_roots_hang_from_one_more_node():
    parsed = read(FIXTURES / "claude_code" / "sidechain.jsonl")
    assert [shape(e) for e in parsed.entries] == [
        ("claude-code-root", None, "app_state"),
        (U(1), "claude-code-root", "user"),
        (U(2), U(1), "assistant"),
        (U(3), "claude-code-root", "user"),
        (U(4), U(3), "assistant"),
    ]
    assert parsed.header.title == "main task"


def cc(uuid, parent, type_="user", **fields):
    content = fields.pop("content", "hi")
    return json.dumps(
        {
            "type": type_,
            "uuid": uuid,
            "parentUuid": parent,
            "sessionId": "s",
            "timestamp": "2026-01-01T00:00:00Z",
            "message": {"role": type_, "content": content},
            **fields,
        }
    )


CLAUDE_REFUSALS = [
    ("empty", [], 1, "the file is empty"),
    ("not json", [cc("a", None), "{oops"], 2, "not JSON"),
    ("not an object", [cc("a", None), "[]"], 2, "not a JSON object"),
    (
        "no uuid",
        [cc("a", None), json.dumps({"type": "user", "sessionId": "s", "message": {}})],
        2,
        "without a uuid",
    ),
    ("unknown parent", [cc("a", None), cc("b", "zz")], 2, "parent 'zz' is not earlier"),
    ("uuid twice", [cc("a", None), cc("a", None, content="other")], 2, "uuid 'a' twice"),
    ("bad time", [cc("a", None, timestamp="noon")], 1, "not an ISO 8601"),
    (
        "only summaries",
        [json.dumps({"type": "summary", "summary": "x", "leafUuid": "q"})],
        1,
        "no message line",
    ),
    ("no type", [cc("a", None), json.dumps({"uuid": "b", "sessionId": "s"})], 2, "without a type"),
]


@pytest.mark.parametrize(
    ("lines", "line_no", "reason"),
    [case[1:] for case in CLAUDE_REFUSALS],
    ids=[case[0] for case in CLAUDE_REFUSALS],
)
def test_a_malformed_claude_code_file_is_refused_naming_the_line(lines, line_no, reason):
    with pytest.raises(FileRefused) as refused:
        claude_code_session_read(lines)
    assert refused.value.line_no == line_no, str(refused.value)
    assert reason in refused.value.reason


# -- which reader ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("first", "expected"),
    [
        ('{"format":"jaiweb-session","version":2}', "jaiweb"),
        ('{"format":"other"}', "jaiweb"),
        ('{"type":"session","version":3,"id":"x","cwd":"/"}', "pi"),
        ('{"type":"user","uuid":"u","sessionId":"s"}', "claude_code"),
        ('{"type":"summary","summary":"t","leafUuid":"u"}', "claude_code"),
        ('{"type":"message","id":"e0"}', "jaiweb"),  # an entry without a header
        ("{oops", "jaiweb"),
        (None, "jaiweb"),
    ],
)
def test_the_first_line_says_which_reader(first, expected):
    assert detect_format(first) == expected


def test_a_file_of_none_of_them_is_refused_by_jaiwebs_reader():
    with pytest.raises(FileRefused, match="line 2: not a jaiweb-session header"):
        session_read(["", '{"type":"message","id":"e0"}'])


def test_the_importers_are_pure():
    """journal/importers is part of the core: no web stack, no I/O, no clock, no randomness."""
    forbidden = {"django", "jaiweb", "os", "time", "random", "uuid", "socket", "httpx"}
    for path in sorted(IMPORTERS.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            assert not [n for n in names if n.split(".")[0] in forbidden], (path, names)
            if isinstance(node, ast.Attribute):
                assert node.attr not in {"now", "utcnow", "today"}, path
