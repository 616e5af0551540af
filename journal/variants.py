"""Variants: several drawings of one panel, of which the reader sees the one chosen.

A variant set is drawn by one assistant reply: its ``generate_image`` calls that carry a
``variants`` count (2 to 4) and the same ``prompt``, in call order. Each is its own tool
call, so each has its own T1, T2, idempotency key, seed and charge, and recovery treats
each alone. One approval covers the set: the set's first call asks for the whole set's
cost, and the others follow its decision (``approval_call_id``).

Which variant a reader sees is session state: the app state's ``variants`` maps a set's
id (the result entry id of its first call, fixed before anything is drawn) to the result
entry id of the variant chosen. With no choice, or a choice that is not a drawn member of
the set, the first variant drawn is shown. Everything here is pure: a path in, the sets
and the panels to show out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from journal.entries import AssistantMessage, Entry, MessageEntry, ToolCall, ToolResultMessage
from journal.ids import result_entry_id

VARIANTS_MIN = 2
VARIANTS_MAX = 4
DRAW_TOOL = "generate_image"


@dataclass(frozen=True, slots=True)
class VariantSet:
    """The calls of one reply that draw variants of one panel, and the members drawn.

    ``id``: the result entry id of the set's first call. ``calls``: the tool call ids in
    call order. ``members``: the result entry ids of the calls that drew a picture, in
    call order (filled in from a path; empty when only the reply is known)."""

    id: str
    reply_id: str
    calls: tuple[str, ...]
    members: tuple[str, ...] = ()

    @property
    def size(self) -> int:
        return len(self.calls)


def variant_count(arguments: Mapping[str, Any]) -> int | None:
    """The ``variants`` count a draw call carries, when it is a whole number in range."""
    value = arguments.get("variants")
    if type(value) is int and VARIANTS_MIN <= value <= VARIANTS_MAX:
        return value
    return None


def sets_of_reply(reply_id: str, message: AssistantMessage) -> list[VariantSet]:
    """The variant sets one reply draws, in the order of their first call."""
    groups: dict[str, list[ToolCall]] = {}
    for call in message.tool_calls:
        if call.name != DRAW_TOOL or variant_count(call.arguments) is None:
            continue
        prompt = call.arguments.get("prompt")
        groups.setdefault(prompt if isinstance(prompt, str) else "", []).append(call)
    return [
        VariantSet(result_entry_id(reply_id, calls[0].id), reply_id, tuple(c.id for c in calls))
        for calls in groups.values()
    ]


def set_of_call(reply_id: str, message: AssistantMessage, call_id: str) -> VariantSet | None:
    """The variant set the call ``call_id`` of the reply belongs to, if any."""
    for variant_set in sets_of_reply(reply_id, message):
        if call_id in variant_set.calls:
            return variant_set
    return None


def approval_call_id(reply_id: str, message: AssistantMessage, call_id: str) -> str:
    """The call whose approval decides ``call_id``: its set's first call, else itself."""
    variant_set = set_of_call(reply_id, message, call_id)
    return variant_set.calls[0] if variant_set is not None else call_id


def approval_size(reply_id: str, message: AssistantMessage, call_id: str) -> int:
    """How many calls one approval asked at ``call_id`` covers: its set's size when it
    opens a set, else 1."""
    variant_set = set_of_call(reply_id, message, call_id)
    if variant_set is None or variant_set.calls[0] != call_id:
        return 1
    return variant_set.size


def sets_on(path: Iterable[Entry]) -> list[VariantSet]:
    """The variant sets drawn on a path, each with its members that drew a picture."""
    found: list[VariantSet] = []
    by_result: dict[str, tuple[int, str]] = {}  # result id of a set's call → (set, call)
    members: list[list[str]] = []
    for entry in path:
        if not isinstance(entry, MessageEntry):
            continue
        message = entry.message
        if isinstance(message, AssistantMessage):
            for variant_set in sets_of_reply(entry.id, message):
                for call_id in variant_set.calls:
                    by_result[result_entry_id(entry.id, call_id)] = (len(found), call_id)
                found.append(variant_set)
                members.append([])
        elif (
            isinstance(message, ToolResultMessage)
            and entry.id in by_result
            and not message.is_error
            and isinstance(message.details.get("image_id"), str)
        ):
            members[by_result[entry.id][0]].append(entry.id)
    return [
        VariantSet(s.id, s.reply_id, s.calls, tuple(m)) for s, m in zip(found, members, strict=True)
    ]


def chosen_member(variant_set: VariantSet, choices: Mapping[str, Any]) -> str | None:
    """The member a reader sees: the one chosen, else the first drawn (None: none drawn)."""
    choice = choices.get(variant_set.id)
    if isinstance(choice, str) and choice in variant_set.members:
        return choice
    return variant_set.members[0] if variant_set.members else None


def hidden_members(sets: Sequence[VariantSet], choices: Mapping[str, Any]) -> frozenset[str]:
    """The result entry ids of the variants a reader does not see."""
    hidden: set[str] = set()
    for variant_set in sets:
        shown = chosen_member(variant_set, choices)
        hidden.update(m for m in variant_set.members if m != shown)
    return frozenset(hidden)


def choices_of(app_state: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """The ``variants`` choices of an app state as the journal holds it (read leniently:
    a malformed value chooses nothing)."""
    value = (app_state or {}).get("variants")
    return value if isinstance(value, dict) else {}


def with_choice(app_state: Mapping[str, Any], set_id: str, member_id: str) -> dict[str, Any]:
    """The whole app state after choosing ``member_id`` in the set ``set_id``."""
    choices = {**choices_of(app_state), set_id: member_id}
    return {**app_state, "variants": choices}
