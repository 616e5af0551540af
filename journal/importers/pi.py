"""A pi session file (pi-mono's coding agent, JSONL version 3; version 2 reads the same)
as a jaiweb session tree. What maps, maps; the rest is kept as text or as data.

pi's file: a ``session`` header, then entries ``{type, id, parentId, timestamp, …}`` that
form a tree through ``parentId`` (the leaf is the last one). Entry by entry:

* ``message`` — by its ``role``: ``user`` → a user message; ``assistant`` → an assistant
  message (text blocks joined, ``thinking`` blocks kept as ``[thinking]`` text,
  ``toolCall`` blocks → tool calls, ``stopReason`` and ``usage`` mapped); ``toolResult``
  → a tool result; ``bashExecution``, ``custom`` (``hookMessage`` in version 2),
  ``branchSummary``, ``compactionSummary`` and any other role → a user message whose text
  says what it was (pi puts these in the model's context as user text too);
* ``compaction`` → a compaction (``tokens_after`` is not in pi's file: 0);
* ``branch_summary`` and ``custom_message`` → a user message with their text;
* ``label`` → a jaiweb label on its target (the latest one per target; an empty one
  clears it), and like every other entry kind (``model_change``,
  ``thinking_level_change``, ``session_info``, ``custom``, kinds pi adds later) an
  ``app_state`` entry: the state at its parent with the entry's fields under
  ``state["pi"][kind]`` (``custom``: under ``state["pi"]["custom"][customType]``), so the
  settings pi keeps on the path roll back with a rewind here too.

Every pi entry keeps its id and its place in the tree. A file with several roots (pi's
``resetLeaf``) gets one more node above them, an ``app_state`` entry ``pi-root``. Text
jaiweb cannot keep (U+0000, lone surrogates) becomes U+FFFD; images in messages are kept
as a note of their type and size, not as panels.
"""

from __future__ import annotations

from collections.abc import Iterable
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
    tool_name,
)
from journal.session_file import (
    LABEL_TEXT_MAX,
    FileRefused,
    LabelLine,
    SessionFile,
    json_object,
    numbered_lines,
)

VERSIONS = (2, 3)
STOP_REASONS = {
    "stop": "stop",
    "length": "length",
    "toolUse": "tool_use",
    "error": "error",
    "aborted": "aborted",
}
_STRUCTURE = ("type", "id", "parentId", "timestamp")


def is_pi_header(data: dict[str, Any]) -> bool:
    return data.get("type") == "session" and "uuid" not in data and "sessionId" not in data


def _blocks_text(content: Any) -> str:
    """Message content (a string, or text / image / thinking / toolCall blocks) as text."""
    if isinstance(content, str):
        return clean_text(content)
    if not isinstance(content, list):
        return "" if content is None else as_text(content)
    parts = []
    for block in content:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            parts.append(as_text(block.get("text", "")))
        elif kind == "thinking":
            parts.append("[thinking]\n" + as_text(block.get("thinking", "")))
        elif kind == "image":
            data = block.get("data")
            size = len(data) * 3 // 4 if isinstance(data, str) else 0
            parts.append(f"[image {as_text(block.get('mimeType', '?'))}, about {size} bytes]")
        else:
            parts.append(as_text(block))
    return "\n\n".join(part for part in parts if part)


def _assistant(line_no: int, message: dict[str, Any]) -> AssistantMessage:
    content = message.get("content")
    texts, calls = [], []
    for block in content if isinstance(content, list) else [content]:
        if isinstance(block, dict) and block.get("type") == "toolCall":
            calls.append(
                tool_call(line_no, block.get("id"), block.get("name"), block.get("arguments"))
            )
        elif block is not None:
            texts.append(_blocks_text([block] if isinstance(block, dict) else block))
    if message.get("errorMessage"):
        texts.append("[error] " + as_text(message["errorMessage"]))
    raw_stop = message.get("stopReason")
    stop = STOP_REASONS.get(raw_stop if isinstance(raw_stop, str) else None)
    stop = stop or ("tool_use" if calls else "stop")
    return AssistantMessage(
        content="\n\n".join(t for t in texts if t),
        tool_calls=calls,
        stop_reason=stop,
        usage=_usage(message.get("usage")),
    )


