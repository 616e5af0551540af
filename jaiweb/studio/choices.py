"""Whether a state turn of the storyboard only chose variants (``journal/variants.py``), so
its node says "variant chosen" rather than "characters changed"."""

from __future__ import annotations

from collections.abc import Sequence

from journal.entries import AppStateEntry, Entry


def _without_choices(value: dict) -> dict:
    return {k: v for k, v in value.items() if k != "variants"}


def only_chooses(entries: Sequence[Entry], start: int, stop: int) -> bool:
    """The app states of ``entries[start:stop]`` (a turn on a drawn line) each differ from
    the state before them in their ``variants``, and in nothing else. False when the state
    before the turn is not on the line (the node then says what any state edit says)."""
    before = next(
        (e.value for e in reversed(entries[:start]) if isinstance(e, AppStateEntry)), None
    )
    states = [e.value for e in entries[start:stop] if isinstance(e, AppStateEntry)]
    if before is None or not states:
        return False
    for state in states:
        if _without_choices(state) != _without_choices(before):
            return False
        if state.get("variants") == before.get("variants"):
            return False  # not a choice either
        before = state
    return True
