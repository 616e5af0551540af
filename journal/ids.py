"""Deterministic ids and hashes: the same inputs give the same id after any crash.

See docs/ARCHITECTURE.md §6.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any


def _h(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def result_entry_id(assistant_entry_id: str, tool_call_id: str) -> str:
    """The id the tool result (T2) of a call will have, fixed before the tool runs (T1)."""
    return "r_" + _h(assistant_entry_id + "\x00" + tool_call_id)[:24]


def idempotency_key(operation_id: str, tool_call_id: str) -> str:
    """The key a tool passes to the outside world; the same for every dispatch of one call."""
    return "k_" + _h(operation_id + "\x00" + tool_call_id)[:32]


def render_seed(idempotency_key: str) -> int:
    """Return the seed a render under this key draws with.

    The seed is the key's hash, its first eight hex digits read as an unsigned 32-bit int. A
    repeat under the same key therefore asks for the same picture, as the render ledger's same
    key with the same parameters does. A new key, as a regenerate makes, asks for a new one."""
    return int(_h(idempotency_key)[:8], 16)


def canonical_json(value: Any) -> str:
    """Sorted keys, UTF-8 text, no spaces: the form hashes and exports are computed on."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def args_hash(args: Any) -> str:
    """The hash of a tool call's arguments, as recorded in T1."""
    return _h(canonical_json(args))