def _usage(raw: Any) -> Usage | None:
    if not isinstance(raw, dict):
        return None
    tokens = raw.get("input"), raw.get("output")
    if all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in tokens):
        return Usage(input_tokens=tokens[0], output_tokens=tokens[1])
    return None


def _tool_result(message: dict[str, Any]) -> ToolResultMessage:
    details = message.get("details")
    if details is None:
        details = {}
    elif not isinstance(details, dict):
        details = {"value": details}
    return ToolResultMessage(
        tool_call_id=call_id(message.get("toolCallId")),
        tool_name=tool_name(message.get("toolName")),
        content=_blocks_text(message.get("content")),
        is_error=message.get("isError") is True,
        details=clean(details),
    )


def _as_user_text(role: str, message: dict[str, Any]) -> str:
    """The text of a message pi gives the model as user text (its kind said first)."""
    if role == "bashExecution":
        out = (
            f"[bash] $ {as_text(message.get('command', ''))}\n{as_text(message.get('output', ''))}"
        )
        if message.get("exitCode") is not None:
            out += f"\n[exit {as_text(message.get('exitCode'))}]"
        for flag in ("cancelled", "truncated"):
            if message.get(flag) is True:
                out += f"\n[{flag}]"
        return out
    if role in ("custom", "hookMessage"):
        return f"[{as_text(message.get('customType', role))}] " + _blocks_text(
            message.get("content")
        )
    if role in ("branchSummary", "compactionSummary"):
        return f"[{role}] " + as_text(message.get("summary", ""))
    rest = {k: v for k, v in message.items() if k not in ("role", "timestamp")}
    return f"[{as_text(role)}] " + as_text(rest)


def _message(line_no: int, raw: Any) -> Any:
    if not isinstance(raw, dict):
        raise FileRefused(line_no, "a message entry without a message object")
    role = raw.get("role")
    if role == "user":
        return UserMessage(content=_blocks_text(raw.get("content")))
    if role == "assistant":
        return _assistant(line_no, raw)
    if role == "toolResult":
        return _tool_result(raw)
    return UserMessage(content=_as_user_text(role if isinstance(role, str) else "?", raw))


