"""The comic's editable layer: each panel's lettering and the page layout, as app state.

A panel's words (its caption and speech bubbles) and the way its branch reads as pages (a
layout and, optionally, the panels' order) are the studio's layer over the pictures, not
part of them. The words a panel starts with come from its script; an edit is kept in the
session's app state (``lettering`` and ``page``), so it costs nothing, renders nothing and
rolls back with a rewind. Everything here is pure: the state in, the panels' words and
order out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    model_validator,
)

from journal.appstate import describe
from journal.jsonvalues import check_text

CAPTION_MAX = 300  # characters of a caption
SPEECH_MAX = 200  # characters of one bubble's words
NAME_MAX = 40  # characters of a speaker's name
BUBBLES_MAX = 4  # bubbles on one panel
ORDER_MAX = 2000  # panels an order may name
LAYOUT_NAMES = ("2x2", "3-tier", "strip", "splash")
DEFAULT_LAYOUT = "2x2"


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty")
    return value


def _trimmed(value: str) -> str:
    return " ".join(value.split())


# What a person types: no NUL, no lone surrogate, not empty, one line, at most ``n`` long.
def _words(n: int) -> Any:
    return Annotated[
        str,
        StringConstraints(max_length=n),
        AfterValidator(check_text),
        AfterValidator(_not_blank),
        AfterValidator(_trimmed),
    ]


Caption = _words(CAPTION_MAX)
Said = _words(SPEECH_MAX)
Speaker = Annotated[
    str,
    StringConstraints(max_length=NAME_MAX),
    AfterValidator(check_text),
    AfterValidator(_trimmed),
]
Place = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]
EntryId = Annotated[str, StringConstraints(min_length=1, max_length=64, pattern=r"^[\w.:-]+$")]


class Bubble(BaseModel):
    """One speech bubble: who speaks, the words, and where it sits on the picture (the
    bubble's centre across and its top down, each a fraction of the picture; None: the
    layer places it)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    character: Speaker = ""
    text: Said
    x: Place | None = None
    y: Place | None = None


class PanelLettering(BaseModel):
    """A panel's words as edited: its caption (empty: none) and its bubbles in order."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    caption: Annotated[str, StringConstraints(max_length=CAPTION_MAX)] = ""
    speech: tuple[Bubble, ...] = Field(default=(), max_length=BUBBLES_MAX)


class LetteringEdit(BaseModel):
    """What an edit changes: the caption, the bubbles (all of them, in order), or both."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    caption: Caption | None = None
    speech: tuple[Bubble, ...] | None = Field(default=None, max_length=BUBBLES_MAX)

    def applied_to(self, current: PanelLettering) -> PanelLettering:
        """``current`` with this edit's parts replaced; ``ValueError`` when it changes nothing."""
        if self.caption is None and self.speech is None:
            raise ValueError("say what to change: caption, speech or both")
        return PanelLettering(
            caption=current.caption if self.caption is None else self.caption,
            speech=current.speech if self.speech is None else self.speech,
        )


class PageChoice(BaseModel):
    """How a branch reads as pages: a layout and, when rearranged, the panels' order (their
    entry ids; panels it does not name follow in the branch's order)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    layout: str = DEFAULT_LAYOUT
    order: tuple[EntryId, ...] = Field(default=(), max_length=ORDER_MAX)

    @model_validator(mode="after")
    def _known_layout_each_panel_once(self) -> PageChoice:
        if self.layout not in LAYOUT_NAMES:
            raise ValueError(f"layout must be one of {', '.join(LAYOUT_NAMES)}")
        if len(set(self.order)) != len(self.order):
            raise ValueError("order names a panel twice")
        return self


class UnreadableLettering(ValueError):
    """An edit or a state this model cannot read; the message names the field."""


M = TypeVar("M", bound=BaseModel)


def read(model: type[M], value: Any) -> M:
    """``value`` as ``model``; ``UnreadableLettering`` naming what does not fit."""
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        raise UnreadableLettering(describe(exc)) from None


def lettering_in(state: Mapping[str, Any] | None) -> dict[str, PanelLettering]:
    """The edited panels' lettering in an app state, by panel entry id. A panel whose kept
    value cannot be read (written by hand) is left out: it shows its script's words."""
    kept = (state or {}).get("lettering")
    if not isinstance(kept, dict):
        return {}
    out = {}
    for entry_id, value in kept.items():
        try:
            out[str(entry_id)] = PanelLettering.model_validate(value)
        except ValidationError:
            continue
    return out


