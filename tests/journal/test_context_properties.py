"""``derive_messages`` under compaction, on random paths (hypothesis).

Whatever the path and wherever a compaction points: the summary comes first, the kept
tail never starts at a tool result, and every tool call in the context has exactly one
result, stored or derived, right after its message; no result answers a call the context
does not show.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from journal.context import derive_messages
from journal.entries import (
    AssistantMessage,
    CompactionEntry,
    MessageEntry,
    SummaryMessage,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from tests.support.factories import T0


@st.composite
def paths(draw):
    """A root → leaf path of turns: prompts, replies with calls, some results, compactions."""
    entries, counter = [], iter(range(10_000))

    def add(entry_cls, **fields):
        eid = f"e{next(counter)}"
        parent = entries[-1].id if entries else None
        entries.append(entry_cls(id=eid, parent_id=parent, timestamp=T0, **fields))
        return eid

    for _ in range(draw(st.integers(1, 8))):
        add(MessageEntry, message=UserMessage(content="prompt"))
        n_calls = draw(st.integers(0, 3))
        calls = [ToolCall(id=f"c{next(counter)}", name="t", arguments={}) for _ in range(n_calls)]
        add(
            MessageEntry,
            message=AssistantMessage(
                content="reply", tool_calls=calls, stop_reason="tool_use" if calls else "stop"
            ),
        )
        for call in draw(st.permutations(calls)):
            if draw(st.booleans()):
                add(
                    MessageEntry,
                    message=ToolResultMessage(tool_call_id=call.id, tool_name="t", content="r"),
                )
        if draw(st.integers(0, 3)) == 0:  # a compaction pointing anywhere, or nowhere
            ids = [e.id for e in entries] + ["not-on-the-path"]
            add(
                CompactionEntry,
                summary="so far",
                first_kept_entry_id=draw(st.sampled_from(ids)),
                tokens_before=10,
                tokens_after=5,
            )
    return entries


@settings(max_examples=300)
@given(paths())
def test_the_context_is_always_well_formed(path):
    out = derive_messages(path, path[-1].id)
    compacted = any(isinstance(e, CompactionEntry) for e in path)
    if compacted:
        assert isinstance(out[0], SummaryMessage)
        tail = out[1:]
        assert not tail or not isinstance(tail[0], ToolResultMessage), "tail starts at a result"
    else:
        tail = out
    assert not any(isinstance(m, SummaryMessage) for m in tail)
    pending: list[str] = []
    for message in tail:
        if isinstance(message, ToolResultMessage):
            assert message.tool_call_id in pending, "a result for a call not shown, or twice"
            pending.remove(message.tool_call_id)
            continue
        assert not pending, f"calls {pending} got no result"
        if isinstance(message, AssistantMessage):
            pending = [c.id for c in message.tool_calls]
    assert not pending, f"calls {pending} got no result"
