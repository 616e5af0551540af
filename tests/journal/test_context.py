"""journal.context.derive_messages: the model's view of a branch."""

from __future__ import annotations

from journal.context import NOT_RUN, derive_messages
from journal.entries import SummaryMessage, ToolResultMessage
from journal.tree import TreeIndex
from tests.support.factories import (
    article_entries,
    assistant,
    branch,
    compaction,
    result,
    state,
    user,
)


def roles(messages):
    return [m.role for m in messages]


def contents(messages):
    return [m.content for m in messages]


def test_plain_branch_skips_state_and_branch_entries():
    msgs = derive_messages(article_entries(), "e6")
    assert contents(msgs) == [
        "吃下超级棒棒糖，上擂台对决超人强！",
        "擂台吃糖分镜 v1.png",
        "使出降龙十巴掌拍飞超人强！",
    ]
    assert derive_messages(article_entries(), None) == []


def test_tool_round_trip_kept_in_order():
    entries = [
        user("u", None),
        assistant("a", "u", calls=[("c1", "generate_image"), ("c2", "list_panels")]),
        result("r1", "a", "c1"),
        state("s", "r1", {"x": 1}),
        result("r2", "s", "c2", "list_panels"),
        assistant("f", "r2", "done"),
    ]
    msgs = derive_messages(entries, "f")
    assert roles(msgs) == ["user", "assistant", "tool_result", "tool_result", "assistant"]
    assert [m.tool_call_id for m in msgs[2:4]] == ["c1", "c2"]


def test_call_without_result_on_the_path_gets_a_derived_error_in_call_order():
    entries = [
        user("u", None),
        assistant("a", "u", calls=[("c1", "generate_image"), ("c2", "publish_panel")]),
        result("r2", "a", "c2", "publish_panel"),
        result("r1", "r2", "c1"),  # on another branch below
        branch("b", "r2", "r1"),
        user("u2", "b", "again"),
    ]
    msgs = derive_messages(entries, "u2")
    assert roles(msgs) == ["user", "assistant", "tool_result", "tool_result", "user"]
    got, derived = msgs[2], msgs[3]
    assert got.tool_call_id == "c2" and not got.is_error
    assert derived == ToolResultMessage(
        tool_call_id="c1", tool_name="generate_image", content=NOT_RUN, is_error=True
    )
    # derived results are never stored
    assert "c1" not in {
        e.message.tool_call_id for e in entries[:3] if getattr(e.message, "tool_call_id", None)
    }


def test_rewind_onto_an_assistant_with_calls_answers_them_all():
    entries = [
        user("u", None),
        assistant("a", "u", calls=[("c1", "generate_image"), ("c2", "list_panels")]),
        result("r1", "a", "c1"),
        branch("b", "a", "r1"),
    ]
    msgs = derive_messages(entries, "b")
    assert [(m.tool_call_id, m.content) for m in msgs[2:]] == [("c1", NOT_RUN), ("c2", NOT_RUN)]


def _long_session():
    entries = [user("u0", None, "start")]
    parent = "u0"
    for i in range(1, 6):
        entries.append(assistant(f"a{i}", parent, f"reply {i}", calls=[(f"c{i}", "gen")]))
        entries.append(result(f"r{i}", f"a{i}", f"c{i}", "gen"))
        entries.append(user(f"u{i}", f"r{i}", f"turn {i}"))
        parent = f"u{i}"
    return entries


def test_latest_compaction_only():
    entries = _long_session()
    entries.append(compaction("k1", "u3", first_kept="u2", summary="old summary"))
    entries.append(assistant("x", "k1", "after k1"))
    entries.append(compaction("k2", "x", first_kept="u3", summary="new summary"))
    entries.append(user("y", "k2", "after k2"))
    msgs = derive_messages(entries, "y")
    assert msgs[0] == SummaryMessage(content="new summary")
    assert contents(msgs[1:]) == ["turn 3", "after k1", "after k2"]
    assert "old summary" not in contents(msgs)


def test_kept_tail_never_starts_with_an_orphan_tool_result():
    entries = _long_session()
    entries.append(compaction("k", "u5", first_kept="r4"))
    msgs = derive_messages(entries, "k")
    assert roles(msgs) == [
        "summary",
        "assistant",
        "tool_result",
        "user",
        "assistant",
        "tool_result",
        "user",
    ]
    assert contents(msgs)[1] == "reply 4"


def test_first_kept_not_on_the_path_keeps_only_the_summary_and_what_follows():
    entries = _long_session()
    entries.append(compaction("k", "u5", first_kept="elsewhere"))
    entries.append(user("n", "k", "new"))
    msgs = derive_messages(entries, "n")
    assert roles(msgs) == ["summary", "user"]


def test_compaction_off_the_path_is_ignored():
    entries = _long_session()
    entries.append(compaction("k", "u5", first_kept="u4"))
    entries.append(branch("b", "u5", "k"))
    msgs = derive_messages(TreeIndex(entries), "b")
    assert "summary" not in roles(msgs) and contents(msgs)[0] == "start"


def test_orphan_results_are_dropped():
    entries = [user("u", None), result("r", "u", "ghost")]
    assert roles(derive_messages(entries, "r")) == ["user"]
