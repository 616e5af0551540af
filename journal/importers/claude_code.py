"""A Claude Code session transcript (``~/.claude/projects/…/<session>.jsonl``) as a jaiweb
session tree. What maps, maps; the rest is kept as text or as data.

Claude Code's file has no header: each line is a JSON object with a ``type``. Lines with a
``uuid`` are the conversation's nodes, linked by ``parentUuid`` (a "redo from here" is a
second child); ``summary`` lines (``summary``, ``leafUuid``) title it; other lines without
a ``uuid`` (``queue-operation``, ``file-history-snapshot``) are bookkeeping of the tool's
own and are left out. Node by node:

* ``user`` — a string content → a user message. Content blocks: each ``tool_result``
  block → a tool result (the tool's name from its call; the line's ``toolUseResult`` kept
  in ``details``), runs of ``text``/``image`` blocks → a user message (an image as a
  note of its type and size). One line may so become several entries in a chain: the
  first keeps the ``uuid``, the next ones ``<uuid>.2``, ``<uuid>.3``…, and the line's
  children hang from the last.
* ``assistant`` — Claude Code writes one API message as several lines (one per content
  block, each the child of the one before, all with the same ``message.id``): they are
  one assistant message here, under the first line's ``uuid``. ``text`` blocks are its
  text, ``thinking`` blocks are kept as ``[thinking]`` text, ``tool_use`` blocks are its
  tool calls; ``stop_reason`` (``end_turn`` → ``stop``, ``max_tokens`` → ``length``, …)
  and ``usage`` map.
* ``system`` with ``subtype`` ``compact_boundary`` → a compaction, placed under its
  ``logicalParentUuid`` (Claude Code makes it a new root); its summary is the user
  message that follows it, as in Claude Code.
* any other node (``system`` lines, ``progress``, kinds added later) → an ``app_state``
  entry: the state at its parent with the line's fields under
  ``state["claude_code"][type]`` — kept, but never sent to a model.

A node whose parent is not earlier in the file is refused (a broken chain). Several roots
(a sidechain's, a compaction's without a known logical parent) get one more node above
them, an ``app_state`` entry ``claude-code-root``. Text jaiweb cannot keep (U+0000, lone
surrogates) becomes U+FFFD.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from journal.entries import (
    AppStateEntry,
    AssistantMessage,
    CompactionEntry,
    MessageEntry,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from journal.importers.common import (
    INITIAL_STATE,
    Tree,
    as_text,
    call_id,
    clean,
    clean_text,
    entry_id,
    parse_time,
    refused_at,
    session_file,
    title_of,
    tool_call,
)
from journal.session_file import FileRefused, SessionFile, json_object, numbered_lines

LINE_TYPES = frozenset(
    {
        *("user", "assistant", "system", "summary", "progress", "attachment"),
        *("queue-operation", "file-history-snapshot"),
    }
)
MESSAGE_TYPES = frozenset({"user", "assistant"})
STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "max_tokens": "length",
    "tool_use": "tool_use",
    "refusal": "error",
}
# A line's place in the tree, and the envelope every line repeats: not kept in a state.
_STRUCTURE = frozenset(
    {
        *("type", "uuid", "parentUuid", "timestamp", "isSidechain", "userType", "cwd"),
        *("sessionId", "version", "gitBranch", "slug"),
    }
)


def is_claude_code_line(data: dict[str, Any]) -> bool:
    kind = data.get("type")
    return (
        isinstance(kind, str)
        and kind in LINE_TYPES
        and any(key in data for key in ("uuid", "sessionId", "leafUuid", "messageId", "operation"))
    )


@dataclass
class Node:
    """One node of the tree to be: a line, or the lines of one streamed API message."""

    kind: str
    uuid: str
    parent: str | None  # a uuid (resolved through ``Transcript.last``), or None for a root
    lines: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    message_id: str | None = None
    has_children: bool = False


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return clean_text(content)
    if not isinstance(content, list):
        return "" if content is None else as_text(content)
    return "\n\n".join(t for t in (_block_text(b) for b in content) if t)


def _block_text(block: Any) -> str:
    kind = block.get("type") if isinstance(block, dict) else None
    if kind == "text":
        return as_text(block.get("text", ""))
    if kind == "thinking":
        return "[thinking]\n" + as_text(block.get("thinking", ""))
    if kind == "redacted_thinking":
        return "[redacted thinking]"
    if kind == "image":
        source = block.get("source") if isinstance(block.get("source"), dict) else {}
        data = source.get("data")
        size = len(data) * 3 // 4 if isinstance(data, str) else 0
        return f"[image {as_text(source.get('media_type', '?'))}, about {size} bytes]"
    return as_text(block)


def _usage(raw: Any) -> Usage | None:
    if not isinstance(raw, dict):
        return None
    tokens = raw.get("input_tokens"), raw.get("output_tokens")
    if all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in tokens):
        return Usage(input_tokens=tokens[0], output_tokens=tokens[1])
    return None


class Transcript:
    def __init__(self) -> None:
        self.nodes: list[Node] = []
        self.by_uuid: dict[str, Node] = {}
        self.last: dict[str, str] = {}  # a node's uuid → the id of its last entry
        self.tool_names: dict[str, str] = {}  # a call's id (as written) → its tool's name
        self.summaries: list[tuple[str, str]] = []  # (leafUuid, summary)

    def read(self, numbered: Iterable[tuple[int, str]]) -> None:
        seen: dict[str, str] = {}
        for line_no, text in numbered:
            data = json_object(line_no, text)
            kind = data.get("type")
            if not isinstance(kind, str):
                raise FileRefused(line_no, "a line without a type")
            if "uuid" not in data:
                if kind in MESSAGE_TYPES:
                    raise FileRefused(line_no, f"a {kind} line without a uuid")
                if kind == "summary" and isinstance(data.get("summary"), str):
                    self.summaries.append((str(data.get("leafUuid")), data["summary"]))
                continue  # the tool's own bookkeeping: no place in the conversation
            uuid = entry_id(line_no, data.get("uuid"), "a line")
            if uuid in seen:
                if seen[uuid] == text:  # the very same line twice: one node
                    continue
                raise FileRefused(line_no, f"uuid {uuid!r} twice")
            seen[uuid] = text
            self._place(line_no, kind, uuid, data)

    def _place(self, line_no: int, kind: str, uuid: str, data: dict[str, Any]) -> None:
        raw_parent = data.get("parentUuid")
        if kind == "system" and data.get("subtype") == "compact_boundary":
            logical = data.get("logicalParentUuid")
            if raw_parent is None and isinstance(logical, str) and logical in self.by_uuid:
                raw_parent = logical
        if raw_parent is not None:
            if not isinstance(raw_parent, str):
                raise FileRefused(line_no, f"parentUuid {raw_parent!r} is not a uuid")
            raw_parent = clean_text(raw_parent)
            if raw_parent not in self.by_uuid:
                raise FileRefused(line_no, f"parent {raw_parent!r} is not earlier in the file")
        message = data.get("message") if isinstance(data.get("message"), dict) else {}
        message_id = message.get("id") if kind == "assistant" else None
        parent = self.by_uuid.get(raw_parent) if raw_parent is not None else None
        if (
            parent is not None
            and message_id
            and parent.kind == "assistant"
            and parent.message_id == message_id
            and parent.lines[-1][1].get("uuid") == raw_parent
            and not parent.has_children
        ):  # the next block of the same streamed message
            parent.lines.append((line_no, data))
            self.by_uuid[uuid] = parent
            return
        if parent is not None:
            parent.has_children = True
        node = Node(kind, uuid, parent.uuid if parent else None, [(line_no, data)], message_id)
        self.nodes.append(node)
        self.by_uuid[uuid] = node

    # -- building -------------------------------------------------------------------

    def build(self, tree: Tree, top: str | None) -> None:
        last_time = tree.created_at
        for node in self.nodes:
            line_no, data = node.lines[0]
            last_time = parse_time(line_no, data.get("timestamp"), last_time)
            parent = self.last[node.parent] if node.parent is not None else top
            if node.kind == "assistant":
                with refused_at(line_no, "an assistant message"):
                    message = self._assistant(node)
                tree.add(
                    line_no,
                    MessageEntry,
                    id=node.uuid,
                    parent_id=parent,
                    timestamp=last_time,
                    message=message,
                )
                self.last[node.uuid] = node.uuid
            elif node.kind == "user":
                with refused_at(line_no, "a user message"):
                    self.last[node.uuid] = self._user(tree, node, parent, last_time)
            elif node.kind == "system" and data.get("subtype") == "compact_boundary":
                meta = data.get("compactMetadata")
                before = meta.get("preTokens") if isinstance(meta, dict) else None
                tree.add(
                    line_no,
                    CompactionEntry,
                    id=node.uuid,
                    parent_id=parent,
                    timestamp=last_time,
                    summary=as_text(data.get("content") or "conversation compacted"),
                    first_kept_entry_id=node.uuid,  # what follows it, as in Claude Code
                    tokens_before=before if isinstance(before, int) and before >= 0 else 0,
                    tokens_after=0,
                )
                self.last[node.uuid] = node.uuid
            else:
                state = tree.state_at(parent)
                kept = dict(state.get("claude_code") or {})
                kept[clean_text(node.kind)] = clean(
                    {k: v for k, v in data.items() if k not in _STRUCTURE}
                )
                tree.add(
                    line_no,
                    AppStateEntry,
                    id=node.uuid,
                    parent_id=parent,
                    timestamp=last_time,
                    value={**state, "claude_code": kept},
                )
                self.last[node.uuid] = node.uuid

    def _assistant(self, node: Node) -> AssistantMessage:
        texts, calls = [], []
        stop, usage, api_error = None, None, False
        for line_no, data in node.lines:
            message = data.get("message") if isinstance(data.get("message"), dict) else {}
            content = message.get("content")
            for block in content if isinstance(content, list) else [content]:
                kind = block.get("type") if isinstance(block, dict) else None
                if kind in ("tool_use", "server_tool_use"):
                    raw_id = block.get("id")
                    call = tool_call(line_no, raw_id, block.get("name"), block.get("input"))
                    self.tool_names[as_text(raw_id)] = call.name
                    calls.append(call)
                elif block is not None:
                    texts.append(_content_text(block if isinstance(block, str) else [block]))
            stop = message.get("stop_reason") or stop
            usage = _usage(message.get("usage")) or usage
            api_error = api_error or data.get("isApiErrorMessage") is True
        reason = STOP_REASONS.get(stop if isinstance(stop, str) else None)
        reason = reason or ("tool_use" if calls else "stop")
        return AssistantMessage(
            content="\n\n".join(t for t in texts if t),
            tool_calls=calls,
            stop_reason="error" if api_error else reason,
            usage=usage,
        )

    def _user(self, tree: Tree, node: Node, parent: str | None, at) -> str:
        line_no, data = node.lines[0]
        message = data.get("message") if isinstance(data.get("message"), dict) else {}
        content = message.get("content")
        pieces: list[Any] = []  # user messages and tool results, in the content's order
        if isinstance(content, list):
            texts: list[Any] = []
            extra = data.get("toolUseResult")
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    if texts:
                        pieces.append(UserMessage(content=_content_text(texts)))
                        texts = []
                    raw_id = block.get("tool_use_id")
                    details = {} if extra is None else {"tool_use_result": clean(extra)}
                    extra = None  # the line's one structured result: with its first block
                    pieces.append(
                        ToolResultMessage(
                            tool_call_id=call_id(raw_id),
                            tool_name=self.tool_names.get(as_text(raw_id), "unknown"),
                            content=_content_text(block.get("content")),
                            is_error=block.get("is_error") is True,
                            details=details,
                        )
                    )
                else:
                    texts.append(block)
            if texts or not pieces:
                pieces.append(UserMessage(content=_content_text(texts)))
        else:
            pieces.append(UserMessage(content=_content_text(content)))
        entry = parent
        for n, piece in enumerate(pieces, 1):
            ident = node.uuid if n == 1 else f"{node.uuid}.{n}"
            if ident in tree:
                raise FileRefused(line_no, f"the id {ident!r} of this line's part {n} is taken")
            tree.add(line_no, MessageEntry, id=ident, parent_id=entry, timestamp=at, message=piece)
            entry = ident
        return entry

    def first_words(self) -> str | None:
        """The first thing the person typed (not a command's or a hook's text)."""
        for node in self.nodes:
            if node.kind != "user":
                continue
            data = node.lines[0][1]
            message = data.get("message")
            content = message.get("content") if isinstance(message, dict) else None
            if isinstance(content, str) and not data.get("isMeta"):
                text = content.strip()
                if text and not text.startswith(("<", "Caveat:")):
                    return text
        return None


def claude_code_session_read(lines: Iterable[str | bytes]) -> SessionFile:
    """The Claude Code session in ``lines``; ``FileRefused`` naming the line of the first
    problem."""
    transcript = Transcript()
    numbered = list(numbered_lines(lines))
    if not numbered:
        raise FileRefused(1, "the file is empty")
    transcript.read(numbered)
    if not transcript.nodes:
        raise FileRefused(
            numbered[0][0],
            "no message line (only summaries or bookkeeping): the conversation is in another file",
        )
    first_no, first = transcript.nodes[0].lines[0]
    created_at = parse_time(first_no, first.get("timestamp"), None)
    tree = Tree(created_at)
    roots = [node for node in transcript.nodes if node.parent is None]
    top = None
    if len(roots) > 1:
        top = "claude-code-root"
        while top in transcript.by_uuid:
            top += "_"
        tree.add(
            first_no,
            AppStateEntry,
            id=top,
            parent_id=None,
            timestamp=created_at,
            value=INITIAL_STATE,
        )
    transcript.build(tree, top)
    known = set(transcript.by_uuid)
    titles = [summary for leaf, summary in transcript.summaries if leaf in known]
    session_id = str(first.get("sessionId") or "claude-code")
    return session_file(
        tree=tree,
        source_id=session_id,
        title=title_of(
            *reversed(titles),
            transcript.first_words(),
            fallback=f"Claude Code session {session_id}",
        ),
        source="claude_code",
    )