def page_choice(state: Mapping[str, Any] | None) -> PageChoice:
    """The page layout and order an app state chose; the default when it chose none (or
    when what it holds cannot be read)."""
    kept = (state or {}).get("page")
    if not isinstance(kept, dict):
        return PageChoice()
    try:
        return PageChoice.model_validate(kept)
    except (ValidationError, ValueError):
        return PageChoice()


def with_lettering(state: Mapping[str, Any], entry_id: str, lettering: PanelLettering) -> dict:
    """The state with ``entry_id``'s lettering set (a new dict; ``state`` is not changed)."""
    kept = state.get("lettering")
    letterings = dict(kept) if isinstance(kept, dict) else {}
    letterings[entry_id] = lettering.model_dump(mode="json", exclude_none=True)
    return {**state, "lettering": letterings}


def with_page(state: Mapping[str, Any], choice: PageChoice) -> dict:
    """The state with the page layout and order set (a new dict)."""
    return {**state, "page": choice.model_dump(mode="json")}


def edit_kind(before: Mapping[str, Any] | None, after: Mapping[str, Any]) -> str:
    """What an ``app_state`` entry changed, for its label: ``lettering`` (a panel's
    words), ``page`` (the layout or order) or ``characters`` (anything else: the cast,
    the permission mode)."""
    before = before or {}
    rest = {k for k in set(before) | set(after) if k not in ("lettering", "page")}
    if any(before.get(k) != after.get(k) for k in rest):
        return "characters"
    if before.get("lettering") != after.get("lettering"):
        return "lettering"
    if before.get("page") != after.get("page"):
        return "page"
    return "characters"


T = TypeVar("T")


def in_order(items: Sequence[T], order: Sequence[str], key: Any) -> list[T]:
    """``items`` in ``order`` (by ``key(item)``): those it names first, in its order, then
    the rest in theirs. Names of items not here are passed over."""
    by_key = {key(item): item for item in items}
    first = [by_key[k] for k in order if k in by_key]
    named = set(order)
    return first + [item for item in items if key(item) not in named]


def moved(order: Sequence[str], entry_id: str, step: int) -> list[str]:
    """``order`` with ``entry_id`` moved ``step`` places (-1: one earlier, 1: one later),
    never past either end; ``ValueError`` when ``order`` does not hold it."""
    items = list(order)
    at = items.index(entry_id)
    items.insert(min(max(at + step, 0), len(items) - 1), items.pop(at))
    return items


@dataclass(frozen=True, slots=True)
class ComicChanges:
    """What going from one app state to another puts back of the comic's layer: how many
    panels' words (caption or bubbles) change, the layout the pages go to (None: the
    same), and whether the panels' order changes."""

    panels: int = 0
    layout: str | None = None
    order: bool = False

    def __bool__(self) -> bool:
        return bool(self.panels or self.layout or self.order)


def comic_changes(
    before: Mapping[str, Any] | None,
    after: Mapping[str, Any] | None,
    path_ids: Sequence[str],
    panel_ids: Callable[[], Sequence[str]],
) -> ComicChanges:
    """What of the comic's layer differs from ``before`` to ``after`` on a path
    (``path_ids``: its entry ids; a panel off it is not read there, so its words do not
    count). ``panel_ids`` gives the path's panels in order; it is called only when the two
    orders name different panels, to tell whether they read differently."""
    on_path = set(path_ids)
    old, new = lettering_in(before), lettering_in(after)
    panels = sum(1 for e in (set(old) | set(new)) & on_path if old.get(e) != new.get(e))
    old_page, new_page = page_choice(before), page_choice(after)
    layout = new_page.layout if new_page.layout != old_page.layout else None
    old_order = [e for e in old_page.order if e in on_path]
    new_order = [e for e in new_page.order if e in on_path]
    order = False
    if old_order != new_order:  # they may still read the same: [p1, p2] is no order there
        ids = list(panel_ids())
        order = in_order(ids, old_order, key=str) != in_order(ids, new_order, key=str)
    return ComicChanges(panels, layout, order)