def pi_session_read(lines: Iterable[str | bytes]) -> SessionFile:
    """The pi session in ``lines``; ``FileRefused`` naming the line of the first problem."""
    numbered = numbered_lines(lines)
    first = next(numbered, None)
    if first is None:
        raise FileRefused(1, "the file is empty: no header")
    header_no, header_text = first
    header = json_object(header_no, header_text)
    if not is_pi_header(header):
        raise FileRefused(header_no, "not a pi session header (type 'session')")
    version = header.get("version", 1)
    if version == 1:
        raise FileRefused(
            header_no,
            "a pi session of version 1 (entries without ids): open it once in pi, "
            "which writes it as version 3",
        )
    if version not in VERSIONS:
        raise FileRefused(header_no, f"unsupported pi session version {version!r}")
    created_at = parse_time(header_no, header.get("timestamp"), None)

    rows: list[tuple[int, str, dict[str, Any]]] = []
    seen: dict[str, str] = {}
    for line_no, text in numbered:
        data = json_object(line_no, text)
        kind = data.get("type")
        if not isinstance(kind, str):
            raise FileRefused(line_no, "an entry without a type")
        if kind == "session":
            raise FileRefused(line_no, "a second session header")
        eid = entry_id(line_no, data.get("id"), "an entry")
        if eid in seen:
            if seen[eid] == text:  # the very same line twice: one entry
                continue
            raise FileRefused(line_no, f"entry id {eid!r} twice")
        seen[eid] = text
        rows.append((line_no, eid, data))

    tree = Tree(created_at)
    roots = [eid for _, eid, data in rows if data.get("parentId") is None]
    top = None
    if len(roots) > 1:
        top = "pi-root"
        while top in seen:
            top += "_"
        tree.add(
            header_no,
            AppStateEntry,
            id=top,
            parent_id=None,
            timestamp=created_at,
            value=INITIAL_STATE,
        )
    names: list[str] = []
    first_user: str | None = None
    labels: dict[str, LabelLine | None] = {}
    last_time = created_at
    for line_no, eid, data in rows:
        kind = data["type"]
        parent = data.get("parentId")
        if parent is None:
            parent = top
        elif not isinstance(parent, str):
            raise FileRefused(line_no, f"parentId {parent!r} is not an id")
        else:
            parent = clean_text(parent)
            if parent not in tree:
                raise FileRefused(line_no, f"parent {parent!r} is not earlier in the file")
        last_time = parse_time(line_no, data.get("timestamp"), last_time)
        at = {"id": eid, "parent_id": parent, "timestamp": last_time}
        if kind == "message":
            with refused_at(line_no, "a message"):
                message = _message(line_no, data.get("message"))
            if first_user is None and isinstance(message, UserMessage):
                first_user = message.content
            tree.add(line_no, MessageEntry, **at, message=message)
        elif kind == "compaction":
            before = data.get("tokensBefore")
            summary = as_text(data.get("summary", ""))
            if data.get("details") is not None:
                summary += "\n\n[details] " + as_text(data["details"])
            first_kept = data.get("firstKeptEntryId")
            tree.add(
                line_no,
                CompactionEntry,
                **at,
                summary=summary,
                first_kept_entry_id=clean_text(first_kept) if isinstance(first_kept, str) else eid,
                tokens_before=before if isinstance(before, int) and before >= 0 else 0,
                tokens_after=0,
            )
        elif kind in ("branch_summary", "custom_message"):
            if kind == "branch_summary":
                text = f"[branch summary, from {as_text(data.get('fromId', '?'))}] " + as_text(
                    data.get("summary", "")
                )
            else:
                text = f"[{as_text(data.get('customType', kind))}] " + _blocks_text(
                    data.get("content")
                )
            tree.add(line_no, MessageEntry, **at, message=UserMessage(content=text))
        else:
            if kind == "label":
                labels.update(_label(line_no, data, tree, last_time))
            elif kind == "session_info" and isinstance(data.get("name"), str):
                names.append(data["name"])
            tree.add(line_no, AppStateEntry, **at, value=_state_with(tree, parent, kind, data))

    return session_file(
        tree=tree,
        source_id=str(header.get("id") or "pi"),
        title=title_of(*reversed(names), first_user, fallback=f"pi session {header.get('id', '')}"),
        labels=[label for label in labels.values() if label is not None],
        source="pi",
    )


def _state_with(tree: Tree, parent: str | None, kind: str, data: dict[str, Any]) -> dict:
    """The state at ``parent`` with this entry's fields kept under ``state["pi"]``."""
    state = tree.state_at(parent)
    kept = dict(state.get("pi") or {}) if isinstance(state.get("pi"), dict) else {}
    fields = clean({k: v for k, v in data.items() if k not in _STRUCTURE})
    if kind == "custom":
        custom = dict(kept.get("custom") or {})
        custom[as_text(data.get("customType", ""))] = fields.get("data")
        kept["custom"] = custom
    else:
        kept[clean_text(kind)] = fields
    return {**state, "pi": kept}


def _label(line_no: int, data: dict[str, Any], tree: Tree, at) -> dict[str, LabelLine | None]:
    target = data.get("targetId")
    if not isinstance(target, str) or clean_text(target) not in tree:
        raise FileRefused(line_no, f"a label on {target!r}, which is not earlier in the file")
    text = data.get("label")
    if text is not None and not isinstance(text, str):
        raise FileRefused(line_no, "a label whose label is not text")
    text = " ".join(clean_text(text).split())[:LABEL_TEXT_MAX].strip() if text else ""
    if not text:
        return {clean_text(target): None}
    return {
        clean_text(target): LabelLine(
            entry_id=clean_text(target), kind="label", text=text, created_at=at
        )
    }
