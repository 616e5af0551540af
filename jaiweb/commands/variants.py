"""Variants as a person handles them: asking for a set with a prompt, choosing one.

Choosing is an ``app_state`` entry at the leaf (the state's ``variants``), so it costs
nothing, renders nothing, and a rewind past it brings the earlier choice back. What the
reader, the strip and the exports show follows the state at the node they show.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.utils import timezone

from jaiweb.commands.sessions import _state_append, _state_now
from jaiweb.store.errors import InvalidField
from jaiweb.store.models import ComicSession
from jaiweb.store.selectors import branch_rows
from jaiweb.store.variants import variant_sets_of
from journal.errors import UnknownEntry
from journal.variants import (
    VARIANTS_MAX,
    VARIANTS_MIN,
    VariantSet,
    choices_of,
    chosen_member,
    with_choice,
)

# What a prompt sent with a variants count says, in the sender's language. The offline
# director reads either (``providers/offline/variants.py``); a model reads it as a request.
ASK = {
    "zh": "画{n}个版本：{text}",
    "en": "Draw {n} variants of this panel: {text}",
}


def variants_count(raw: str | None) -> int | None:
    """A form's variants field: empty or ``1`` is no set, ``2`` to ``4`` a set
    (``InvalidField`` for anything else)."""
    if raw in (None, "", "1"):
        return None
    if not (raw.isascii() and raw.isdigit()) or len(raw) > 1:
        raise InvalidField("variants", f"a panel has {VARIANTS_MIN} to {VARIANTS_MAX} variants")
    return int(raw)


def variants_prompt(*, text: str, count: int | None, language: str | None) -> str:
    """The prompt as it goes into the journal: ``text`` itself, or, with a count of 2 to
    4, the request to draw that many variants of it (``InvalidField`` for another count)."""
    if count is None:
        return text
    if type(count) is not int or not VARIANTS_MIN <= count <= VARIANTS_MAX:
        raise InvalidField(
            "variants", f"a panel has {VARIANTS_MIN} to {VARIANTS_MAX} variants, not {count!r}"
        )
    lang = "zh" if (language or "").lower().startswith("zh") else "en"
    return ASK[lang].format(n=count, text=text)


def variant_set_at(*, session: ComicSession, entry_id: str) -> VariantSet:
    """The variant set on the session's active branch that ``entry_id`` names: the set's
    id or one of its drawn members. ``UnknownEntry`` when it names none."""
    for variant_set in variant_sets_of(branch_rows(session=session)):
        if entry_id == variant_set.id or entry_id in variant_set.members:
            return variant_set
    raise UnknownEntry(entry_id)


def variant_choose(
    *,
    session: ComicSession,
    entry_id: str,
    variant: int,
    expected_leaf_id: str | None,
    now: datetime | None = None,
) -> dict[str, Any]:
    """Show the ``variant``-th drawn variant (from 1) of the set ``entry_id`` names.

    The choice is written as the leaf's state, an ``app_state`` entry; nothing is drawn or
    charged. Choosing the variant shown already writes nothing. Raise ``UnknownEntry`` (404)
    when the active branch has no such set, and ``InvalidField`` (422) for a variant not drawn.
    The state edits' refusals apply too: 409 unless the session is idle and at
    ``expected_leaf_id``."""
    state = _state_now(session, expected_leaf_id)  # idle, at the leaf the caller saw
    variant_set = variant_set_at(session=session, entry_id=entry_id)
    if type(variant) is not int or not 1 <= variant <= len(variant_set.members):
        raise InvalidField(
            "variant",
            f"this panel has {len(variant_set.members)} variants drawn; choose 1 to "
            f"{len(variant_set.members)}, not {variant!r}",
        )
    value = state.as_json()
    member = variant_set.members[variant - 1]
    if chosen_member(variant_set, choices_of(value)) == member:
        return value
    value = with_choice(value, variant_set.id, member)
    return _state_append(session, value, expected_leaf_id, now or timezone.now())
