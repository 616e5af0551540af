"""What the model sees: the active branch as messages, compaction-aware.

See docs/ARCHITECTURE.md §8.
"""

from __future__ import annotations

from collections.abc import Iterable

from journal.entries import (
    AssistantMessage,
    ContextMessage,
    Entry,
    MessageEntry,
    SummaryMessage,
    ToolCall,
    ToolResultMessage,
)
from journal.tree import TreeIndex, branch_of

NOT_RUN = "not run on this branch"


def derive_messages(
    index_or_entries: TreeIndex | Iterable[Entry], leaf_id: str | None
) -> list[ContextMessage]:
    """The messages for the model at ``leaf_id``.

    * Only the latest compaction on the path counts: its summary comes first, then the
      path from its ``first_kept_entry_id`` on (moved back to the assistant message when
      that id is a tool result, so no kept tail starts with an answer to a cut call).
      A ``first_kept_entry_id`` that is not on the path keeps only the summary and what
      follows the compaction.
    * A tool call whose result is not on the path gets a derived error result, placed
      after the results its message did get, before the next message.
    * A tool result that answers no call of the message before it is dropped, so the
      context the provider sees is always well formed.
    """
    path = branch_of(index_or_entries, leaf_id)
    out, compaction = _messages(path)
    if compaction is not None:  # only the latest compaction on the path counts
        pos = next(i for i in range(len(path) - 1, -1, -1) if path[i] is compaction)
        out, _ = _messages(path[_kept_start(path, pos, compaction.first_kept_entry_id) :])
        out.insert(0, SummaryMessage(content=compaction.summary))
    return out


def _messages(path: list[Entry]) -> tuple[list[ContextMessage], Entry | None]:
    """The messages of ``path``, each tool call answered once, and the path's last
    compaction (None when it has none). One pass, since this runs for every model call on
    paths as deep as a session grows."""
    out: list[ContextMessage] = []
    keep = out.append
    pending: list[ToolCall] = []  # calls of the last assistant message still unanswered
    compaction = None
    for entry in path:
        kind = entry.type
        if kind != "message":
            if kind == "compaction":
                compaction = entry
            continue
        message = entry.message
        role = message.role
        if role == "tool_result":
            if pending:
                call_id = message.tool_call_id
                for i, call in enumerate(pending):
                    if call.id == call_id:
                        del pending[i]
                        keep(message)
                        break
            continue
        if pending:
            _close(pending, out)
        keep(message)
        if role == "assistant" and message.tool_calls:
            pending = list(message.tool_calls)
    _close(pending, out)
    return out, compaction


def _close(pending: list[ToolCall], out: list[ContextMessage]) -> None:
    """Answer the calls that got no result on this branch, in call order."""
    for call in pending:
        out.append(
            ToolResultMessage(
                tool_call_id=call.id, tool_name=call.name, content=NOT_RUN, is_error=True
            )
        )
    pending.clear()


def _kept_start(path: list[Entry], compaction_pos: int, first_kept_id: str) -> int:
    """Where the kept tail starts on the path."""
    kept = next((i for i, e in enumerate(path) if e.id == first_kept_id), None)
    if kept is None:
        return compaction_pos + 1
    first = path[kept]
    if isinstance(first, MessageEntry) and isinstance(first.message, ToolResultMessage):
        call_id = first.message.tool_call_id
        for i in range(kept - 1, -1, -1):
            candidate = path[i]
            if isinstance(candidate, MessageEntry) and isinstance(
                candidate.message, AssistantMessage
            ):
                if any(c.id == call_id for c in candidate.message.tool_calls):
                    return i
                break  # the call is not on the path: the orphan result is dropped below
    return kept
